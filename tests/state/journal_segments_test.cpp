// The journal's segments: the writer seals the live file past its size
// limit, readers read every segment in order and go on from a position
// across rotations, job ids continue, a rotation that fails is said and
// loses nothing, and a line that is not a whole record is skipped and said.
#include "runner/state/journal_segments.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "runner/state/journal.h"
#include "runner/state/journal_checkpoint.h"
#include "runner/state/journal_record_stream.h"
#include "runner/state/state_dir.h"
#include "support/failing_file_system.h"
#include "support/temp_dir.h"
#include "support/value_of.h"

namespace runner {
namespace {

using Operation = testing::FailingFileSystem::Operation;

class JournalSegments : public ::testing::Test {
 protected:
  JournalSegments() : m_dir(m_temp.file("queue.runner")) {
    EXPECT_TRUE(ensure_state_dir(m_dir).ok());
  }

  // Writes one job's start and end, and (`seal`) seals the live file when
  // the writer says it is time, as the run's checkpoint does.
  static void run_job(Journal& journal, bool seal = true) {
    JobStartRecord start;
    start.job = journal.next_job_id();
    start.command = "train --seed " + std::to_string(start.job);
    start.slot = "node01 gpu=0";
    start.host = "node01";
    ASSERT_TRUE(journal.job_start(start));
    ASSERT_TRUE(journal.job_end(start.job, JobExit::exited(0), std::chrono::milliseconds(5)));
    ASSERT_TRUE(journal.sync());
    if (seal && journal.wants_rotation()) {
      ASSERT_TRUE(journal.rotate());
    }
  }

  std::vector<JobId> job_ids(const std::vector<nlohmann::json>& records) const {
    std::vector<JobId> ids;
    for (const nlohmann::json& record : records)
      if (record.value("event", "") == "job_start") ids.push_back(record.value("job", JobId(0)));
    return ids;
  }

  std::vector<JobId> one_to(JobId last) const {
    std::vector<JobId> ids;
    for (JobId id = 1; id <= last; ++id) ids.push_back(id);
    return ids;
  }

  testing::TempDir m_temp;
  std::string m_dir;
};

TEST_F(JournalSegments, TheWriterSealsSegmentsAndTheReaderReadsThemAllInOrder) {
  Journal journal =
      testing::value_of(Journal::open(m_dir, false, real_file_system(), /*segment_bytes=*/600));
  ASSERT_TRUE(journal.run_start("queue", "hosts.yaml", "queue.yaml"));
  for (int i = 0; i < 12; ++i) run_job(journal);
  std::vector<std::uint64_t> sealed = testing::value_of(list_sealed_segments(m_dir));
  ASSERT_GE(sealed.size(), 3u);
  EXPECT_EQ(sealed.front(), 1u);
  EXPECT_EQ(sealed.back(), sealed.size());
  for (std::uint64_t number : sealed)
    EXPECT_TRUE(std::filesystem::exists(m_dir + fmt::format("/journal/{:06}.jsonl", number)));
  std::optional<JournalRead> read = testing::value_of(read_journal_from(m_dir));
  ASSERT_TRUE(read);
  EXPECT_EQ(read->records.front().value("event", ""), "run_start");
  EXPECT_EQ(job_ids(read->records), one_to(12));
  EXPECT_EQ(read->records.size(), 1u + 2 * 12);
}

// More records than are read ahead, across segments, with a line that is
// not a record among them: each typed record arrives once, in order, and
// the line is said as a plain reading says it.
TEST_F(JournalSegments, FoldingReadsEveryRecordInOrderOnAThreadOfItsOwn) {
  Journal journal =
      testing::value_of(Journal::open(m_dir, false, real_file_system(), /*segment_bytes=*/64 * 1024));
  ASSERT_TRUE(journal.run_start("queue", "hosts.yaml", "queue.yaml"));
  for (JobId id = 1; id <= 6000; ++id) {
    JobStartRecord start;
    start.job = id;
    start.command = "true";
    ASSERT_TRUE(journal.job_start(start));
    ASSERT_TRUE(journal.job_end(id, JobExit::exited(0), std::chrono::milliseconds(5)));
    if (id % 100 != 0) continue;
    ASSERT_TRUE(journal.sync());
    if (journal.wants_rotation()) ASSERT_TRUE(journal.rotate());
  }
  std::ofstream(journal_path(m_dir), std::ios::app) << "not a record\n";
  ASSERT_GE(testing::value_of(list_sealed_segments(m_dir)).size(), 3u);
  std::vector<JobId> started;
  std::size_t ends = 0;
  auto read = testing::value_of(fold_journal_records(m_dir, [&](const JournalRecord& record) {
    if (const auto* start = std::get_if<JobStartRecord>(&record)) started.push_back(start->job);
    if (const auto* end = std::get_if<JobEndRecord>(&record)) {
      EXPECT_EQ(end->job, started.empty() ? 0 : started.back());
      ++ends;
    }
  }));
  EXPECT_EQ(started, one_to(6000));
  EXPECT_EQ(ends, 6000u);
  ASSERT_TRUE(read.has_value());
  ASSERT_EQ(read->skipped.size(), 1u);
  EXPECT_NE(read->skipped[0].find("journal.jsonl line"), std::string::npos) << read->skipped[0];
}

TEST_F(JournalSegments, AReadingGoesOnFromItsPositionAcrossRotations) {
  Journal journal = testing::value_of(Journal::open(m_dir, false, real_file_system(), 600));
  for (int i = 0; i < 3; ++i) run_job(journal);
  std::optional<JournalRead> first = testing::value_of(read_journal_from(m_dir));
  ASSERT_TRUE(first);
  EXPECT_EQ(job_ids(first->records), one_to(3));
  for (int i = 0; i < 9; ++i) run_job(journal);
  std::optional<JournalRead> next = testing::value_of(read_journal_from(m_dir, first->end));
  ASSERT_TRUE(next);
  EXPECT_EQ(job_ids(next->records), std::vector<JobId>({4, 5, 6, 7, 8, 9, 10, 11, 12}));
  std::optional<JournalRead> nothing = testing::value_of(read_journal_from(m_dir, next->end));
  ASSERT_TRUE(nothing);
  EXPECT_TRUE(nothing->records.empty());
}

TEST_F(JournalSegments, APositionInAnotherJournalIsRefused) {
  {
    Journal journal = testing::value_of(Journal::open(m_dir));
    for (int i = 0; i < 3; ++i) run_job(journal);
  }
  std::optional<JournalRead> read = testing::value_of(read_journal_from(m_dir));
  ASSERT_TRUE(read);
  // Another journal of the same length in its place.
  std::string text = m_temp.read("queue.runner/journal.jsonl");
  std::string other = text;
  other[other.size() - 3] = other[other.size() - 3] == '1' ? '2' : '1';
  m_temp.write("queue.runner/journal.jsonl", other);
  EXPECT_FALSE(testing::value_of(read_journal_from(m_dir, read->end)));
  // A shorter one.
  m_temp.write("queue.runner/journal.jsonl", text.substr(0, text.size() / 2));
  EXPECT_FALSE(testing::value_of(read_journal_from(m_dir, read->end)));
  // Its own again.
  m_temp.write("queue.runner/journal.jsonl", text);
  EXPECT_TRUE(testing::value_of(read_journal_from(m_dir, read->end)));
}

// The sealed segments' folder replaced by a file: the rotation cannot list
// it, says so, and the run's journal goes on in the live file.
TEST_F(JournalSegments, ARotationThatCannotListTheSealedSegmentsIsSaid) {
  Journal journal = testing::value_of(Journal::open(m_dir, false, real_file_system(), 1));
  run_job(journal, false);
  ASSERT_TRUE(journal.wants_rotation());
  m_temp.write("queue.runner/journal", "not a folder");
  Status sealed = journal.rotate();
  ASSERT_FALSE(sealed.ok());
  EXPECT_EQ(sealed.message(), "cannot read " + sealed_segments_dir(m_dir) + ": Not a directory");
  std::filesystem::remove(sealed_segments_dir(m_dir));
  run_job(journal, false);
  EXPECT_TRUE(journal.rotate());
  std::optional<JournalRead> read = testing::value_of(read_journal_from(m_dir));
  ASSERT_TRUE(read);
  EXPECT_EQ(job_ids(read->records), one_to(2));
}

TEST_F(JournalSegments, JobIdsContinueWhenTheLiveFileWasJustSealed) {
  {
    Journal journal = testing::value_of(Journal::open(m_dir, false, real_file_system(), 1));
    for (int i = 0; i < 4; ++i) run_job(journal);
  }
  ASSERT_EQ(std::filesystem::file_size(journal_path(m_dir)), 0u);
  Journal again = testing::value_of(Journal::open(m_dir));
  EXPECT_EQ(again.next_job_id(), 5u);
}

TEST_F(JournalSegments, ARotationThatFailsIsSaidAndTheJournalGoesOn) {
  testing::FailingFileSystem files;
  Journal journal = testing::value_of(Journal::open(m_dir, false, files, 1));
  run_job(journal, false);
  ASSERT_TRUE(journal.wants_rotation());
  files.fail(Operation::rename, "journal.jsonl", EACCES);
  Status sealed = journal.rotate();
  ASSERT_FALSE(sealed.ok());
  EXPECT_NE(sealed.message().find("cannot seal the journal"), std::string::npos)
      << sealed.message();
  EXPECT_NE(sealed.message().find("Permission denied"), std::string::npos) << sealed.message();
  run_job(journal, false);
  files.heal();
  EXPECT_TRUE(journal.rotate());
  run_job(journal, false);
  std::optional<JournalRead> read = testing::value_of(read_journal_from(m_dir));
  ASSERT_TRUE(read);
  EXPECT_EQ(job_ids(read->records), one_to(3));
  EXPECT_EQ(testing::value_of(list_sealed_segments(m_dir)), std::vector<std::uint64_t>({1}));
}

TEST_F(JournalSegments, EachSealedSegmentSaysWhichJobsItHoldsAndAReaderSkipsTheOthers) {
  {
    Journal journal = testing::value_of(Journal::open(m_dir, false, real_file_system(), 600));
    ASSERT_TRUE(journal.run_start("queue", "hosts.yaml", "queue.yaml"));
    for (int i = 0; i < 12; ++i) run_job(journal);
    ASSERT_TRUE(journal.job_pgid(5, {4242, "m"}));  // a late record of an early job
  }
  std::vector<std::uint64_t> sealed = testing::value_of(list_sealed_segments(m_dir));
  ASSERT_GE(sealed.size(), 3u);
  for (std::uint64_t number : sealed) {
    std::optional<SegmentIndex> index = read_segment_index(m_dir, number);
    ASSERT_TRUE(index) << number;
    std::set<JobId> held;
    bool runs = false;
    for (const nlohmann::json& record :
         testing::value_of(read_journal(sealed_segment_path(m_dir, number)))) {
      if (record.contains("job")) held.insert(record["job"].get<JobId>());
      runs = runs || record.value("event", "").rfind("run_", 0) == 0;
    }
    EXPECT_EQ(index->runs, runs) << number;
    for (JobId id = 1; id <= 13; ++id) EXPECT_EQ(index->mentions(id), held.count(id) == 1) << id;
  }
  auto about_5 = [](const SegmentIndex& index) { return index.mentions(5); };
  std::optional<JournalRead> some = testing::value_of(read_journal_from(m_dir, {}, {}, about_5));
  std::optional<JournalRead> all = testing::value_of(read_journal_from(m_dir));
  ASSERT_TRUE(some && all);
  auto records_of_5 = [](const std::vector<nlohmann::json>& records) {
    std::vector<nlohmann::json> of_5;
    for (const nlohmann::json& record : records)
      if (record.value("job", 0) == 5) of_5.push_back(record);
    return of_5;
  };
  EXPECT_EQ(records_of_5(some->records), records_of_5(all->records));
  EXPECT_EQ(records_of_5(all->records).size(), 3u);
  EXPECT_LT(some->records.size(), all->records.size() / 2);
}

TEST_F(JournalSegments, ACheckpointKeepsItsPositionByteForByte) {
  JournalCheckpoint checkpoint;
  // The bytes before a position can end in the middle of a character.
  checkpoint.position = {3, 4096, "\"command\":\"caf\xc3"};
  checkpoint.records = {RunStartRecord{"2024-05-01T10:00:00.000Z", "r1"}};
  checkpoint.summary = {{"runs", nlohmann::json::object()}};
  checkpoint.skipped = {"journal.jsonl line 2: not a whole record"};
  ASSERT_TRUE(save_journal_checkpoint(m_dir, checkpoint));
  std::optional<JournalCheckpoint> loaded = load_journal_checkpoint(m_dir);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->position.segment, 3u);
  EXPECT_EQ(loaded->position.offset, 4096u);
  EXPECT_EQ(loaded->position.before, checkpoint.position.before);
  EXPECT_EQ(loaded->records, checkpoint.records);
  EXPECT_EQ(loaded->summary, checkpoint.summary);
  EXPECT_EQ(loaded->skipped, checkpoint.skipped);
  // Anything else in its place is no checkpoint.
  m_temp.write("queue.runner/journal.checkpoint", "{\"version\":1}\n");
  EXPECT_FALSE(load_journal_checkpoint(m_dir));
}

TEST_F(JournalSegments, ALineStillBeingWrittenIsReadButNotPassed) {
  m_temp.write(
      "queue.runner/journal.jsonl",
      "{\"event\":\"job_pgid\",\"time\":\"2024-05-01T10:00:00.000Z\",\"job\":1,\"pgid\":7}\n"
      "{\"event\":\"job_pgid\",\"time\":\"2024-05-01T10:00:00.000Z\",\"job\":2,\"pgid\":8}");
  std::optional<JournalRead> read = testing::value_of(read_journal_from(m_dir));
  ASSERT_TRUE(read);
  EXPECT_EQ(read->records.size(), 2u);
  EXPECT_TRUE(read->unterminated_tail);
  std::ofstream(journal_path(m_dir), std::ios::app) << "\n";
  std::optional<JournalRead> next = testing::value_of(read_journal_from(m_dir, read->end));
  ASSERT_TRUE(next);
  ASSERT_EQ(next->records.size(), 1u);
  EXPECT_EQ(next->records[0].value("job", 0), 2);
  EXPECT_FALSE(next->unterminated_tail);
}

TEST_F(JournalSegments, ASinkTakesEachRecordWithTheBytesItWasParsedFrom) {
  const std::string first = R"({"event":"job_pgid","job":1,"pgid":7})";
  const std::string glued = R"({"event":"job_pgid","job":2,"pgid":8})";
  const std::string last = R"({"event":"job_pgid","job":3,"pgid":9})";
  m_temp.write("queue.runner/journal.jsonl", first + "\n{\"event\":\"job_end\",\"jo\n" +
                                                 "{\"event\":\"job_e" + glued + "\n" + last);
  std::vector<std::pair<JobId, std::string>> taken;
  std::optional<JournalRead> read = testing::value_of(read_journal_from(
      m_dir, {}, {}, {}, SIZE_MAX, [&](nlohmann::json&& record, std::string_view text) {
        taken.emplace_back(record.value("job", JobId(0)), std::string(text));
      }));
  ASSERT_TRUE(read);
  EXPECT_TRUE(read->records.empty());
  EXPECT_EQ(read->record_count, 3u);
  std::vector<std::pair<JobId, std::string>> expected{{1, first}, {2, glued}, {3, last}};
  EXPECT_EQ(taken, expected);
  EXPECT_EQ(read->skipped.size(), 2u);
  EXPECT_TRUE(read->unterminated_tail);
}

TEST(JournalLine, AWholeRecordIsReadAndNothingSkipped) {
  JournalLine line = parse_journal_line(R"({"event":"job_end","job":4})");
  ASSERT_TRUE(line.record);
  EXPECT_EQ((*line.record)["job"], 4);
  EXPECT_EQ(line.skipped, "");
}

TEST(JournalLine, ARecordCutShortIsSkippedAndSaidSo) {
  JournalLine line = parse_journal_line(R"({"event":"job_end","jo)");
  EXPECT_FALSE(line.record);
  EXPECT_EQ(line.skipped, "not a whole record (cut short when it was written); skipped");
}

TEST(JournalLine, ARecordGluedBehindOneCutShortIsKeptAndTheCutOneSkipped) {
  JournalLine line =
      parse_journal_line(R"({"event":"job_end","jo{"event":"job_start","job":5})");
  ASSERT_TRUE(line.record);
  EXPECT_EQ((*line.record)["job"], 5);
  EXPECT_EQ(line.skipped,
            "a record cut short when it was written, with the next one glued to it; skipped the "
            "cut one");
}

TEST(JournalLine, AnEmptyLineHoldsNothingAndSkipsNothing) {
  JournalLine line = parse_journal_line("");
  EXPECT_FALSE(line.record);
  EXPECT_EQ(line.skipped, "");
}

}  // namespace
}  // namespace runner
