// Jobs over a slow, lossy link: each host is reached through a relay in user
// space that delays every chunk by 100 ms and holds one in 20 of them 300 ms
// longer, as a retransmission after a lost packet would (the kernel here has
// no netem). Every job's output must arrive whole, and the run end well.
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "support/delaying_relay.h"
#include "support/loopback_fleet.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

TEST(SlowLink, EveryJobCompletesOverADelayedLossyLink) {
  testing::TempDir dir;
  testing::LoopbackFleet fleet(dir);
  ASSERT_TRUE(fleet.start(2)) << "no sshd here";
  testing::LinkFaults link{std::chrono::milliseconds(100), 20, std::chrono::milliseconds(300)};
  std::vector<std::unique_ptr<testing::DelayingRelay>> relays;
  std::string hosts, known_hosts = dir.read("known_hosts");
  for (int i = 0; i < 2; ++i) {
    testing::Sshd& host = fleet.host(i);
    relays.push_back(std::make_unique<testing::DelayingRelay>(host.port(), link));
    std::string via = std::to_string(relays.back()->port());
    hosts += "- hostname: " + host.user() + "@127.0.0.1:" + via + "\n  slots: 2\n";
    // The relay's port shows the host's own key.
    std::string line = host.known_hosts_line();
    known_hosts += "[127.0.0.1]:" + via + line.substr(line.find(' ')) + "\n";
  }
  dir.write("hosts.yaml", hosts);
  dir.write("known_hosts", known_hosts);
  dir.write("queue.yaml",
            "- command: printf 'job %s %s\\n' <<i>> \"$(seq 1 2000 | tr -d '\\n' | wc -c)\"\n"
            "  i: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]\n");
  auto spec = fleet.runner({"queue"});
  spec.timeout = std::chrono::seconds(240);
  testing::ProcessResult r = testing::run_process(spec);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  std::set<std::string> seen;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    auto at = line.find("] job ");
    if (at == std::string::npos) continue;
    // Every job's output arrives whole: 2000 numbers are 6893 digits.
    EXPECT_EQ(line.substr(line.rfind(' ') + 1), "6893") << line;
    seen.insert(line.substr(at + 2));
  }
  EXPECT_EQ(seen.size(), 16u) << r.out;
  // The link was what it claims: everything went through the relays, and
  // some of it was held as a lost packet would be.
  long chunks = 0, stalls = 0;
  for (const auto& relay : relays) {
    chunks += relay->chunks();
    stalls += relay->stalls();
  }
  EXPECT_GT(chunks, 100);
  EXPECT_GT(stalls, 0) << chunks << " chunks";
}

}  // namespace
}  // namespace runner
