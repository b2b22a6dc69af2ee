// A shipped example, examples/<name>/, run as its README.md tells a user
// to: its folder copied to where the user works, and each command of its
// README (every `$ ` line of a ```console block, in order) run there with
// /bin/sh, `runner` being the binary under test. Tests read the example's
// files and commands from the tree, so README and test cannot drift apart.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "support/process.h"
#include "support/temp_dir.h"

namespace runner::testing {

class Example {
 public:
  explicit Example(std::string name) : m_name(std::move(name)) {}

  // examples/<name> in the source tree.
  std::string folder() const;
  // The example's file `relative`, as shipped.
  std::string file(const std::string& relative) const;
  // Copies the example's folder to `dir`/<name> and returns that path.
  std::string copy_into(const TempDir& dir) const;
  // The README's commands, in order, without their `$ `.
  std::vector<std::string> commands() const;
  // `/bin/sh -c command` in `cwd`, with the directory of the runner under
  // test first on PATH (after `env`'s PATH, if it sets one), NO_COLOR set,
  // no ssh-agent, and `env` on top.
  ProcessResult run(const std::string& command, const std::string& cwd,
                    std::map<std::string, std::string> env,
                    std::chrono::milliseconds timeout = std::chrono::minutes(2)) const;
  // Runs `commands` one after the other as run() does, until one exits
  // other than 0, which fails the test naming it and showing its output.
  // Returns what ran: as many results as commands when all succeeded.
  std::vector<ProcessResult> run_all(const std::vector<std::string>& commands,
                                     const std::string& cwd,
                                     const std::map<std::string, std::string>& env,
                                     std::chrono::milliseconds timeout = std::chrono::minutes(2)) const;

 private:
  std::string m_name;
};

// The rows of a CSV text (`runner results`), each a map from the header's
// column names to its cells; quoted cells ("a,b", "say ""x""") are unquoted.
// A row whose cell count differs from the header's is kept with a cell
// named "<malformed>" holding the line, for the test to fail on.
std::vector<std::map<std::string, std::string>> csv_rows(const std::string& csv);

}  // namespace runner::testing
