// Pegasus' command line (1.4.0, and the `-Q`/`-H` of its job-slots
// branch): its mode may stand anywhere among the options, `-p=2` is `-p 2`,
// and every option is taken in every mode (q, b, l), even where it means
// nothing there.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

namespace runner {

// The arguments after the program name, reordered for CLI11: the first mode
// word (`q`, `queue`, `status`, ...) that is not the value of an option
// (`--queue-file q`) moves to the front. In Pegasus' modes, `-X=value` becomes
// `-X value`, as clap reads it.
std::vector<std::string> pegasus_order(int argc, char** argv);

// Options a mode takes only because Pegasus takes every option in every
// mode. Each one given is said once on stderr, as having no effect there.
class IgnoredOptions {
 public:
  void add_flag(CLI::App& mode, const std::string& names);
  void add_option(CLI::App& mode, const std::string& names);
  // Says which of them were given (only the parsed mode's can be).
  void say_given() const;

 private:
  std::vector<std::pair<const CLI::App*, const CLI::Option*>> m_options;
};

}  // namespace runner
