// What `outputs:` brings back from a remote account over a real sshd, as
// hostile bytes: a link is never followed here, no owner or set-uid bit is
// kept, and every file comes back, is recorded and is cleaned up under its
// exact name, however odd. Each test creates a throwaway user (needs root).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include "runner/state/journal.h"
#include "runner/state/journal_text.h"
#include "support/loopback_fleet.h"
#include "support/process.h"
#include "support/remote_user.h"
#include "support/temp_dir.h"
#include "support/text.h"
#include "support/value_of.h"

namespace runner {
namespace {

namespace fs = std::filesystem;
using testing::ProcessResult;
using testing::RemoteUser;

struct RemoteOutputs : ::testing::Test {
  testing::TempDir dir;
  testing::LoopbackFleet fleet{dir};
  std::unique_ptr<RemoteUser> user;

  // One sshd host reached as a fresh user (login shell bash); skips (fails
  // under CI=true) without sshd or root.
  void start_host() {
    if (!fleet.start(1)) {
      if (testing::sshd_required()) FAIL() << "sshd is missing but CI=true requires it";
      GTEST_SKIP() << "no sshd on this machine";
    }
    user = RemoteUser::create("/bin/bash");
    RUNNER_REQUIRE_REMOTE_USER(user, "/bin/bash");
    user->allow_login(fleet.host(0));
    dir.write("hosts.yaml", "- hostname: " + user->name() +
                                "@127.0.0.1:" + std::to_string(fleet.host(0).port()) + "\n");
  }
  ProcessResult runner(std::vector<std::string> args) {
    return testing::run_process(fleet.runner(std::move(args)));
  }
  // `runner results`, `runner report`: they read the state directory only.
  ProcessResult reader(std::vector<std::string> args) {
    return testing::run_process(testing::runner_spec(std::move(args), dir.path()));
  }
  // The paths of the files the journal's outputs records name.
  std::set<std::string> recorded_paths() {
    std::set<std::string> paths;
    for (auto& record : testing::value_of(read_journal(dir.file("queue.runner/journal.jsonl"))))
      if (record.value("event", "") == "outputs")
        for (auto& file : record["files"]) paths.insert(journal_text(file, "path"));
    return paths;
  }
};

TEST_F(RemoteOutputs, ALinkIsNeverFollowedToAFileOfTheController) {
  start_host();
  if (!user) return;
  // A file only root may read, on the machine runner runs on.
  std::string secret = dir.write("secret.csv", "leaked\n424242\n");
  ASSERT_EQ(chmod(secret.c_str(), 0600), 0);
  dir.write("queue.yaml", "- command: mkdir -p res && ln -s " + secret +
                              " res/leak.csv && ln -s / res/root && printf 'score\\n7\\n' > "
                              "res/ok.csv\n"
                              "  outputs: res\n");
  ProcessResult r = runner({"queue", "--no-status"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string folder = dir.file("queue.runner/outputs/1/res");
  EXPECT_EQ(dir.read("queue.runner/outputs/1/res/ok.csv"), "score\n7\n");
  // The links are refused, and said so.
  EXPECT_FALSE(fs::exists(fs::symlink_status(folder + "/leak.csv"))) << r.err;
  EXPECT_FALSE(fs::exists(fs::symlink_status(folder + "/root"))) << r.err;
  EXPECT_NE(r.err.find("res/leak.csv: a symbolic link"), std::string::npos) << r.err;
  EXPECT_EQ(recorded_paths(), (std::set<std::string>{"res/ok.csv"}));
  // Nothing of the secret reaches the journal (its digest), the results or
  // the report.
  std::string digest = testing::sh_output("sha256sum '" + secret + "' | cut -c1-64");
  ASSERT_EQ(digest.size(), 65u);
  EXPECT_EQ(dir.read("queue.runner/journal.jsonl").find(digest.substr(0, 64)), std::string::npos);
  ProcessResult results = reader({"results", "--format", "tsv"});
  ASSERT_EQ(results.status, 0) << results.err;
  EXPECT_NE(results.out.find("score"), std::string::npos) << results.out;
  EXPECT_EQ(results.out.find("leaked"), std::string::npos) << results.out;
  EXPECT_EQ(results.out.find("424242"), std::string::npos) << results.out;
  ProcessResult report = reader({"report", "-o", dir.file("report.html")});
  ASSERT_EQ(report.status, 0) << report.err;
  EXPECT_EQ(dir.read("report.html").find("424242"), std::string::npos);
}

TEST_F(RemoteOutputs, FilesComeBackOwnedByRunnersUserWithoutSetUidBits) {
  start_host();
  if (!user) return;
  dir.write("queue.yaml",
            "- command: mkdir -p res && cp /bin/sh res/sh && chmod 4755 res/sh && "
            "cp /bin/sh res/sg && chmod 2775 res/sg && mkdir -p res/open && chmod 1777 res/open\n"
            "  outputs: res\n");
  ProcessResult r = runner({"queue", "--no-status"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string folder = dir.file("queue.runner/outputs/1/res");
  for (const char* name : {"sh", "sg", "open"}) {
    struct stat info {};
    ASSERT_EQ(lstat((folder + "/" + name).c_str(), &info), 0) << name << "\n" << r.err;
    EXPECT_EQ(info.st_uid, geteuid()) << name;
    EXPECT_EQ(info.st_gid, getegid()) << name;
    EXPECT_EQ(info.st_mode & 07000, 0u) << name << std::oct << " mode " << info.st_mode;
    EXPECT_EQ(info.st_mode & 0022, 0u) << name << std::oct << " mode " << info.st_mode;
  }
  struct stat sh {};
  ASSERT_EQ(stat((folder + "/sh").c_str(), &sh), 0);
  EXPECT_EQ(sh.st_mode & 0777, 0755u) << std::oct << sh.st_mode;
}

TEST_F(RemoteOutputs, OddNamesAreRecordedReportedAndCleanedUpExactly) {
  start_host();
  if (!user) return;
  const std::set<std::string> names = {"res/a\\b.csv",      "res/tab\there.csv",
                                       "res/new\nline.csv", "res/caf\xc3\xa9.csv",
                                       "res/raw\xe9.csv",   "res/plain.csv"};
  std::string script = "mkdir -p res\n";
  for (const std::string& name : names) script += "printf 'x\\n' > '" + name + "'\n";
  user->write_file("make.sh", script);
  dir.write("queue.yaml",
            "- command: sh make.sh\n"
            "  outputs: res\n"
            "  outputs_cleanup: true\n");
  ProcessResult r = runner({"queue", "--no-status"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(recorded_paths(), names) << r.err;
  for (const std::string& name : names) {
    EXPECT_EQ(dir.read("queue.runner/outputs/1/" + name), "x\n") << name;
    EXPECT_FALSE(fs::exists(user->home() + "/" + name)) << name << " is left on the host";
  }
  ProcessResult report = reader({"report", "-o", dir.file("report.html")});
  ASSERT_EQ(report.status, 0) << report.err;
  std::string page = dir.read("report.html");
  EXPECT_NE(page.find("res/a\\b.csv"), std::string::npos);
  EXPECT_NE(page.find("res/caf\xc3\xa9.csv"), std::string::npos);
  EXPECT_NE(page.find("res/plain.csv"), std::string::npos);
  EXPECT_GE(testing::count(page, "res/"), static_cast<int>(names.size()));
}

}  // namespace
}  // namespace runner
