// Runs a shipped example as its README says (see example.h).
#include "support/example.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

namespace runner::testing {

std::string Example::folder() const {
  return std::string(RUNNER_SOURCE_DIR) + "/examples/" + m_name;
}

std::string Example::file(const std::string& relative) const {
  std::ifstream in(folder() + "/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Example::copy_into(const TempDir& dir) const {
  std::string to = dir.file(m_name);
  std::filesystem::copy(folder(), to, std::filesystem::copy_options::recursive);
  return to;
}

std::vector<std::string> Example::commands() const {
  std::istringstream readme(file("README.md"));
  std::vector<std::string> found;
  bool in_console = false;
  for (std::string line; std::getline(readme, line);) {
    if (line.rfind("```", 0) == 0) {
      in_console = !in_console && line == "```console";
    } else if (in_console && line.rfind("$ ", 0) == 0) {
      found.push_back(line.substr(2));
    }
  }
  return found;
}

ProcessResult Example::run(const std::string& command, const std::string& cwd,
                           std::map<std::string, std::string> env,
                           std::chrono::milliseconds timeout) const {
  std::string runner_dir = std::filesystem::path(RUNNER_BINARY).parent_path();
  std::string path = env.count("PATH") ? env["PATH"] : std::getenv("PATH");
  env["PATH"] = runner_dir + ":" + path;
  ProcessSpec spec;
  spec.args = {"/bin/sh", "-c", command};
  spec.cwd = cwd;
  spec.env = {{"NO_COLOR", "1"}, {"SSH_AUTH_SOCK", ""}};
  for (auto& [name, value] : env) spec.env[name] = value;
  spec.timeout = timeout;
  return run_process(spec);
}

std::vector<ProcessResult> Example::run_all(const std::vector<std::string>& commands,
                                            const std::string& cwd,
                                            const std::map<std::string, std::string>& env,
                                            std::chrono::milliseconds timeout) const {
  std::vector<ProcessResult> ran;
  for (const std::string& command : commands) {
    ran.push_back(run(command, cwd, env, timeout));
    if (ran.back().status == 0) continue;
    ADD_FAILURE() << command << " exited " << ran.back().status << "\n"
                  << ran.back().out << ran.back().err;
    break;
  }
  return ran;
}

namespace {

// The cells of one CSV line.
std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      cells.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      cells.emplace_back();
    } else {
      cells.back() += c;
    }
  }
  return cells;
}

}  // namespace

std::vector<std::map<std::string, std::string>> csv_rows(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header = csv_cells(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> cells = csv_cells(line);
    std::map<std::string, std::string> row;
    if (cells.size() != header.size()) row["<malformed>"] = line;
    for (std::size_t i = 0; i < cells.size() && i < header.size(); ++i) row[header[i]] = cells[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace runner::testing
