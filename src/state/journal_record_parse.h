// Parsing one journal line into its record, fast: simdjson where its
// reading is surely nlohmann::json's, nlohmann::json otherwise.
//
// Threading: any thread; each has its own simdjson parser.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace runner {

// The JSON value of `line`, the same value nlohmann::json::parse gives
// (a discarded one when `line` is not JSON).
nlohmann::json parse_journal_record(std::string_view line);

}  // namespace runner
