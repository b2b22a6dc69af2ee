// Stop requests: written whole by `runner stop`, taken once by the watching
// runner, and stale ones dropped when a runner starts.
#include "runner/state/stop_requests.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>

#include "support/descriptors_used_up.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

// The watcher of `state_dir`'s requests; a failure to make it is thrown,
// which fails the test.
std::unique_ptr<StopRequestWatcher> opened(const std::string& state_dir,
                                           std::function<void(const std::string&)> on_stop) {
  Result<std::unique_ptr<StopRequestWatcher>> watcher =
      StopRequestWatcher::open(state_dir, std::move(on_stop));
  if (!watcher) throw std::runtime_error(watcher.status().message());
  return std::move(*watcher);
}

// Waits (at most a second) for the watcher's descriptor, then steps it.
void step_when_ready(StopRequestWatcher& watcher) {
  std::vector<pollfd> fds;
  watcher.poll_fds(fds);
  ASSERT_EQ(fds.size(), 1u);
  ::poll(fds.data(), fds.size(), 1000);
  watcher.step(Clock::now());
}

TEST(StopRequests, ARequestIsTakenOnceAndRemoved) {
  testing::TempDir temp;
  std::vector<std::string> asked;
  std::unique_ptr<StopRequestWatcher> watcher =
      opened(temp.path(), [&](const std::string& name) { asked.push_back(name); });
  ASSERT_TRUE(request_stop(temp.path(), "dht").ok());
  step_when_ready(*watcher);
  EXPECT_EQ(asked, (std::vector<std::string>{"dht"}));
  EXPECT_TRUE(std::filesystem::is_empty(requests_dir(temp.path())));
  watcher->step(Clock::now());
  EXPECT_EQ(asked.size(), 1u);
}

TEST(StopRequests, StaleRequestsAreDroppedWhenARunnerStarts) {
  testing::TempDir temp;
  ASSERT_TRUE(request_stop(temp.path(), "dht").ok());
  std::vector<std::string> asked;
  std::unique_ptr<StopRequestWatcher> watcher =
      opened(temp.path(), [&](const std::string& name) { asked.push_back(name); });
  EXPECT_TRUE(std::filesystem::is_empty(requests_dir(temp.path())));
  watcher->step(Clock::now());
  EXPECT_TRUE(asked.empty());
}

TEST(StopRequests, AFolderThatCannotBeMadeIsSaid) {
  testing::TempDir temp;
  std::string file = temp.write("plain", "not a folder");
  Status status = request_stop(file, "dht");
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find(file + "/requests"), std::string::npos) << status.message();
}

TEST(StopRequests, AWatcherThatCannotBeMadeSaysWhyAndHowToFixIt) {
  testing::TempDir temp;
  Result<std::unique_ptr<StopRequestWatcher>> watcher = Status::error("not tried");
  {
    testing::DescriptorsUsedUp used_up;
    ASSERT_TRUE(used_up.ok());
    watcher = StopRequestWatcher::open(temp.path(), [](const std::string&) {});
  }
  ASSERT_FALSE(watcher.ok());
  const std::string& message = watcher.status().message();
  EXPECT_NE(message.find("cannot watch " + requests_dir(temp.path()) +
                         " for `runner stop` requests: inotify_init1: Too many open files"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("fs.inotify.max_user_instances"), std::string::npos) << message;
}

}  // namespace
}  // namespace runner
