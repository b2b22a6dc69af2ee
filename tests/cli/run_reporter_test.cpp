// What a run shows as the scheduler reports to it: the job logs, the
// terminal's notes, the summary's jobs and slot usage, and what the run log
// tells of the journal.
#include "runner/cli/run_reporter.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "runner/state/state_dir.h"
#include "support/temp_dir.h"
#include "support/value_of.h"

namespace runner {
namespace {

using testing::TempDir;
using testing::value_of;

// The text written to a stdio stream so far.
std::string text_of(std::FILE* stream) {
  std::fflush(stream);
  std::rewind(stream);
  std::string text;
  char buffer[4096];
  while (std::size_t got = std::fread(buffer, 1, sizeof buffer, stream)) text.append(buffer, got);
  return text;
}

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// The state directory of a TempDir, made.
std::string state_dir(const TempDir& dir) {
  EXPECT_TRUE(ensure_state_dir(dir.path()).ok());
  return dir.path();
}

// A reporter of a run on two slots of one host, its logs in a state
// directory of its own.
class RunReporterTest : public ::testing::Test {
 protected:
  RunReporterTest()
      : m_fleet(value_of(parse_hosts("- hostname: node01\n  gpu: [0, 1]\n", "hosts.yaml"))),
        m_out(std::tmpfile()),
        m_err(std::tmpfile()),
        m_console(m_out, m_err, ColorMode::never),
        m_logs(state_dir(m_dir)),
        m_reporter(m_fleet, m_console, m_logs) {}
  ~RunReporterTest() override {
    std::fclose(m_out);
    std::fclose(m_err);
  }

  // Job `id` running `command` on slot `slot`.
  Job running_job(JobId id, int slot, const std::string& command) {
    Job job;
    job.id = id;
    job.spec.command = command;
    job.spec.params = {{"lr", "0.1"}};
    Task task;
    task.id = id * 10;
    task.host = 0;
    task.slots = {slot};
    task.label = m_fleet.slots[slot].label;
    task.command = command;
    job.tasks.push_back(task);
    job.state = Running{};
    return job;
  }

  // A job on slot 0 launched, then ended with exit code 1 after `took`.
  Job failed_job(const std::string& command, bool will_rerun, Clock::duration took) {
    Job job = running_job(1, 0, command);
    m_reporter.job_launched(job);
    job.state = Done{will_rerun, {}, false};
    m_reporter.job_finished(job, JobExit::exited(1), took);
    return job;
  }

  std::string errors() { return text_of(m_err); }

  TempDir m_dir;
  Fleet m_fleet;
  std::FILE* m_out;
  std::FILE* m_err;
  Console m_console;
  JobLogs m_logs;
  RunReporter m_reporter;
};

TEST_F(RunReporterTest, ALaunchedJobGetsALogAndANote) {
  Job job = running_job(1, 1, "train --lr 0.1");
  m_reporter.job_launched(job);
  m_reporter.task_output(job, job.tasks[0], OutputStream::out, "epoch 1\n");
  m_reporter.flush_logs();

  std::ifstream log(m_logs.path(LogId(job.id)));
  std::stringstream logged;
  logged << log.rdbuf();
  EXPECT_EQ(logged.str(), "epoch 1\n");
  m_console.flush();
  std::string shown = text_of(m_out);
  EXPECT_NE(shown.find("=== #" + std::to_string(job.id) + " run 'train --lr 0.1' ==="),
            std::string::npos)
      << shown;
  EXPECT_NE(shown.find("epoch 1"), std::string::npos) << shown;
}

TEST_F(RunReporterTest, AFailedJobIsInTheSummaryAndItsSlotsUsage) {
  Job job = failed_job("false", /*will_rerun=*/false, std::chrono::seconds(3));

  ASSERT_EQ(m_reporter.finished().size(), 1u);
  EXPECT_EQ(m_reporter.finished()[0].id, job.id);
  EXPECT_EQ(m_reporter.finished()[0].log_path, m_logs.path(LogId(job.id)));
  EXPECT_EQ(m_reporter.slot_usage()[0].busy, std::chrono::seconds(3));
  EXPECT_EQ(m_reporter.slot_usage()[0].jobs, 1u);
  EXPECT_EQ(m_reporter.slot_usage()[1].jobs, 0u);
  EXPECT_NE(errors().find("failed"), std::string::npos) << errors();
}

TEST_F(RunReporterTest, AJobThatRunsAgainIsNotInTheSummaryYet) {
  failed_job("flaky", /*will_rerun=*/true, std::chrono::seconds(1));

  EXPECT_TRUE(m_reporter.finished().empty());
  EXPECT_NE(errors().find("running it again"), std::string::npos) << errors();
}

TEST_F(RunReporterTest, AJournalThatCannotBeWrittenIsSaidAndSoIsItsReturn) {
  m_reporter.journal_failing(Status::error("journal.jsonl: No space left on device"));
  EXPECT_EQ(count(errors(),
                  "journal.jsonl: No space left on device; no new job starts until it "
                  "can be written"),
            1u)
      << errors();
  m_reporter.journal_writable_again();
  m_console.flush();
  EXPECT_EQ(count(errors() + text_of(m_out), "the journal can be written again"), 1u);
}

TEST_F(RunReporterTest, AFailedHostIsNamed) {
  m_reporter.host_failed(m_fleet.hosts[0], Status::error("node01: connection refused"));

  EXPECT_EQ(m_reporter.failed_hosts(), std::vector<std::string>{"node01"});
  EXPECT_NE(errors().find("node01: connection refused: no jobs will run there"), std::string::npos)
      << errors();
}

}  // namespace
}  // namespace runner
