// Jobs appended to the queue with the shell's `>>` while a run drains it:
// the appender takes no lock, and every appended job must run exactly once.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "support/process.h"
#include "support/temp_dir.h"
#include "support/wait.h"

namespace runner {
namespace {

using namespace std::chrono_literals;
using testing::Process;
using testing::ProcessResult;
using testing::TempDir;

constexpr int k_appends = 300;

std::size_t occurrences(const std::string& text, const std::string& needle) {
  std::size_t count = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size()))
    ++count;
  return count;
}

TEST(AppendedQueue, EveryJobAppendedWithShellRedirectionRunsExactlyOnce) {
  TempDir dir;
  dir.write("hosts.yaml", "- hostname: localhost\n  slots: 4\n");
  dir.write("queue.yaml", "");
  Process run(testing::runner_spec({"queue", "--daemon"}, dir.path()));
  // What a user types in another terminal: one `>>` per job, 3 ms apart.
  std::string script = fmt::format(
      "i=1; while [ $i -le {} ]; do echo \"- echo u$i\" >> queue.yaml; sleep 0.003; "
      "i=$((i+1)); done",
      k_appends);
  testing::ProcessSpec appender_spec{{"/bin/sh", "-c", script}, dir.path()};
  ProcessResult appended = testing::run_process(appender_spec);
  ASSERT_EQ(appended.status, 0) << appended.err;

  auto all_ran = [&] {
    std::string out = run.peek_out();
    for (int i = 1; i <= k_appends; ++i)
      if (out.find(fmt::format("] u{}\n", i)) == std::string::npos) return false;
    return true;
  };
  testing::wait_until(all_ran, 20s);
  run.signal(SIGINT);
  ProcessResult r = run.wait();
  EXPECT_EQ(r.status, 130) << r.err;

  std::string missing;
  for (int i = 1; i <= k_appends; ++i) {
    std::size_t runs = occurrences(r.out, fmt::format("] u{}\n", i));
    if (runs != 1) missing += fmt::format(" u{} ran {} times;", i, runs);
  }
  EXPECT_EQ(missing, "") << "queue now:\n" << dir.read("queue.yaml") << "\nstderr:\n" << r.err;
  EXPECT_EQ(dir.read("queue.yaml").find("- echo"), std::string::npos) << dir.read("queue.yaml");
  EXPECT_EQ(occurrences(dir.read("consumed.yaml"), "echo u"), std::size_t{k_appends});
}

}  // namespace
}  // namespace runner
