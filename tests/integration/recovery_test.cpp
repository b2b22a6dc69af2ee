// When things go wrong, for real: a host that drops off the network and
// comes back, a runner killed with SIGKILL and resumed, timeouts, retries,
// cancel commands, 500 concurrent `runner add`s, a broken edit mid-run.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "support/loopback_fleet.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/text.h"
#include "support/wait.h"

namespace runner {
namespace {

using namespace std::chrono_literals;
using testing::Process;
using testing::ProcessResult;
using testing::TempDir;
using testing::wait_until;

std::vector<nlohmann::json> journal_of(const TempDir& dir) {
  std::vector<nlohmann::json> records;
  std::istringstream lines(dir.read("queue.runner/journal.jsonl"));
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) records.push_back(nlohmann::json::parse(line));
  return records;
}

// For every job id: how it ended each time (true: succeeded), in order.
std::map<std::uint64_t, std::vector<std::string>> endings(const std::vector<nlohmann::json>& j) {
  std::map<std::uint64_t, std::vector<std::string>> out;
  for (const auto& r : j) {
    if (r["event"] != "job_end") continue;
    std::string how = r["rerun"].get<bool>() ? "rerun" : r["exit"] == 0 ? "ok" : "failed";
    out[r["job"].get<std::uint64_t>()].push_back(how);
  }
  return out;
}

// A command line of this test process's own, to find a job's processes.
std::string marker_sleep(const char* seconds_suffix) {
  return "sleep " + std::to_string(200 + getpid() % 700) + seconds_suffix;
}

struct SshRecovery : ::testing::Test {
  TempDir dir;
  testing::LoopbackFleet fleet{dir};

  bool start_hosts(int n) {
    if (fleet.start(n)) return true;
    if (testing::sshd_required()) ADD_FAILURE() << "sshd is missing but CI=true requires it";
    return false;
  }
  std::string name(int i) const { return fleet.name(i); }
  testing::ProcessSpec spec(std::vector<std::string> args) { return fleet.runner(std::move(args)); }
};

TEST_F(SshRecovery, LostHostsJobsRunElsewhereAndTheHostRejoinsAfterItsLeftoversAreKilled) {
  if (!start_hosts(2)) GTEST_SKIP() << "no sshd";
  dir.write("hosts.yaml", "- " + name(0) + "\n- " + name(1) + "\n");
  std::string stuck = marker_sleep(".5");
  // The first attempt of job 0 hangs; the others are short, enough of them
  // that the lost host is back before the queue runs dry.
  dir.write("queue.yaml",
            "- command: if [ <<i>> = 0 ] && ! [ -e " + dir.file("tried") + " ]; then touch " +
                dir.file("tried") + "; " + stuck +
                "; fi; sleep 0.3; echo job <<i>> on <<hostname>>\n"
                "  i: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17]\n");
  Process run(spec({"queue"}));
  wait_until([&] { return testing::live_processes_running(stuck) == 1; }, 20s);
  ASSERT_EQ(testing::live_processes_running(stuck), 1) << run.peek_err();
  // Whichever host got job 0 drops off the network; its process goes on.
  int lost = -1;
  for (const auto& record : journal_of(dir))
    if (record["event"] == "job_start" && record["job"] == 1)
      lost = record["host"] == name(0) ? 0 : 1;
  ASSERT_GE(lost, 0);
  fleet.host(lost).cut_network();
  ASSERT_TRUE(run.wait_for_output("running it again", 20s)) << run.peek_err();
  EXPECT_EQ(testing::live_processes_running(stuck), 1);
  fleet.host(lost).restart();
  ProcessResult r = run.wait();
  ASSERT_EQ(r.status, 0) << r.err;

  EXPECT_EQ(testing::live_processes_running(stuck), 0) << "the lost job's process was left";
  EXPECT_NE(r.err.find("killed 1 leftover"), std::string::npos) << r.err;
  EXPECT_NE(testing::job_lines(r.out).find("job 0 on " + name(1 - lost)), std::string::npos) << r.out;
  auto journal = journal_of(dir);
  auto ends = endings(journal);
  ASSERT_EQ(ends.size(), 18u);
  EXPECT_EQ(ends[1], (std::vector<std::string>{"rerun", "ok"}));
  for (const auto& [job, how] : ends) EXPECT_EQ(how.back(), "ok") << "job " << job;
  // Host 0 took jobs again after it failed.
  bool failed = false, rejoined = false;
  for (const auto& record : journal) {
    if (record["event"] == "host_failed") failed = true;
    if (failed && record["event"] == "job_start" && record["host"] == name(lost)) rejoined = true;
  }
  EXPECT_TRUE(rejoined);
}

TEST_F(SshRecovery, AHostThatDropsAndComesBackIsSaidToReconnectNeverToBeGivenUp) {
  if (!start_hosts(1)) GTEST_SKIP() << "no sshd";
  dir.write("hosts.yaml", "- " + name(0) + "\n");
  dir.write("queue.yaml", "- command: sleep 1; echo job <<i>>\n  i: [0, 1, 2, 3, 4, 5]\n");
  Process run(spec({"queue"}));
  ASSERT_TRUE(run.wait_for_output("] job 0\n", 20s)) << run.peek_err();
  // In the middle of job 1, not while it starts.
  std::this_thread::sleep_for(300ms);
  fleet.host(0).cut_network();
  ASSERT_TRUE(run.wait_for_output("reconnecting", 30s)) << run.peek_err();
  fleet.host(0).restart();
  ProcessResult r = run.wait();
  EXPECT_EQ(r.status, 0) << r.err;
  std::string drop_line = r.err.substr(0, r.err.find('\n', r.err.find("reconnecting")));
  drop_line = drop_line.substr(drop_line.rfind('\n') + 1);
  std::string address = "127.0.0.1:" + std::to_string(fleet.host(0).port());
  EXPECT_EQ(drop_line.rfind("runner: warning: " + address + ": ", 0), 0u) << drop_line;
  EXPECT_NE(drop_line.find("no new jobs there until it is back"), std::string::npos) << drop_line;
  EXPECT_EQ(r.err.find("no jobs will run there"), std::string::npos)
      << "a host being reconnected was said to be given up:\n"
      << r.err;
  for (int i = 0; i < 6; ++i)
    EXPECT_NE(testing::job_lines(r.out).find("job " + std::to_string(i)), std::string::npos) << r.out;
}

TEST_F(SshRecovery, KilledRunnerIsResumedWithNothingLostAndNothingLeftRunning) {
  if (!start_hosts(1)) GTEST_SKIP() << "no sshd";
  dir.write("hosts.yaml", "- hostname: " + name(0) + "\n  slots: 2\n");
  std::string stuck = marker_sleep(".25");
  std::string flags = dir.path();
  // The first attempt of jobs 0 and 1 hangs; a second attempt finishes.
  dir.write("queue.yaml", "- command: if [ -e " + flags +
                              "/tried-<<i>> ]; then echo second attempt <<i>>; "
                              "else touch " +
                              flags + "/tried-<<i>>; " + stuck +
                              "; fi\n"
                              "  i: [0, 1]\n"
                              "- echo quick\n");
  {
    Process run(spec({"queue"}));
    wait_until([&] { return testing::live_processes_running(stuck) == 2; }, 20s);
    ASSERT_EQ(testing::live_processes_running(stuck), 2) << run.peek_err();
    run.signal(SIGKILL);
    run.wait();
  }
  ASSERT_EQ(testing::live_processes_running(stuck), 2) << "the jobs outlive their runner";

  ProcessResult refused = testing::run_process(spec({"queue"}));
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find("--resume"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("#1"), std::string::npos) << refused.err;
  EXPECT_EQ(testing::live_processes_running(stuck), 2) << "refusing must not touch anything";

  ProcessResult resumed = testing::run_process(spec({"queue", "--resume"}));
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_EQ(testing::live_processes_running(stuck), 0);
  EXPECT_NE(testing::job_lines(resumed.out).find("second attempt 0"), std::string::npos) << resumed.out;
  EXPECT_NE(testing::job_lines(resumed.out).find("second attempt 1"), std::string::npos) << resumed.out;
  EXPECT_NE(testing::job_lines(resumed.out).find("quick"), std::string::npos) << resumed.out;
  auto ends = endings(journal_of(dir));
  ASSERT_EQ(ends.size(), 3u);
  EXPECT_EQ(ends[1], (std::vector<std::string>{"rerun", "ok"}));
  EXPECT_EQ(ends[2], (std::vector<std::string>{"rerun", "ok"}));
  EXPECT_EQ(ends[3], (std::vector<std::string>{"ok"}));

  // And the next run starts clean.
  dir.write("queue.yaml", "- echo again\n");
  EXPECT_EQ(testing::run_process(spec({"queue"})).status, 0);
}

struct LocalRecovery : ::testing::Test {
  TempDir dir;
  void SetUp() override { dir.write("hosts.yaml", "- hostname: localhost\n  gpu: [0, 1]\n"); }
  ProcessResult runner(std::vector<std::string> args) {
    return testing::run_process(testing::runner_spec(std::move(args), dir.path()));
  }
  // Kills `runner queue` (SIGKILL) once its one job runs `stuck`.
  void kill_runner_once_running(const std::string& stuck) {
    testing::Process run(testing::runner_spec({"queue"}, dir.path()));
    testing::wait_until([&] { return testing::live_processes_running(stuck) == 1; }, 20s);
    ASSERT_EQ(testing::live_processes_running(stuck), 1) << run.peek_err();
    run.signal(SIGKILL);
    run.wait();
  }
};

TEST_F(LocalRecovery, TimedOutJobIsStoppedAndItsCancelCommandRuns) {
  std::string stuck = marker_sleep(".75");
  dir.write("queue.yaml", "- command: " + stuck +
                              "\n  timeout: 1s\n  cancel: touch cancelled-<<gpu>>\n"
                              "- echo fine\n");
  ProcessResult r = runner({"queue"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("timed out"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir.file("cancelled-0")));
  EXPECT_EQ(testing::live_processes_running(stuck), 0);
  auto journal = journal_of(dir);
  bool recorded = false;
  for (const auto& record : journal)
    if (record["event"] == "job_end" && record["job"] == 1) recorded = record["timed_out"] == true;
  EXPECT_TRUE(recorded);
}

TEST_F(LocalRecovery, ResumeRerunsTheExactBytesOfACommandThatIsNotUtf8) {
  std::string stuck = marker_sleep(".375");
  // "caf\xe9": Latin-1, not UTF-8.
  dir.write("queue.yaml",
            "- if [ -e tried ]; then printf %s 'caf\xe9' > result; else touch tried; " + stuck +
                "; fi\n");
  ASSERT_NO_FATAL_FAILURE(kill_runner_once_running(stuck));
  ProcessResult resumed = runner({"queue", "--resume"});
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_EQ(testing::live_processes_running(stuck), 0);
  EXPECT_EQ(dir.read("result"), "caf\xe9");
}

TEST_F(LocalRecovery, AResumedJobBringsBackItsOutputsAndCleansThemUp) {
  std::string stuck = marker_sleep(".875");
  dir.write("queue.yaml", "- command: if [ -e tried ]; then echo second > result.txt; else touch "
                          "tried; " + stuck + "; fi\n"
                          "  outputs: result.txt\n  outputs_cleanup: true\n");
  ASSERT_NO_FATAL_FAILURE(kill_runner_once_running(stuck));
  ProcessResult resumed = runner({"queue", "--resume"});
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_EQ(dir.read("queue.runner/outputs/1.attempt-2/result.txt"), "second\n")
      << testing::sh_output("find " + dir.file("queue.runner/outputs"));
  EXPECT_FALSE(std::filesystem::exists(dir.file("result.txt"))) << "outputs_cleanup";
}

TEST_F(LocalRecovery, ResumeLeavesAloneAProcessGroupThatIsNoLongerTheJobs) {
  std::string stuck = marker_sleep(".625");
  dir.write("queue.yaml",
            "- if [ -e tried ]; then echo second; else touch tried; " + stuck + "; fi\n");
  ASSERT_NO_FATAL_FAILURE(kill_runner_once_running(stuck));
  // While no runner watched, the job ended, and its group's number went to
  // someone else's processes: the journal's record now names a stranger.
  nlohmann::json recorded;
  for (const auto& record : journal_of(dir))
    if (record["event"] == "job_pgid") recorded = record;
  ASSERT_TRUE(recorded.is_object());
  ASSERT_EQ(kill(-recorded["pgid"].get<pid_t>(), SIGKILL), 0);
  testing::wait_until([&] { return testing::live_processes_running(stuck) == 0; }, 10s);
  testing::ProcessSpec sleeper;
  sleeper.args = {"/bin/sleep", "300"};
  Process stranger(sleeper);
  recorded["pgid"] = stranger.pid();
  std::ofstream(dir.file("queue.runner/journal.jsonl"), std::ios::app) << recorded.dump() << "\n";

  ProcessResult resumed = runner({"queue", "--resume"});
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_EQ(testing::live_group_members(stranger.pid()), 1) << "a stranger's process was killed";
  EXPECT_NE(resumed.err.find("process group " + std::to_string(stranger.pid())), std::string::npos)
      << resumed.err;
  EXPECT_NE(dir.read("queue.runner/logs/1.log").find("second"), std::string::npos);
}

TEST_F(LocalRecovery, DefaultTimeoutFromTheCommandLine) {
  std::string stuck = marker_sleep(".125");
  dir.write("queue.yaml", "- " + stuck + "\n");
  ProcessResult r = runner({"queue", "--timeout", "500ms"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("timed out"), std::string::npos) << r.err;
  EXPECT_EQ(testing::live_processes_running(stuck), 0);
  EXPECT_EQ(runner({"queue", "--timeout", "soon"}).status, 2);
}

TEST_F(LocalRecovery, FailedJobIsRetriedAndBothAttemptsAreLogged) {
  dir.write(
      "queue.yaml",
      "- command: if [ -e tried ]; then echo worked; else touch tried; echo nope; exit 4; fi\n"
      "  retries: 1\n");
  ProcessResult r = runner({"queue"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("running it again"), std::string::npos) << r.err;
  std::string log = dir.read("queue.runner/logs/1.log");
  EXPECT_NE(log.find("nope"), std::string::npos) << log;
  EXPECT_NE(log.find("attempt 2"), std::string::npos) << log;
  EXPECT_NE(log.find("worked"), std::string::npos) << log;
  EXPECT_EQ(endings(journal_of(dir))[1], (std::vector<std::string>{"rerun", "ok"}));
}

TEST_F(LocalRecovery, RetriesFromTheCommandLineRunOut) {
  dir.write("queue.yaml", "- echo try >> tries; exit 1\n");
  ProcessResult r = runner({"queue", "--retries", "2"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(dir.read("tries"), "try\ntry\ntry\n");
}

TEST_F(LocalRecovery, DoubleInterruptRunsCancelCommandsAndRecordsCancelledJobs) {
  std::string stuck = marker_sleep(".375");
  dir.write("queue.yaml", "- command: " + stuck + "\n  cancel: touch cancelled-<<gpu>>\n");
  Process run(testing::runner_spec({"queue"}, dir.path()));
  wait_until([&] { return testing::live_processes_running(stuck) == 1; }, 10s);
  run.signal(SIGINT);
  ASSERT_TRUE(run.wait_for_output("interrupt again", 5s)) << run.peek_err();
  run.signal(SIGINT);
  ProcessResult r = run.wait();
  EXPECT_EQ(r.status, 130);
  EXPECT_TRUE(std::filesystem::exists(dir.file("cancelled-0")));
  EXPECT_EQ(testing::live_processes_running(stuck), 0);
  bool cancelled = false;
  for (const auto& record : journal_of(dir))
    if (record["event"] == "job_end") cancelled = record["cancelled"] == true;
  EXPECT_TRUE(cancelled);
}

void expect_added(Process& adder) {
  ProcessResult added = adder.wait();
  EXPECT_EQ(added.status, 0) << added.err;
}

TEST_F(LocalRecovery, FiveHundredConcurrentAddsEachRunExactlyOnce) {
  dir.write("hosts.yaml", "- hostname: localhost\n  slots: 4\n");
  dir.write("queue.yaml", "");
  Process run(testing::runner_spec({"queue", "--daemon"}, dir.path()));
  usleep(200'000);
  std::vector<std::unique_ptr<Process>> adders;
  for (int i = 0; i < 500; ++i) {
    adders.push_back(std::make_unique<Process>(
        testing::runner_spec({"add", "echo", "job-" + std::to_string(i) + "-done"}, dir.path())));
    if (adders.size() == 50) {  // at most 50 at once on a 2-core machine
      for (auto& adder : adders) expect_added(*adder);
      adders.clear();
    }
  }
  for (auto& adder : adders) expect_added(*adder);
  wait_until(
      [&] {
        std::string out = testing::job_lines(run.peek_out());
        return std::count(out.begin(), out.end(), '\n') >= 500;
      },
      60s);
  run.signal(SIGINT);
  ProcessResult r = run.wait();
  std::map<std::string, int> seen;
  std::istringstream lines(testing::job_lines(r.out));
  for (std::string line; std::getline(lines, line);) ++seen[line.substr(line.find("] ") + 2)];
  for (int i = 0; i < 500; ++i)
    EXPECT_EQ(seen["job-" + std::to_string(i) + "-done"], 1) << "job " << i;
  EXPECT_EQ(seen.size(), 500u);
  EXPECT_EQ(YAML::LoadFile(dir.file("consumed.yaml")).size(), 500u);
}

TEST_F(LocalRecovery, BrokenEditMidRunIsReportedNeverOverwrittenAndPickedUpWhenFixed) {
  dir.write("queue.yaml", "- sleep 0.5; echo first\n");
  Process run(testing::runner_spec({"queue", "--daemon"}, dir.path()));
  ASSERT_TRUE(run.wait_for_output("] first\n", 10s)) << run.peek_err();
  std::string broken = "- echo second\n- command: [oops\n";
  dir.write("queue.yaml", broken);
  ASSERT_TRUE(run.wait_for_output("queue.yaml:3:1", 10s)) << run.peek_err();
  usleep(300'000);
  EXPECT_EQ(dir.read("queue.yaml"), broken);
  EXPECT_EQ(run.peek_out().find("second"), std::string::npos);
  dir.write("queue.yaml", "- echo second\n- echo third\n");
  EXPECT_TRUE(run.wait_for_output("] third", 10s)) << run.peek_err();
  run.signal(SIGINT);
  EXPECT_EQ(run.wait().status, 130);
}

}  // namespace
}  // namespace runner
