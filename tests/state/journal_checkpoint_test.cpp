// The journal's checkpoint file: what is saved loads back as it was, its
// records written as the journal writes them, and a checkpoint that the
// version before typed records wrote (each record dumped by nlohmann::json,
// its keys in alphabetical order) is read with every record.
#include "runner/state/journal_checkpoint.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "support/temp_dir.h"

namespace runner {
namespace {

using nlohmann::json;

// The lines of the journal captured from the writer before its records had
// types of their own: every kind of record, with every field.
std::vector<std::string> journal_lines_of_every_record() {
  std::ifstream file(
      std::string(RUNNER_SOURCE_DIR) + "/tests/state/data/journal_of_every_record.jsonl",
      std::ios::binary);
  EXPECT_TRUE(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(file, line);) lines.push_back(line);
  return lines;
}

std::vector<JournalRecord> records_of(const std::vector<std::string>& lines) {
  std::vector<JournalRecord> records;
  for (const std::string& line : lines) {
    Result<JournalRecord> record = read_record(line);
    EXPECT_TRUE(record.ok()) << line;
    if (record) records.push_back(std::move(*record));
  }
  return records;
}

JournalCheckpoint checkpoint_of(std::vector<JournalRecord> records) {
  JournalCheckpoint checkpoint;
  checkpoint.position = {3, 4096, "\"rerun\":false}\n"};
  checkpoint.records = std::move(records);
  checkpoint.summary = {{"runs", {{"b3a18307", {{"done", 2}}}}}};
  checkpoint.skipped = {"journal.jsonl line 3: not a record"};
  return checkpoint;
}

void expect_same(const JournalCheckpoint& read, const JournalCheckpoint& saved) {
  EXPECT_EQ(read.position.segment, saved.position.segment);
  EXPECT_EQ(read.position.offset, saved.position.offset);
  EXPECT_EQ(read.position.before, saved.position.before);
  EXPECT_EQ(read.summary, saved.summary);
  EXPECT_EQ(read.skipped, saved.skipped);
  ASSERT_EQ(read.records.size(), saved.records.size());
  for (std::size_t i = 0; i < saved.records.size(); ++i)
    EXPECT_TRUE(read.records[i] == saved.records[i]) << journal_line(saved.records[i]);
}

TEST(JournalCheckpoint, ASavedCheckpointLoadsBackWithItsRecordsAsTheJournalWritesThem) {
  testing::TempDir dir;
  std::vector<std::string> lines = journal_lines_of_every_record();
  JournalCheckpoint saved = checkpoint_of(records_of(lines));
  ASSERT_TRUE(save_journal_checkpoint(dir.path(), saved).ok());

  std::optional<JournalCheckpoint> read = load_journal_checkpoint(dir.path());
  ASSERT_TRUE(read);
  expect_same(*read, saved);
  // After its header, the file holds the journal's own lines.
  std::string text = dir.read("journal.checkpoint");
  std::string records = text.substr(text.find('\n') + 1);
  std::string journal;
  for (const std::string& line : lines) journal += line + "\n";
  EXPECT_EQ(records, journal);
}

TEST(JournalCheckpoint, ACheckpointTheVersionBeforeTypedRecordsWroteIsRead) {
  testing::TempDir dir;
  std::vector<std::string> lines = journal_lines_of_every_record();
  JournalCheckpoint expected = checkpoint_of(records_of(lines));
  auto dumped = [](const json& value) {
    return value.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  };
  std::string text = dumped({{"version", 1},
                             {"segment", expected.position.segment},
                             {"offset", expected.position.offset},
                             {"before", expected.position.before},
                             {"summary", expected.summary},
                             {"skipped", expected.skipped}});
  for (const std::string& line : lines) text += dumped(json::parse(line));
  ASSERT_NE(text.find("\n{\"attempt\":"), std::string::npos) << "keys not in alphabetical order";
  dir.write("journal.checkpoint", text);

  std::optional<JournalCheckpoint> read = load_journal_checkpoint(dir.path());
  ASSERT_TRUE(read) << "refused:\n" << text;
  expect_same(*read, expected);
}

TEST(JournalCheckpoint, ACheckpointWithALineThatIsNotARecordIsNone) {
  testing::TempDir dir;
  ASSERT_TRUE(save_journal_checkpoint(dir.path(), checkpoint_of({})).ok());
  std::string text = dir.read("journal.checkpoint");
  dir.write("journal.checkpoint", text + "{\"event\":\"job_end\",\"job\":\n");
  EXPECT_FALSE(load_journal_checkpoint(dir.path()));
  dir.write("journal.checkpoint", text + "[1, 2]\n");
  EXPECT_FALSE(load_journal_checkpoint(dir.path()));
  dir.write("journal.checkpoint", text);
  EXPECT_TRUE(load_journal_checkpoint(dir.path()));
}

}  // namespace
}  // namespace runner
