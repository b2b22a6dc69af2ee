// Picking rows of the results table by the values of their columns.
#include "runner/report/results_where.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace runner {

std::optional<RowCondition> parse_row_condition(std::string_view text) {
  std::size_t equals = text.find('=');
  if (equals == std::string_view::npos || equals == 0) return std::nullopt;
  return RowCondition{std::string(text.substr(0, equals)), std::string(text.substr(equals + 1))};
}

std::string row_condition_text(const RowCondition& condition) {
  return condition.column + "=" + condition.value;
}

Status check_column(const ResultsTable& table, std::string_view name) {
  if (table.column(name)) return Status::ok_status();
  return Status::error(fmt::format("the results have no column `{}`; they have: {}", name,
                                   fmt::join(table.columns, ", ")));
}

std::vector<std::string> column_values(const ResultsTable& table, std::size_t column) {
  std::vector<std::string> values;
  for (const auto& row : table.rows)
    if (std::find(values.begin(), values.end(), row[column]) == values.end())
      values.push_back(row[column]);
  return values;
}

Result<ResultsTable> rows_where(const ResultsTable& table,
                                const std::vector<RowCondition>& conditions) {
  // Per column named: its position and the values it may have.
  std::vector<std::pair<std::size_t, std::vector<std::string>>> wanted;
  for (const RowCondition& condition : conditions) {
    if (Status known = check_column(table, condition.column); !known.ok()) return known;
    std::size_t column = *table.column(condition.column);
    auto at = std::find_if(wanted.begin(), wanted.end(),
                           [&](const auto& entry) { return entry.first == column; });
    if (at == wanted.end()) at = wanted.insert(wanted.end(), {column, {}});
    at->second.push_back(condition.value);
  }
  ResultsTable kept{table.columns, {}, table.parameters};
  for (const auto& row : table.rows) {
    bool keep = std::all_of(wanted.begin(), wanted.end(), [&](const auto& entry) {
      const auto& [column, values] = entry;
      return std::find(values.begin(), values.end(), row[column]) != values.end();
    });
    if (keep) kept.rows.push_back(row);
  }
  return kept;
}

std::vector<std::string> unmatched_conditions(const ResultsTable& table,
                                              const std::vector<RowCondition>& conditions) {
  std::vector<std::string> notes;
  for (const RowCondition& condition : conditions) {
    std::optional<std::size_t> column = table.column(condition.column);
    if (!column) continue;
    std::vector<std::string> values = column_values(table, *column);
    if (std::find(values.begin(), values.end(), condition.value) != values.end()) continue;
    notes.push_back(fmt::format("no job has {}; {} has: {}", row_condition_text(condition),
                                condition.column, fmt::join(values, ", ")));
  }
  return notes;
}

}  // namespace runner
