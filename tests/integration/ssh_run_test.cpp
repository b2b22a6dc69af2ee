// The real binary against real sshd instances on 127.0.0.1 (several ports =
// several hosts), with a throwaway key and known_hosts: never ~/.ssh.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "support/loopback_fleet.h"
#include "support/loopback_port.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/text.h"
#include "support/wait.h"

namespace runner {
namespace {

using testing::count;

using namespace std::chrono_literals;
using testing::Process;
using testing::ProcessResult;
using testing::TempDir;

struct SshFleet : ::testing::Test {
  TempDir dir;
  testing::LoopbackFleet fleet{dir};

  // Starts `n` hosts sharing one client key; skips (fails under CI=true)
  // without sshd.
  void start_hosts(int n, testing::SshdOptions options = {}) {
    if (fleet.start(n, options)) return;
    if (testing::sshd_required()) FAIL() << "sshd is missing but CI=true requires it";
    GTEST_SKIP() << "no sshd on this machine";
  }
  std::string host_name(int i) const { return fleet.name(i); }
  void write_hosts(int slots) { fleet.write_hosts(slots); }
  testing::ProcessSpec spec(std::vector<std::string> args) { return fleet.runner(std::move(args)); }
  ProcessResult runner(std::vector<std::string> args) { return testing::run_process(spec(args)); }
};

TEST_F(SshFleet, QueueModeSpreadsJobsOverThreeHostsInParallel) {
  start_hosts(3);
  if (fleet.size() < 3) return;
  write_hosts(2);
  std::filesystem::create_directory(dir.file("running"));
  // Each job marks itself running, sleeps, and reports how many jobs were
  // running at that moment.
  std::string running = dir.file("running");
  dir.write("queue.yaml",
            "- command: >-\n"
            "    touch " +
                running +
                "/<<i>>; sleep 1;\n"
                "    echo job <<i>> on <<hostname>> slot <<slots>> saw $(ls " +
                running +
                " | wc -l);\n"
                "    rm " +
                running +
                "/<<i>>\n"
                "  i: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]\n");
  ProcessResult r = runner({"queue"});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  std::set<std::string> jobs_seen, hosts_seen;
  int most_at_once = 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    auto at = line.find("] job ");
    if (at == std::string::npos) continue;  // e.g. what a login shell's rc file printed
    std::istringstream words(line.substr(at + 2));
    std::string job, id, on, host, slot, index, saw;
    int n = 0;
    words >> job >> id >> on >> host >> slot >> index >> saw >> n;
    EXPECT_TRUE(jobs_seen.insert(id).second) << "job " << id << " ran twice";
    hosts_seen.insert(host);
    most_at_once = std::max(most_at_once, n);
  }
  EXPECT_EQ(jobs_seen.size(), 12u);
  EXPECT_EQ(hosts_seen.size(), 3u);
  EXPECT_GE(most_at_once, 4) << "jobs did not run in parallel across slots";
  EXPECT_LE(most_at_once, 6) << "more jobs ran at once than there are slots";
  YAML::Node consumed = YAML::LoadFile(dir.file("consumed.yaml"));
  EXPECT_EQ(consumed.size(), 12u);
  EXPECT_EQ(count(dir.read("queue.runner/journal.jsonl"), "\"event\":\"job_end\""), 12);
}

TEST_F(SshFleet, BroadcastRunsInLockstepOnEverySlot) {
  start_hosts(2);
  if (fleet.size() < 2) return;
  write_hosts(2);
  std::string marks = dir.file("marks");
  std::filesystem::create_directory(marks);
  dir.write("queue.yaml", "- sleep 0.<<slots>>; touch " + marks +
                              "/one-$(echo <<hostname>> | tr -dc 0-9)-<<slots>>\n"
                              "- test $(ls " +
                              marks + " | grep -c one-) -eq 4 && echo all four\n");
  ProcessResult r = runner({"broadcast"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(count(r.out, "] all four\n"), 4) << r.out;
}

TEST_F(SshFleet, CommandsWithQuotesDollarsBackslashesAndNewlinesRunExactly) {
  start_hosts(1);
  if (fleet.size() == 0) return;
  write_hosts(1);
  dir.write("queue.yaml",
            "- |-\n"
            "  printf '%s|' \"it's\" '$HOME' \"a\\\\b\" \"$((6*7))\"\n"
            "  echo; echo 'second line'\n");
  ProcessResult r = runner({"queue"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(testing::job_lines(r.out).find("] it's|$HOME|a\\b|42|\n"), std::string::npos) << r.out;
  EXPECT_NE(testing::job_lines(r.out).find("] second line\n"), std::string::npos) << r.out;
}

TEST_F(SshFleet, FailingJobIsReportedWithExitStatusAndLog) {
  start_hosts(1);
  if (fleet.size() == 0) return;
  write_hosts(1);
  dir.write("queue.yaml", "- echo fine\n- echo bad >&2; exit 7\n");
  ProcessResult r = runner({"queue"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("exit 7"), std::string::npos) << r.err;
  EXPECT_NE(testing::job_lines(r.out).find("] bad\n"), std::string::npos) << r.out;
}

TEST_F(SshFleet, MultiSlotJobHoldsSlotsOfOneHost) {
  start_hosts(2);
  if (fleet.size() < 2) return;
  dir.write("hosts.yaml", "- hostname: " + host_name(0) +
                              "\n  gpu: [0]\n- hostname: " + host_name(1) + "\n  gpu: [2, 3]\n");
  dir.write("queue.yaml", "- command: echo gpus <<gpu>> on <<hostname>>\n  slots: 2\n");
  ProcessResult r = runner({"queue"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(testing::job_lines(r.out).find("gpus 2,3 on " + host_name(1)), std::string::npos) << r.out;
}

TEST_F(SshFleet, UnreachableHostIsNamedAndTheOthersKeepWorking) {
  start_hosts(1);
  if (fleet.size() == 0) return;
  int port = testing::unused_port();
  dir.write("hosts.yaml", "- " + host_name(0) + "\n- 127.0.0.1:" + std::to_string(port) + "\n");
  dir.write("queue.yaml", "- echo a\n- echo b\n- echo c\n");
  ProcessResult r = runner({"queue"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find(std::to_string(port)), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("refused"), std::string::npos) << r.err;
  EXPECT_EQ(count(testing::job_lines(r.out), "\n"), 3) << r.out;
}

TEST_F(SshFleet, RefusedKeyIsExplained) {
  start_hosts(1);
  if (fleet.size() == 0) return;
  write_hosts(1);
  dir.write("queue.yaml", "- touch " + dir.file("ran") + "\n");
  ASSERT_EQ(testing::run_process(
                {{"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", dir.file("stranger")}})
                .status,
            0);
  ProcessResult r = testing::run_process(
      testing::runner_spec({"queue", "--identity", dir.file("stranger"), "--known-hosts",
                            fleet.known_hosts_file(), "--ssh-config", dir.write("ssh_config", "")},
                           dir.path()));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("authentication"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("stranger"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("ran")));
  EXPECT_NE(dir.read("queue.yaml").find("touch"), std::string::npos) << "the job must stay queued";
}

TEST_F(SshFleet, UnknownHostKeyIsRefusedUnlessAccepted) {
  start_hosts(1);
  if (fleet.size() == 0) return;
  write_hosts(1);
  dir.write("known_hosts", "");
  dir.write("queue.yaml", "- echo trusted now\n");
  ProcessResult refused = runner({"queue"});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("ssh-keyscan"), std::string::npos) << refused.err;
  EXPECT_EQ(dir.read("known_hosts"), "");

  ProcessResult accepted = runner({"queue", "--accept-new-host-keys"});
  EXPECT_EQ(accepted.status, 0) << accepted.err;
  EXPECT_NE(accepted.out.find("] trusted now"), std::string::npos);
  EXPECT_NE(dir.read("known_hosts").find(std::to_string(fleet.host(0).port())), std::string::npos);
}

TEST_F(SshFleet, ChangedHostKeyIsAlwaysRefused) {
  start_hosts(1);
  if (fleet.size() == 0) return;
  write_hosts(1);
  // A known_hosts line with another key for the same [host]:port.
  ASSERT_EQ(testing::run_process(
                {{"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", dir.file("impostor")}})
                .status,
            0);
  std::string impostor = dir.read("impostor.pub");
  std::string line = "[127.0.0.1]:" + std::to_string(fleet.host(0).port()) + " " +
                     impostor.substr(0, impostor.rfind(' '));
  dir.write("known_hosts", line + "\n");
  dir.write("queue.yaml", "- touch " + dir.file("ran") + "\n");
  ProcessResult r = runner({"queue", "--accept-new-host-keys"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("changed"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("ran")));
  EXPECT_EQ(dir.read("known_hosts"), line + "\n");
}

TEST_F(SshFleet, SecondInterruptKillsRemoteJobs) {
  start_hosts(2);
  if (fleet.size() < 2) return;
  write_hosts(1);
  std::string marker = "sleep " + std::to_string(100 + getpid() % 900) + ".75";
  dir.write("queue.yaml", "- " + marker + " & " + marker + "; wait\n- " + marker + "\n");
  auto run = std::make_unique<Process>(spec({"queue"}));
  testing::wait_until([&] { return testing::live_processes_running(marker) >= 3; }, 10s);
  ASSERT_EQ(testing::live_processes_running(marker), 3) << run->peek_err();
  run->signal(SIGINT);
  ASSERT_TRUE(run->wait_for_output("interrupt again", 5s)) << run->peek_err();
  run->signal(SIGINT);
  ProcessResult r = run->wait();
  EXPECT_EQ(r.status, 130) << r.err;
  testing::wait_until([&] { return testing::live_processes_running(marker) == 0; }, 2s);
  EXPECT_EQ(testing::live_processes_running(marker), 0);
}

}  // namespace
}  // namespace runner
