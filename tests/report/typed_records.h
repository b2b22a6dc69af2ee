// Journal records a test builds as JSON objects, read as the journal's
// readers read a line (record_from_json).
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "runner/state/journal_records.h"

namespace runner::testing {

inline std::vector<JournalRecord> typed_records(const std::vector<nlohmann::json>& values) {
  std::vector<JournalRecord> records;
  for (const nlohmann::json& value : values) {
    Result<JournalRecord> record = record_from_json(value);
    EXPECT_TRUE(record.ok()) << value.dump() << ": " << record.status().message();
    if (record) records.push_back(std::move(*record));
  }
  return records;
}

}  // namespace runner::testing
