// A journal line: parse_journal_line must read the record nlohmann::json
// reads (its contract), whichever parser took it; journal_line_job must not
// read past the line; a record read_record reads is written back as a line
// that reads as the same record.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "runner/state/journal_records.h"
#include "runner/state/journal_segments.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // A line holds no newline; an own copy lets ASan see a read past its end.
  std::string line(reinterpret_cast<const char*>(data), size);
  if (line.find('\n') != std::string::npos) return 0;
  runner::journal_line_job(line);
  runner::JournalLine read = runner::parse_journal_line(line);
  nlohmann::json expected = nlohmann::json::parse(line, nullptr, false);
  if (read.record && read.text == line && expected.is_object() &&
      read.record->dump() != expected.dump())
    std::abort();
  if (runner::Result<runner::JournalRecord> record = runner::read_record(line)) {
    std::string written = runner::journal_line(*record);
    written.pop_back();
    runner::Result<runner::JournalRecord> again = runner::read_record(written);
    if (!again || *again != *record) std::abort();
  }
  return 0;
}
