// A journal line is read into the same record, of the same types, as
// nlohmann::json reads it, whichever parser took it: lines as runner
// writes them, and the numbers, escapes and bytes where simdjson and
// nlohmann::json could differ.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "runner/state/journal_segments.h"

namespace runner {
namespace {

using nlohmann::json;

// Whether `a` and `b` are equal, with the same type at every place
// (an unsigned 0 is equal to a signed one).
bool same(const json& a, const json& b) {
  if (a.type() != b.type() || a != b) return false;
  if (a.is_object())
    for (auto it = a.begin(); it != a.end(); ++it)
      if (!same(*it, b.at(it.key()))) return false;
  if (a.is_array())
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!same(a[i], b[i])) return false;
  return true;
}

void expect_read_as_nlohmann_reads(const std::string& line) {
  SCOPED_TRACE(line);
  json expected = json::parse(line, nullptr, false);
  JournalLine read = parse_journal_line(line);
  // Only an object is a record.
  if (!expected.is_object()) {
    EXPECT_FALSE(read.record);
    return;
  }
  ASSERT_TRUE(read.record);
  EXPECT_TRUE(same(*read.record, expected)) << read.record->dump() << " vs " << expected.dump();
  EXPECT_EQ(read.record->dump(), expected.dump());
}

TEST(JournalRecordParse, ReadsWhatRunnerWritesAsNlohmannJsonDoes) {
  expect_read_as_nlohmann_reads(
      R"({"event":"job_start","time":"2026-03-02T09:08:14.417Z","job":6172,"run":"5eed0001",)"
      R"("command":"python train.py --seed 6172","slot":"node086 #0","host":"node086",)"
      R"("slot_index":0,"params":{"model":"bert-base","lr":"0.0003"},"line":1,"attempt":1})");
  expect_read_as_nlohmann_reads(
      R"({"event":"job_end","time":"2026-03-02T09:08:14.562Z","job":5298,"exit":0,"signal":null,)"
      R"("error":null,"lost":false,"timed_out":false,"cancelled":true,"duration_ms":78694})");
  expect_read_as_nlohmann_reads(R"({"event":"outputs","files":[{"path":"a","size":1},[],{}]})");
  expect_read_as_nlohmann_reads(R"({"command":{"hex":"636166e9"}})");
  expect_read_as_nlohmann_reads(" \t{ \"a\" : [ 1 , 2 ] }\r ");
}

TEST(JournalRecordParse, ReadsEveryKindOfNumberAsNlohmannJsonDoes) {
  for (const char* number :
       {"0", "-0", "-0 ", "7", "-7", "9223372036854775807", "9223372036854775808",
        "18446744073709551615", "18446744073709551616", "-9223372036854775808",
        "-9223372036854775809", "1.5", "-0.0", "1e3", "1E-2", "0.1", "01", "-", "1."}) {
    expect_read_as_nlohmann_reads(std::string(R"({"n":)") + number + "}");
    expect_read_as_nlohmann_reads(std::string(R"({"n":[3,)") + number + "]}");
  }
  expect_read_as_nlohmann_reads(R"({"n":0,"time":"2026-03-02","k":"a:-0"})");
}

TEST(JournalRecordParse, ReadsEscapesAndBytesAsNlohmannJsonDoes) {
  for (const char* text :
       {R"("caf\u00e9")", R"("\ud83d\ude00")", R"("\ud800")", R"("\udc00x")", R"("\u0000")",
        R"("tab\tquote\"slash\/back\\")", "\"caf\xc3\xa9\"", "\"caf\xe9\"", "\"\xed\xa0\x80\"",
        "\"\xf4\x90\x80\x80\"", "\"a\x01\"", "\"\""}) {
    expect_read_as_nlohmann_reads(std::string(R"({"s":)") + text + "}");
  }
}

TEST(JournalRecordParse, ReadsOddDocumentsAsNlohmannJsonDoes) {
  for (const char* line : {R"({"a":1,"a":2})", R"({"a":1} x)", R"({"a":1}{"b":2})",
                           "\xEF\xBB\xBF{\"a\":1}", R"({"a":1,})", R"([1,2])", "5", R"("text")",
                           "null", R"({"a":)", "{", "", " ", R"({"a":{"b":{"c":[[[]]]}}})"}) {
    expect_read_as_nlohmann_reads(line);
  }
}

}  // namespace
}  // namespace runner
