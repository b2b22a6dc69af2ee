// The journal: records read back with their fields, job ids that continue
// across runs, and a journal cut short by a crash.
#include "runner/state/journal.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "runner/state/state_dir.h"
#include "support/temp_dir.h"
#include "support/value_of.h"

namespace runner {
namespace {

using nlohmann::json;

class JournalTest : public ::testing::Test {
 protected:
  JournalTest() : m_dir(m_temp.file("queue.runner")) { EXPECT_TRUE(ensure_state_dir(m_dir).ok()); }

  std::string journal_text() const { return m_temp.read("queue.runner/journal.jsonl"); }
  void append_raw(const std::string& text) const {
    std::ofstream out(journal_path(m_dir), std::ios::binary | std::ios::app);
    out << text;
  }

  testing::TempDir m_temp;
  std::string m_dir;
};

TEST_F(JournalTest, RecordsReadBackWithTheirFields) {
  std::string run;
  {
    Journal journal = testing::value_of(Journal::open(m_dir));
    run = journal.run_id();
    EXPECT_EQ(journal.path(), m_dir + "/journal.jsonl");
    JobId id = journal.next_job_id();
    EXPECT_EQ(id, 1u);
    EXPECT_TRUE(journal.run_start("queue", "hosts.yaml", "queue.yaml"));
    JobStartRecord start;
    start.job = id;
    start.command = "python bench.py --model 'llama 7B'";
    start.slot = "node01 gpu=2";
    start.host = "node01";
    start.slot_indices = {2};
    start.params = {{"model", "llama 7B"}, {"batch", "4"}};
    start.line = 3;
    EXPECT_TRUE(journal.job_start(start));
    EXPECT_TRUE(journal.job_pgid(id, {4242, "4a3f-7"}));
    JobExit exit = JobExit::exited(3);
    EXPECT_TRUE(journal.job_end(id, exit, std::chrono::milliseconds(1234)));
    JobExit killed = JobExit::killed("TERM");
    EXPECT_TRUE(journal.job_end(id, killed, std::chrono::milliseconds(5)));
    JobExit lost = JobExit::lost_because("connection to node01 dropped");
    EXPECT_TRUE(journal.job_end(id, lost, std::chrono::milliseconds(6)));
    EXPECT_TRUE(journal.host_failed("node02", "node02: authentication failed"));
    EXPECT_TRUE(journal.run_end("failed"));
    EXPECT_EQ(journal.waiting(), 0u);
  }
  std::vector<json> records = testing::value_of(read_journal(journal_path(m_dir)));
  ASSERT_EQ(records.size(), 8u);
  std::regex iso(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");
  for (const json& record : records) {
    EXPECT_TRUE(std::regex_match(record.at("time").get<std::string>(), iso)) << record;
  }

  EXPECT_EQ(records[0]["event"], "run_start");
  EXPECT_EQ(records[0]["run"], run);
  EXPECT_EQ(records[0]["pid"], static_cast<long>(getpid()));
  EXPECT_EQ(records[0]["mode"], "queue");
  EXPECT_EQ(records[0]["hosts_file"], "hosts.yaml");
  EXPECT_EQ(records[0]["queue_file"], "queue.yaml");

  EXPECT_EQ(records[1]["event"], "job_start");
  EXPECT_EQ(records[1]["job"], 1);
  EXPECT_EQ(records[1]["run"], run);
  EXPECT_EQ(records[1]["command"], "python bench.py --model 'llama 7B'");
  EXPECT_EQ(records[1]["slot"], "node01 gpu=2");
  EXPECT_EQ(records[1]["host"], "node01");
  EXPECT_EQ(records[1]["slot_index"], 2);
  EXPECT_FALSE(records[1].contains("slot_indices"));
  EXPECT_EQ(records[1]["params"], (json{{"model", "llama 7B"}, {"batch", "4"}}));
  EXPECT_EQ(records[1]["line"], 3);

  EXPECT_EQ(records[2]["event"], "job_pgid");
  EXPECT_EQ(records[2]["pgid"], 4242);
  EXPECT_EQ(records[2]["mark"], "4a3f-7");

  EXPECT_EQ(records[3]["event"], "job_end");
  EXPECT_EQ(records[3]["job"], 1);
  EXPECT_EQ(records[3]["exit"], 3);
  EXPECT_TRUE(records[3]["signal"].is_null());
  EXPECT_TRUE(records[3]["error"].is_null());
  EXPECT_EQ(records[3]["lost"], false);
  EXPECT_EQ(records[3]["duration_ms"], 1234);

  EXPECT_TRUE(records[4]["exit"].is_null());
  EXPECT_EQ(records[4]["signal"], "TERM");

  EXPECT_TRUE(records[5]["exit"].is_null());
  EXPECT_EQ(records[5]["lost"], true);
  EXPECT_EQ(records[5]["error"], "connection to node01 dropped");

  EXPECT_EQ(records[6]["event"], "host_failed");
  EXPECT_EQ(records[6]["host"], "node02");
  EXPECT_EQ(records[6]["message"], "node02: authentication failed");

  EXPECT_EQ(records[7]["event"], "run_end");
  EXPECT_EQ(records[7]["status"], "failed");
}

TEST_F(JournalTest, OneLinePerRecordEvenForMultiLineCommands) {
  Journal journal = testing::value_of(Journal::open(m_dir));
  JobStartRecord start;
  start.job = journal.next_job_id();
  start.command = "echo 'a\nb'\n";
  start.slot_indices = {0, 1};
  ASSERT_TRUE(journal.job_start(start));
  ASSERT_TRUE(journal.run_end("ok"));
  std::string text = journal_text();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
  EXPECT_EQ(text.rfind("{\"event\":\"job_start\",\"time\":", 0), 0u) << text;
  std::vector<json> records = testing::value_of(read_journal(journal.path()));
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["command"], "echo 'a\nb'\n");
  EXPECT_EQ(records[0]["slot_index"], 0);
  EXPECT_EQ(records[0]["slot_indices"], (json{0, 1}));
}

TEST_F(JournalTest, InvalidUtf8IsWrittenNotThrown) {
  Journal journal = testing::value_of(Journal::open(m_dir));
  JobStartRecord start;
  start.job = journal.next_job_id();
  start.command = "printf '\xff\xfe'";
  EXPECT_TRUE(journal.job_start(start));
  EXPECT_EQ(testing::value_of(read_journal(journal.path())).size(), 1u);
}

TEST_F(JournalTest, JobIdsContinueAcrossRuns) {
  {
    Journal journal = testing::value_of(Journal::open(m_dir));
    EXPECT_EQ(journal.next_job_id(), 1u);
    EXPECT_EQ(journal.next_job_id(), 2u);
    JobStartRecord start;
    start.job = 2;
    EXPECT_TRUE(journal.job_start(start));
    EXPECT_TRUE(journal.job_end(2, JobExit{}, std::chrono::milliseconds(1)));
  }
  {
    Journal journal = testing::value_of(Journal::open(m_dir, /*durable=*/true));
    EXPECT_EQ(journal.next_job_id(), 3u);
    JobStartRecord start;
    start.job = 40;
    EXPECT_TRUE(journal.job_start(start));
  }
  Journal journal = testing::value_of(Journal::open(m_dir));
  EXPECT_EQ(journal.next_job_id(), 41u);
  EXPECT_EQ(journal.next_job_id(), 42u);
}

TEST_F(JournalTest, OnlyTheRecordsOwnJobFieldCounts) {
  {
    Journal journal = testing::value_of(Journal::open(m_dir));
    JobStartRecord start;
    start.job = 8;
    start.command = R"(echo '{"job":9000}')";
    start.params = {{"job", "7000"}};
    EXPECT_TRUE(journal.job_start(start));
  }
  Journal journal = testing::value_of(Journal::open(m_dir));
  EXPECT_EQ(journal.next_job_id(), 9u);
}

TEST_F(JournalTest, RunIdsDiffer) {
  Journal first = testing::value_of(Journal::open(m_dir));
  Journal second = testing::value_of(Journal::open(m_dir));
  EXPECT_EQ(first.run_id().size(), 8u);
  EXPECT_NE(first.run_id(), second.run_id());
}

TEST_F(JournalTest, TruncatedLastLineIsTolerated) {
  {
    Journal journal = testing::value_of(Journal::open(m_dir));
    JobStartRecord start;
    start.job = 5;
    EXPECT_TRUE(journal.job_start(start));
  }
  // A crash in the middle of a record (written by hand: the journal never
  // writes half a line itself) that also mentions a larger job id.
  append_raw(R"({"event":"job_start","time":"2024-01-01T00:00:00.000Z","job":99,"comm)");
  std::vector<std::string> skipped;
  std::vector<json> records = testing::value_of(read_journal(journal_path(m_dir), &skipped));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["job"], 5);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0], journal_path(m_dir) +
                            " line 2: not a whole record (cut short when it was written); skipped");

  {
    Journal journal = testing::value_of(Journal::open(m_dir));
    // Job 99 may have run before the crash: its id is not handed out again.
    EXPECT_EQ(journal.next_job_id(), 100u);
    EXPECT_TRUE(journal.run_end("ok"));
  }
  records = testing::value_of(read_journal(journal_path(m_dir)));
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1]["event"], "run_end");
}

TEST_F(JournalTest, RecordGluedToOneCutShortIsKept) {
  // What older versions left after a full disk.
  append_raw(R"({"event":"job_end","time":"2024-01-01T00:00:00.000Z","job":1,"ex)"
             R"({"event":"job_start","time":"2024-01-01T00:00:01.000Z","job":2})"
             "\n");
  std::vector<std::string> skipped;
  std::vector<json> records = testing::value_of(read_journal(journal_path(m_dir), &skipped));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["job"], 2);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find("line 1: a record cut short"), std::string::npos) << skipped[0];
}

TEST_F(JournalTest, LargeJournalIsScannedWhole) {
  std::string text;
  for (int id = 1; id <= 5000; ++id) {
    text += R"({"event":"job_end","time":"2024-01-01T00:00:00.000Z","job":)" + std::to_string(id) +
            R"(,"exit":0,"signal":null,"error":null,"lost":false,)" +
            R"("duration_ms":10,"pad":")" + std::string(200, 'p') + "\"}\n";
  }
  append_raw(text);
  Journal journal = testing::value_of(Journal::open(m_dir));
  EXPECT_GT(text.size(), std::size_t{1} << 20);  // more than one read
  EXPECT_EQ(journal.next_job_id(), 5001u);
  EXPECT_EQ(testing::value_of(read_journal(journal.path())).size(), 5000u);
}

TEST_F(JournalTest, MissingJournalHasNoRecords) {
  EXPECT_TRUE(testing::value_of(read_journal(m_temp.file("nowhere/journal.jsonl"))).empty());
}

TEST_F(JournalTest, UnopenableJournalSaysWhy) {
  std::string dir = m_temp.file("no/such/dir");
  Result<Journal> journal = Journal::open(dir);
  ASSERT_FALSE(journal.ok());
  EXPECT_EQ(journal.status().message(),
            "cannot open the journal " + dir + "/journal.jsonl: No such file or directory");
}

TEST(JournalTime, FormatsUtcWithMilliseconds) {
  using namespace std::chrono;
  system_clock::time_point time{milliseconds(1714566896789)};
  EXPECT_EQ(format_utc_time(time), "2024-05-01T12:34:56.789Z");
  EXPECT_EQ(format_utc_time(system_clock::time_point{}), "1970-01-01T00:00:00.000Z");
}

}  // namespace
}  // namespace runner

namespace runner {
namespace {

TEST_F(JournalTest, AJobThatSpansHostsRecordsEveryRank) {
  Journal journal = testing::value_of(Journal::open(m_dir));
  JobStartRecord start;
  start.job = 4;
  start.command = "train 0";
  start.nodes = 2;
  start.tasks = {{0, "a", "a gpu=0", {0}, "train 0"}, {1, "b", "b gpu=1", {1}, "train 1"}};
  ASSERT_TRUE(journal.job_start(start).ok());
  ASSERT_TRUE(journal.job_pgid(4, {100, "m"}, 1).ok());
  ASSERT_TRUE(journal.job_end(4, JobExit::exited(3), std::chrono::milliseconds(5), false, 1).ok());
  ASSERT_TRUE(journal.job_end(5, JobExit::exited(0), std::chrono::milliseconds(5)).ok());
  std::vector<json> records = testing::value_of(read_journal(journal.path()));
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0]["nodes"], 2);
  EXPECT_EQ(records[0]["tasks"][1],
            (json{{"rank", 1}, {"host", "b"}, {"slot", "b gpu=1"}, {"slot_indices", {1}},
                  {"command", "train 1"}}));
  EXPECT_EQ(records[1]["rank"], 1);
  EXPECT_EQ(records[2]["failed_rank"], 1);
  EXPECT_FALSE(records[3].contains("failed_rank"));
}

}  // namespace
}  // namespace runner
