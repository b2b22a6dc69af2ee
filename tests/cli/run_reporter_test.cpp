// What a run records and shows as the scheduler reports to it: the journal's
// records, the job logs, the terminal's notes, the summary's jobs and slot
// usage, and a journal that cannot be written said once until it can again.
#include "runner/cli/run_reporter.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "runner/state/state_dir.h"
#include "support/failing_file_system.h"
#include "support/temp_dir.h"
#include "support/value_of.h"

namespace runner {
namespace {

using testing::FailingFileSystem;
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

// A reporter of a run on two slots of one host, into a state directory
// whose file operations a test may fail.
class RunReporterTest : public ::testing::Test {
 protected:
  RunReporterTest()
      : m_fleet(value_of(parse_hosts("- hostname: node01\n  gpu: [0, 1]\n", "hosts.yaml"))),
        m_out(std::tmpfile()),
        m_err(std::tmpfile()),
        m_console(m_out, m_err, ColorMode::never),
        m_journal(value_of(Journal::open(state_dir(m_dir), false, m_files))),
        m_logs(m_dir.path()),
        m_reporter(m_fleet, m_console, m_journal, m_logs) {}
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
    Job job = running_job(m_journal.next_job_id(), 0, command);
    m_reporter.job_launched(job);
    job.state = Done{will_rerun, {}, false};
    m_reporter.job_finished(job, JobExit::exited(1), took);
    return job;
  }

  // Whether the journal's last record is a job_end that sends its job back.
  std::optional<bool> last_end_reruns() const {
    std::vector<JournalRecord> written = records();
    const auto* ended = written.empty() ? nullptr : std::get_if<JobEndRecord>(&written.back());
    if (!ended) return std::nullopt;
    return ended->rerun;
  }

  // The journal's records, in order.
  std::vector<JournalRecord> records() const {
    std::ifstream in(m_dir.file("journal.jsonl"));
    std::vector<JournalRecord> read;
    for (std::string line; std::getline(in, line);) read.push_back(value_of(read_record(line)));
    return read;
  }

  std::string errors() { return text_of(m_err); }

  TempDir m_dir;
  Fleet m_fleet;
  std::FILE* m_out;
  std::FILE* m_err;
  Console m_console;
  FailingFileSystem m_files;
  Journal m_journal;
  JobLogs m_logs;
  RunReporter m_reporter;
};

TEST_F(RunReporterTest, ALaunchedJobIsRecordedWithItsSlotAndGetsALogAndANote) {
  Job job = running_job(m_journal.next_job_id(), 1, "train --lr 0.1");
  m_reporter.job_launched(job);
  m_reporter.task_output(job, job.tasks[0], OutputStream::out, "epoch 1\n");
  m_reporter.flush_logs();

  std::vector<JournalRecord> written = records();
  ASSERT_EQ(written.size(), 1u);
  const auto* start = std::get_if<JobStartRecord>(&written[0]);
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(start->job, job.id);
  EXPECT_EQ(start->host, "node01");
  EXPECT_EQ(start->slot, m_fleet.slots[1].label);
  EXPECT_EQ(start->slot_indices, std::vector<int>{1});
  EXPECT_EQ(start->command, "train --lr 0.1");
  EXPECT_EQ(start->params, (Params{{"lr", "0.1"}}));

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
  EXPECT_EQ(last_end_reruns(), false);
  EXPECT_NE(errors().find("failed"), std::string::npos) << errors();
}

TEST_F(RunReporterTest, AJobThatRunsAgainIsNotInTheSummaryYet) {
  failed_job("flaky", /*will_rerun=*/true, std::chrono::seconds(1));

  EXPECT_TRUE(m_reporter.finished().empty());
  EXPECT_EQ(last_end_reruns(), true);
  EXPECT_NE(errors().find("running it again"), std::string::npos) << errors();
}

TEST_F(RunReporterTest, AJournalThatCannotBeWrittenIsSaidOnceUntilItCanAgain) {
  m_files.fail(FailingFileSystem::Operation::write, "journal.jsonl", ENOSPC);
  Job first = running_job(m_journal.next_job_id(), 0, "one");
  Job second = running_job(m_journal.next_job_id(), 1, "two");
  m_reporter.job_launched(first);
  m_reporter.job_launched(second);
  EXPECT_FALSE(m_reporter.checkpoint().ok());
  EXPECT_EQ(count(errors(), "no new job starts until it can be written"), 1u) << errors();

  m_files.heal();
  EXPECT_TRUE(m_reporter.checkpoint().ok());
  EXPECT_EQ(count(errors(), "the journal can be written again"), 1u) << errors();
  EXPECT_EQ(records().size(), 2u);
}

TEST_F(RunReporterTest, AFailedHostIsNamedAndRecorded) {
  m_reporter.host_failed(m_fleet.hosts[0], Status::error("node01: connection refused"));

  EXPECT_EQ(m_reporter.failed_hosts(), std::vector<std::string>{"node01"});
  EXPECT_NE(errors().find("node01: connection refused: no jobs will run there"), std::string::npos)
      << errors();
  std::vector<JournalRecord> written = records();
  ASSERT_EQ(written.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<HostFailedRecord>(written[0]));
}

TEST_F(RunReporterTest, AJobTakenAheadIsRecordedAndWaitsUntilItIsLaunched) {
  Job ahead;
  ahead.id = m_journal.next_job_id();
  ahead.spec.command = "train <<lr>>";
  ahead.spec.params = {{"lr", "0.1"}};
  ahead.spec.line = 7;
  ahead.spec.retries = 2;
  m_reporter.job_taken_ahead(ahead);
  EXPECT_EQ(m_reporter.taken_ahead_waiting(), 1u);
  ASSERT_TRUE(m_reporter.checkpoint().ok());
  std::vector<JournalRecord> written = records();
  ASSERT_EQ(written.size(), 1u);
  const auto& taken = std::get<JobTakenAheadRecord>(written[0]);
  EXPECT_EQ(taken.job, ahead.id);
  EXPECT_EQ(taken.template_command, "train <<lr>>");
  EXPECT_EQ(taken.params, ahead.spec.params);
  EXPECT_EQ(taken.line, 7);
  EXPECT_EQ(taken.retries, 2);

  m_reporter.job_launched(running_job(ahead.id, 0, "train 0.1"));
  EXPECT_EQ(m_reporter.taken_ahead_waiting(), 0u);
}

}  // namespace
}  // namespace runner
