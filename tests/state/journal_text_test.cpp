// Strings keep their exact bytes through the journal, its reader and the
// replay that `--resume` runs from; valid UTF-8 stays a plain string.
#include "runner/state/journal_text.h"

#include <gtest/gtest.h>

#include <random>

#include "runner/state/journal.h"
#include "runner/state/journal_replay.h"
#include "runner/state/state_dir.h"
#include "support/temp_dir.h"
#include "support/value_of.h"

namespace runner {
namespace {

std::string random_bytes(std::minstd_rand& random, std::size_t size) {
  std::uniform_int_distribution<int> byte(0, 255);
  std::string bytes;
  for (std::size_t i = 0; i < size; ++i) bytes.push_back(static_cast<char>(byte(random)));
  return bytes;
}

TEST(JournalText, ArbitraryBytesComeBackFromTheJournalAndItsReplay) {
  testing::TempDir temp;
  std::string dir = temp.file("q.runner");
  EXPECT_TRUE(ensure_state_dir(dir).ok());
  std::minstd_rand random(11);
  std::vector<std::string> commands = {"caf\xe9", "\xff\xfe", std::string("nul\0byte", 8),
                                       "\xed\xa0\x80 surrogate", "\xc0\xaf overlong"};
  std::string every_byte;
  for (int i = 0; i < 256; ++i) every_byte.push_back(static_cast<char>(i));
  commands.push_back(every_byte);
  for (int i = 0; i < 50; ++i) commands.push_back(random_bytes(random, 1 + i * 7));
  {
    Journal journal = testing::value_of(Journal::open(dir));
    for (std::size_t i = 0; i < commands.size(); ++i) {
      JobStartRecord start;
      start.job = i + 1;
      start.command = commands[i];
      start.template_command = commands[i] + "<<x>>";
      start.host = "host\xe9";
      start.params = {{"x", commands[(i + 1) % commands.size()]}};
      start.cancel = commands[i];
      ASSERT_TRUE(journal.job_start(start));
    }
  }
  std::vector<nlohmann::json> records = testing::value_of(read_journal(journal_path(dir)));
  ASSERT_EQ(records.size(), commands.size());
  for (std::size_t i = 0; i < commands.size(); ++i) {
    EXPECT_EQ(journal_text(records[i], "command"), commands[i]) << i;
    EXPECT_EQ(journal_text(records[i]["params"], "x"), commands[(i + 1) % commands.size()]) << i;
  }
  std::vector<JournalRecord> typed;
  for (const nlohmann::json& record : records) typed.push_back(*record_from_json(record));
  JournalReplay replay = replay_journal(typed);
  ASSERT_EQ(replay.unfinished.size(), commands.size());
  for (std::size_t i = 0; i < commands.size(); ++i) {
    const UnfinishedJob& job = replay.unfinished[i];
    EXPECT_EQ(job.host, "host\xe9");
    EXPECT_EQ(job.start.template_command, commands[i] + "<<x>>") << i;
    EXPECT_EQ(job.start.cancel, commands[i]) << i;
  }
}

TEST(JournalText, ValidUtf8StaysAPlainStringAndOldJournalsRead) {
  EXPECT_EQ(exact_text("naïve ✓ 😀"), nlohmann::ordered_json("naïve ✓ 😀"));
  EXPECT_EQ(exact_text("caf\xe9").dump(), R"({"hex":"636166e9"})");
  EXPECT_EQ(journal_text(nlohmann::json::parse(R"("plain")")), "plain");
  EXPECT_EQ(journal_text(nlohmann::json::parse(R"({"hex":"636166E9"})")), "caf\xe9");
  EXPECT_EQ(journal_text(nlohmann::json::parse(R"({"hex":"6g"})")), "");
  EXPECT_EQ(journal_text(nlohmann::json(3)), "");
}

TEST(JournalText, Utf8CheckRejectsWhatJsonCannotHold) {
  EXPECT_TRUE(valid_utf8(""));
  EXPECT_TRUE(valid_utf8("\xf4\x8f\xbf\xbf"));   // U+10FFFF
  EXPECT_FALSE(valid_utf8("\xf4\x90\x80\x80"));  // above it
  EXPECT_FALSE(valid_utf8("\xe0\x80\xaf"));      // overlong
  EXPECT_FALSE(valid_utf8("\xed\xbf\xbf"));      // a surrogate
  EXPECT_FALSE(valid_utf8("\xe2\x9c"));          // cut short
  EXPECT_FALSE(valid_utf8("\x80"));
}

}  // namespace
}  // namespace runner
