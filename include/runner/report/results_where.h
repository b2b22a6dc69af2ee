// `--where COLUMN=VALUE`: the rows of the results table to keep, for
// `runner results` and the report's results and plots. Pure.
//
// Threading: none.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/core/result.h"
#include "runner/report/results_table.h"

namespace runner {

// A column and one value of it: `model=mlp`.
struct RowCondition {
  std::string column;
  std::string value;
};

// "COLUMN=VALUE" (the value may hold `=`, or be empty); nullopt without a
// column or `=`.
std::optional<RowCondition> parse_row_condition(std::string_view text);

// "model=mlp"
std::string row_condition_text(const RowCondition& condition);

// The rows whose cell, for every column the conditions name, is one of the
// values given for that column; an error names a column the table lacks
// and the columns it has.
Result<ResultsTable> rows_where(const ResultsTable& table,
                                const std::vector<RowCondition>& conditions);

// For each condition no row meets: "no job has model=c; model has: a, b".
std::vector<std::string> unmatched_conditions(const ResultsTable& table,
                                              const std::vector<RowCondition>& conditions);

// "the results have no column `size`; they have: id, model, …", or ok.
Status check_column(const ResultsTable& table, std::string_view name);

// The distinct values of a column, in the order first seen.
std::vector<std::string> column_values(const ResultsTable& table, std::size_t column);

}  // namespace runner
