// Pegasus' command line: argument order and the options a mode ignores.
#include "pegasus_command_line.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>

namespace runner {

namespace {

const std::set<std::string, std::less<>> k_modes = {
    "queue", "q", "broadcast", "b", "lock", "l", "add", "status", "log", "report", "check"};
const std::set<std::string, std::less<>> k_pegasus_modes = {"queue", "q",    "broadcast",
                                                            "b",     "lock", "l"};

// Pegasus' options that take a value.
const std::set<std::string, std::less<>> k_long_with_value = {"--editor", "--print-period",
                                                              "--queue-file", "--hosts-file"};
constexpr std::string_view k_short_with_value = "pQH";

constexpr const char* k_ignored_description = "Taken as Pegasus takes it; no effect here";

// Whether the argument after `arg` is its value: `--queue-file q.yaml`,
// `-p 2`, `-dp 2`.
bool value_follows(std::string_view arg) {
  if (arg.starts_with("--")) return k_long_with_value.count(arg) > 0;
  if (arg.size() < 2 || arg[0] != '-') return false;
  return std::all_of(arg.begin() + 1, arg.end(),
                     [](unsigned char c) { return std::isalpha(c) != 0; }) &&
         k_short_with_value.find(arg.back()) != std::string_view::npos;
}

// `-p=2` as `-p`, `2`.
void split_short_equals(std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() > 2 && arg[0] == '-' && arg[1] != '-' && arg[2] == '=') {
      std::string value = arg.substr(3);
      args[i].resize(2);
      args.insert(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, std::move(value));
      ++i;
    }
  }
}

}  // namespace

std::vector<std::string> pegasus_order(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto mode = args.begin();
  while (mode != args.end() && !k_modes.count(*mode)) {
    if (*mode == "--") return args;
    if (value_follows(*mode) && mode + 1 != args.end()) ++mode;
    ++mode;
  }
  if (mode == args.end()) return args;
  std::rotate(args.begin(), mode, mode + 1);
  if (k_pegasus_modes.count(args.front())) split_short_equals(args);
  return args;
}

void IgnoredOptions::add_flag(CLI::App& mode, const std::string& names) {
  m_options.emplace_back(&mode, mode.add_flag(names)->description(k_ignored_description));
}

void IgnoredOptions::add_option(CLI::App& mode, const std::string& names) {
  m_options.emplace_back(&mode, mode.add_option(names)->description(k_ignored_description));
}

void IgnoredOptions::say_given() const {
  for (const auto& [mode, option] : m_options)
    if (option->count() > 0)
      fmt::print(stderr, "runner: {} has no effect in `runner {}`; ignored\n", option->get_name(),
                 mode->get_name());
}

}  // namespace runner
