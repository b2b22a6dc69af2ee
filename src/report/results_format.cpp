// The results table written as CSV, TSV, JSON lines or Markdown.
#include <nlohmann/json.hpp>

#include "runner/report/results_table.h"

namespace runner {

namespace {

std::string csv_cell(const std::string& cell) {
  if (cell.find_first_of(",\"\r\n") == std::string::npos) return cell;
  std::string quoted = "\"";
  for (char c : cell) {
    if (c == '"') quoted.push_back('"');
    quoted.push_back(c);
  }
  return quoted + "\"";
}

// `cell` with each of `from` replaced by `to`.
std::string replaced(const std::string& cell, std::string_view from, std::string_view to) {
  std::string out;
  for (char c : cell) {
    if (from.find(c) == std::string_view::npos)
      out.push_back(c);
    else
      out.append(to);
  }
  return out;
}

std::string tsv_cell(const std::string& cell) { return replaced(cell, "\t\r\n", " "); }

std::string markdown_cell(const std::string& cell) {
  return replaced(replaced(cell, "|", "\\|"), "\r\n", " ");
}

std::string joined_line(const std::vector<std::string>& cells, std::string_view separator,
                        std::string (*written)(const std::string&)) {
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i) line.append(separator);
    line += written(cells[i]);
  }
  return line + "\n";
}

std::string markdown_row(const std::vector<std::string>& cells) {
  return "| " + replaced(joined_line(cells, " | ", markdown_cell), "\n", "") + " |\n";
}

std::string jsonl(const ResultsTable& table) {
  std::string out;
  for (const auto& row : table.rows) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < table.columns.size(); ++i) {
      nlohmann::ordered_json number = nlohmann::ordered_json::parse(row[i], nullptr, false);
      if (row[i].empty())
        object[table.columns[i]] = nullptr;
      else if (number.is_number())
        object[table.columns[i]] = number;
      else
        object[table.columns[i]] = row[i];
    }
    out += object.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  }
  return out;
}

}  // namespace

std::optional<ResultsFormat> parse_results_format(std::string_view name) {
  if (name == "csv") return ResultsFormat::csv;
  if (name == "tsv") return ResultsFormat::tsv;
  if (name == "jsonl") return ResultsFormat::jsonl;
  if (name == "markdown") return ResultsFormat::markdown;
  return std::nullopt;
}

std::string format_results(const ResultsTable& table, ResultsFormat format) {
  std::string out;
  switch (format) {
    case ResultsFormat::csv:
      out = joined_line(table.columns, ",", csv_cell);
      for (const auto& row : table.rows) out += joined_line(row, ",", csv_cell);
      return out;
    case ResultsFormat::tsv:
      out = joined_line(table.columns, "\t", tsv_cell);
      for (const auto& row : table.rows) out += joined_line(row, "\t", tsv_cell);
      return out;
    case ResultsFormat::jsonl:
      return jsonl(table);
    case ResultsFormat::markdown:
      out = markdown_row(table.columns);
      out += markdown_row(std::vector<std::string>(table.columns.size(), "---"));
      for (const auto& row : table.rows) out += markdown_row(row);
      return out;
  }
  return out;
}

}  // namespace runner
