// SignalWatcher: a signal sent to the process arrives as an event, and a
// watcher that cannot be made says why and leaves the signals unblocked.
#include "runner/exec/signal_watcher.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>

#include <memory>
#include <string>
#include <vector>

#include "support/descriptors_used_up.h"

namespace runner {
namespace {

bool blocked(int signal) {
  sigset_t now;
  sigprocmask(SIG_BLOCK, nullptr, &now);
  return sigismember(&now, signal) == 1;
}

TEST(SignalWatcherTest, ASignalArrivesAsAnEvent) {
  std::vector<int> seen;
  Result<std::unique_ptr<SignalWatcher>> watcher =
      SignalWatcher::open([&](int signal) { seen.push_back(signal); });
  ASSERT_TRUE(watcher.ok()) << watcher.status().message();
  EXPECT_TRUE(blocked(SIGHUP));
  ASSERT_EQ(raise(SIGHUP), 0);
  std::vector<pollfd> fds;
  (*watcher)->poll_fds(fds);
  ASSERT_EQ(poll(fds.data(), fds.size(), 1000), 1);
  (*watcher)->step(Clock::now());
  EXPECT_EQ(seen, std::vector<int>{SIGHUP});
  watcher = Status::error("gone");
  EXPECT_FALSE(blocked(SIGHUP)) << "the mask is as it was";
}

TEST(SignalWatcherTest, AWatcherThatCannotBeMadeSaysWhyAndLeavesTheSignalsAlone) {
  ASSERT_FALSE(blocked(SIGINT));
  Result<std::unique_ptr<SignalWatcher>> watcher = Status::error("not tried");
  {
    testing::DescriptorsUsedUp used_up;
    ASSERT_TRUE(used_up.ok());
    watcher = SignalWatcher::open([](int) {});
  }
  ASSERT_FALSE(watcher.ok());
  EXPECT_NE(watcher.status().message().find("signalfd: Too many open files"), std::string::npos)
      << watcher.status().message();
  EXPECT_NE(watcher.status().message().find("ulimit -n"), std::string::npos)
      << "names the fix: " << watcher.status().message();
  EXPECT_FALSE(blocked(SIGINT));
}

}  // namespace
}  // namespace runner
