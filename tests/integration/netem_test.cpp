// Jobs over a slow, lossy network: the whole scenario runs in a child
// process inside a network namespace of its own, whose loopback delays
// every packet by 100 ms and drops 1% of them (tc netem). Needs root; skips
// where the namespace or netem cannot be had.
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "support/process.h"
#include "support/loopback_fleet.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

constexpr int k_cannot_set_up = 77;

// Runs in the child, inside the namespace; returns its exit status.
int jobs_over_a_bad_link() {
  if (unshare(CLONE_NEWNET) != 0) return k_cannot_set_up;
  if (std::system("ip link set lo up && tc qdisc add dev lo root netem delay 100ms loss 1%") != 0)
    return k_cannot_set_up;
  testing::TempDir dir;
  testing::LoopbackFleet fleet(dir);
  if (!fleet.start(2)) return k_cannot_set_up;
  fleet.write_hosts(2);
  dir.write("queue.yaml",
            "- command: printf 'job %s %s\\n' <<i>> \"$(seq 1 2000 | tr -d '\\n' | wc -c)\"\n"
            "  i: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]\n");
  auto spec = fleet.runner({"queue"});
  spec.timeout = std::chrono::seconds(240);
  testing::ProcessResult r = testing::run_process(spec);
  std::set<std::string> seen;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    auto at = line.find("] job ");
    if (at == std::string::npos) continue;
    std::string job = line.substr(at + 2);
    // Every job's output arrives whole: 2000 numbers are 6893 digits.
    if (job.substr(job.rfind(' ') + 1) != "6893") {
      std::cerr << "truncated output: " << line << "\n";
      return 1;
    }
    seen.insert(job);
  }
  if (r.status != 0 || seen.size() != 16) {
    std::cerr << "status " << r.status << ", " << seen.size() << " jobs seen\n" << r.err;
    return 1;
  }
  return 0;
}

TEST(Netem, EveryJobCompletesOverADelayedLossyLink) {
  if (geteuid() != 0) GTEST_SKIP() << "a network namespace needs root";
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(jobs_over_a_bad_link());
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == k_cannot_set_up)
    GTEST_SKIP() << "no network namespace with tc netem here";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace runner
