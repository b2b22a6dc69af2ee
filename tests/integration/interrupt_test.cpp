// Ctrl-C typed at the terminal of a run on local slots, as a user types it:
// the first one stops new jobs and leaves every running job alone, however
// close it comes to a job's start. A hang-up (the terminal closed) does the
// same.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>

#include "support/temp_dir.h"
#include "support/terminal_run.h"

namespace runner {
namespace {

using namespace std::chrono_literals;
using testing::Ci;
using testing::TempDir;
using testing::TerminalRun;

// A queue of `jobs` jobs that each print their number and exit 0.
std::string short_jobs(int jobs) {
  std::string values;
  for (int n = 1; n <= jobs; ++n) values += (n > 1 ? ", " : "") + std::to_string(n);
  return "- command: echo go <<n>>\n  n: [" + values + "]\n";
}

// What the journal says of every job that ended other than by exiting 0.
std::string jobs_not_ending_by_themselves(const TempDir& dir, int& started, int& ended) {
  std::ostringstream out;
  std::istringstream lines(dir.read("queue.runner/journal.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    nlohmann::json record = nlohmann::json::parse(line);
    if (record["event"] == "job_start") ++started;
    if (record["event"] != "job_end") continue;
    ++ended;
    if (record["exit"] != 0 || !record["signal"].is_null()) out << line << "\n";
  }
  return out.str();
}

TEST(CtrlC, FirstOneNeverReachesALocalJobBeingStarted) {
  // Jobs start all the time on 32 slots. In memory, where the journal's
  // syncs cost nothing, and without a status line to draw, runner does
  // little else than start them, so a Ctrl-C typed at a random moment often
  // lands in a start; a few runs find one that is not yet shielded from the
  // terminal.
  std::mt19937 random(static_cast<unsigned>(getpid()));
  std::string in_memory = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "";
  for (int attempt = 1; attempt <= 20; ++attempt) {
    SCOPED_TRACE("attempt " + std::to_string(attempt));
    TempDir dir(in_memory);
    dir.write("hosts.yaml", "- hostname: localhost\n  slots: 32\n");
    dir.write("queue.yaml", short_jobs(5000));
    TerminalRun run(dir, {"queue"}, Ci::set);
    ASSERT_TRUE(run.started());
    ASSERT_TRUE(run.read_until("] go 40\r\n", 30s)) << run.seen();
    std::this_thread::sleep_for(std::chrono::microseconds(random() % 20'000));
    ASSERT_EQ(run.type("\x03"), 1);
    run.read_to_end(30s);
    int status = run.wait(5s);
    const std::string& seen = run.seen();
    EXPECT_EQ(seen.find("killed by INT"), std::string::npos) << seen;
    int started = 0, ended = 0;
    EXPECT_EQ(jobs_not_ending_by_themselves(dir, started, ended), "");
    EXPECT_GE(started, 40);
    EXPECT_LT(started, 5000) << "the Ctrl-C stopped the run";
    EXPECT_EQ(started, ended) << "every job that started ends, and is recorded";
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << "status " << status;
    if (::testing::Test::HasFailure()) break;
  }
}

TEST(HangUp, StopsNewJobsLetsRunningOnesFinishAndEndsWith130) {
  TempDir dir;
  dir.write("hosts.yaml", "- hostname: localhost\n  slots: 2\n");
  dir.write("queue.yaml",
            "- command: echo begin <<n>>; sleep 1; echo end <<n>>\n  n: [1, 2, 3, 4, 5, 6]\n");
  TerminalRun run(dir, {"queue"}, Ci::set);
  ASSERT_TRUE(run.started());
  ASSERT_TRUE(run.read_until("begin 2\r\n", 30s)) << run.seen();
  ASSERT_EQ(::kill(run.pid(), SIGHUP), 0);
  run.read_to_end(30s);
  int status = run.wait(5s);
  const std::string& seen = run.seen();
  EXPECT_NE(seen.find("end 1\r\n"), std::string::npos) << seen;
  EXPECT_NE(seen.find("end 2\r\n"), std::string::npos) << seen;
  EXPECT_EQ(seen.find("begin 3"), std::string::npos) << seen;
  int started = 0, ended = 0;
  EXPECT_EQ(jobs_not_ending_by_themselves(dir, started, ended), "");
  EXPECT_EQ(started, 2);
  EXPECT_EQ(ended, 2);
  EXPECT_NE(dir.read("queue.yaml").find("[3, 4, 5, 6]"), std::string::npos)
      << dir.read("queue.yaml");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << "status " << status;
}

}  // namespace
}  // namespace runner
