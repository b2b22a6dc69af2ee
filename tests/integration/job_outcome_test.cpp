// The real binary: how a job ended reads the same whether it ran on a local
// slot or over SSH (journal fields, console words, job log).
#include <gtest/gtest.h>

#include <string>

#include "runner/state/journal.h"
#include "support/loopback_fleet.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/text.h"
#include "support/value_of.h"

namespace runner {
namespace {

struct JobOutcome : ::testing::Test {
  testing::TempDir dir;
  testing::LoopbackFleet fleet{dir};

  struct Seen {
    std::string words;  // the console's "failed: ..." words
    nlohmann::json end;
    std::string log;
  };

  // Runs `command` alone on the fleet `hosts_yaml` describes; `name` keeps
  // each run's files apart.
  Seen run_on(const std::string& name, const std::string& hosts_yaml, const std::string& command) {
    dir.write(name + "-hosts.yaml", hosts_yaml);
    dir.write(name + ".yaml", "- " + command + "\n");
    testing::ProcessResult r =
        testing::run_process(fleet.runner({"queue", "--no-status", "--hosts-file",
                                           name + "-hosts.yaml", "--queue-file", name + ".yaml"}));
    Seen seen;
    std::string all = r.out + r.err;
    size_t failed = all.find("failed: ");
    if (failed != std::string::npos)
      seen.words = all.substr(failed + 8, all.find('\n', failed) - failed - 8);
    for (auto& record : testing::value_of(read_journal(dir.file(name + ".runner/journal.jsonl"))))
      if (record.value("event", "") == "job_end") seen.end = record;
    seen.log = dir.read(name + ".runner/logs/1.log");
    return seen;
  }
};

TEST_F(JobOutcome, ASignalOrAnExitStatusReadsTheSameOnALocalSlotAndOverSsh) {
  if (!fleet.start(1)) {
    if (testing::sshd_required()) FAIL() << "sshd is missing but CI=true requires it";
    GTEST_SKIP() << "no sshd on this machine";
  }
  struct Case {
    std::string command;
    std::string words;
    nlohmann::json exit;
    nlohmann::json signal;
  };
  const Case cases[] = {
      {"echo before; kill -SEGV $$", "killed by SEGV", nullptr, "SEGV"},
      {"echo before; exit 139", "exit 139", 139, nullptr},
  };
  int run = 0;
  for (const Case& c : cases) {
    std::string id = std::to_string(++run);
    Seen local = run_on("local" + id, "- localhost\n", c.command);
    Seen ssh = run_on("ssh" + id, "- hostname: " + fleet.name(0) + "\n", c.command);
    for (const Seen* seen : {&local, &ssh}) {
      const char* where = seen == &local ? "local" : "ssh";
      EXPECT_EQ(seen->words, c.words) << where << ": " << c.command;
      EXPECT_EQ(seen->end["exit"], c.exit) << where << ": " << seen->end.dump();
      EXPECT_EQ(seen->end["signal"], c.signal) << where << ": " << seen->end.dump();
      EXPECT_EQ(seen->end["error"], nullptr) << where << ": " << seen->end.dump();
      EXPECT_EQ(seen->log, "before\n") << where << ": " << c.command;
    }
  }
}

TEST_F(JobOutcome, WhatALeftoverOutsideTheJobsGroupWritesLaterIsInNoOtherJobsLog) {
  if (!fleet.start(1)) {
    if (testing::sshd_required()) FAIL() << "sshd is missing but CI=true requires it";
    GTEST_SKIP() << "no sshd on this machine";
  }
  fleet.write_hosts(1);
  // The first job leaves a process in a session of its own that writes to
  // the job's output while the second job runs on the same slot.
  dir.write("queue.yaml",
            "- setsid sh -c 'sleep 1; echo stray-out; echo stray-err >&2' & echo first\n"
            "- sleep 2; echo second\n"
            "- echo third\n");
  testing::ProcessResult r = testing::run_process(fleet.runner({"queue", "--no-status"}));
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_EQ(dir.read("queue.runner/logs/1.log"), "first\n");
  EXPECT_EQ(dir.read("queue.runner/logs/2.log"), "second\n");
  EXPECT_EQ(dir.read("queue.runner/logs/3.log"), "third\n");
  EXPECT_EQ(testing::job_lines(r.out).find("stray-"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace runner
