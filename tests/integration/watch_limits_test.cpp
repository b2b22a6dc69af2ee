// The real binary where inotify cannot be had: run in a user namespace of
// its own whose limit on inotify instances is 0 or 1 (only that namespace
// is touched), the run says which watch failed and how to fix it, exits 2
// before any job starts, and leaves a campaign that the next run simply
// takes up.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/process.h"
#include "support/small_tmpfs.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

using testing::ProcessResult;
using testing::TempDir;

struct WatchLimits : ::testing::Test {
  TempDir dir;
  std::string hosts = dir.write("hosts.yaml", "- localhost\n");
  std::string queue = dir.write("queue.yaml", "- echo hi\n");

  std::vector<std::string> arguments() {
    return {"queue", "-H", hosts, "-Q", queue, "--no-status"};
  }

  // `runner queue` with at most `instances` inotify instances.
  ProcessResult run_with_inotify_instances(int instances) {
    testing::ProcessSpec spec = testing::runner_spec(arguments(), dir.path());
    spec.args.insert(spec.args.begin(),
                     {"unshare", "--user", "--map-root-user", "sh", "-c",
                      "echo " + std::to_string(instances) +
                          " >/proc/sys/user/max_inotify_instances && exec \"$@\"",
                      "sh"});
    return testing::run_process(spec);
  }

  // Whether this machine lets a test make a user namespace and set its limit.
  static bool user_namespaces() {
    return testing::sh_output(
               "unshare --user --map-root-user sh -c "
               "'echo 0 >/proc/sys/user/max_inotify_instances && echo yes' 2>/dev/null") == "yes\n";
  }
};

#define RUNNER_REQUIRE_USER_NAMESPACES()                                              \
  do {                                                                                \
    if (!user_namespaces()) {                                                         \
      if (::runner::testing::setup_required())                                        \
        FAIL() << "cannot make a user namespace with its own inotify limit (CI=true " \
                  "requires it)";                                                     \
      GTEST_SKIP() << "cannot make a user namespace with its own inotify limit";      \
    }                                                                                 \
  } while (false)

TEST_F(WatchLimits, NoInotifyForTheQueueIsSaidAndTheNextRunTakesTheQueueUp) {
  RUNNER_REQUIRE_USER_NAMESPACES();
  ProcessResult r = run_with_inotify_instances(0);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("cannot watch " + dir.path() +
                       " for changes to the queue: inotify_init1: Too many open files"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("fs.inotify.max_user_instances"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("hi\n"), std::string::npos) << "no job ran: " << r.out;
  EXPECT_EQ(dir.read("queue.yaml"), "- echo hi\n");

  r = testing::run_process(testing::runner_spec(arguments(), dir.path()));
  EXPECT_EQ(r.status, 0) << "no --resume needed: " << r.err;
  EXPECT_NE(r.out.find("hi\n"), std::string::npos) << r.out;
  EXPECT_EQ(dir.read("queue.yaml"), "[]\n");
}

TEST_F(WatchLimits, NoInotifyForStopRequestsIsSaid) {
  RUNNER_REQUIRE_USER_NAMESPACES();
  ProcessResult r = run_with_inotify_instances(1);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(
      r.err.find(
          "cannot watch " + dir.path() +
          "/queue.runner/requests for `runner stop` requests: inotify_init1: Too many open files"),
      std::string::npos)
      << r.err;
  EXPECT_EQ(dir.read("queue.yaml"), "- echo hi\n");
}

}  // namespace
}  // namespace runner
