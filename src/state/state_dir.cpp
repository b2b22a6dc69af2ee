// Naming and creation of the state directory.
#include "runner/state/state_dir.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>

namespace runner {

namespace {

bool ends_with_nocase(const std::string& text, std::string_view suffix) {
  if (text.size() < suffix.size()) return false;
  return std::equal(suffix.begin(), suffix.end(), text.end() - suffix.size(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  });
}

}  // namespace

std::string state_dir_for(const std::string& queue_path) {
  std::string base = queue_path;
  for (std::string_view ext : {".yaml", ".yml"}) {
    // "dir/.yaml" has no stem to keep; leave it whole.
    if (ends_with_nocase(base, ext) && base.size() > ext.size() &&
        base[base.size() - ext.size() - 1] != '/') {
      base.resize(base.size() - ext.size());
      break;
    }
  }
  return base + ".runner";
}

std::string logs_dir(const std::string& state_dir) { return state_dir + "/logs"; }

std::string outputs_dir(const std::string& state_dir) { return state_dir + "/outputs"; }

std::string attempt_outputs_dir(const std::string& outputs, JobId job, int attempt) {
  if (attempt <= 1) return fmt::format("{}/{}", outputs, job);
  return fmt::format("{}/{}.attempt-{}", outputs, job, attempt);
}

std::string debug_log_path(const std::string& state_dir) { return state_dir + "/debug.log"; }

Status ensure_state_dir(const std::string& state_dir) {
  std::error_code error;
  std::filesystem::create_directories(logs_dir(state_dir), error);
  if (error || !std::filesystem::is_directory(logs_dir(state_dir))) {
    std::string reason = error ? error.message() : "not a directory";
    return Status::error("cannot create the state directory " + logs_dir(state_dir) + ": " +
                         reason);
  }
  return Status::ok_status();
}

}  // namespace runner
