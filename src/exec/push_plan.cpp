#include "runner/exec/push_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>

#include "runner/exec/shell.h"

namespace runner {

namespace {

// The first word of `text` as a number of `base`, and what follows its space.
template <typename Number>
bool take_number(std::string_view& text, Number& value, int base = 10) {
  std::size_t space = text.find(' ');
  if (space == std::string_view::npos || space == 0) return false;
  auto [end, error] = std::from_chars(text.data(), text.data() + space, value, base);
  if (error != std::errc() || end != text.data() + space) return false;
  text.remove_prefix(space + 1);
  return true;
}

std::string describe_bytes(std::uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < 1024 * 1024) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  if (bytes < 1024ull * 1024 * 1024) return fmt::format("{:.1f} MiB", bytes / 1048576.0);
  return fmt::format("{:.2f} GiB", bytes / 1073741824.0);
}

}  // namespace

std::string put_summary(const PutResult& result) {
  return fmt::format("{} file{} sent ({}), {} skipped", result.sent, result.sent == 1 ? "" : "s",
                     describe_bytes(result.bytes), result.skipped);
}

std::string host_listing_command(const std::string& to, const std::vector<PushFile>& files) {
  std::set<std::string> tops;
  for (const PushFile& file : files) tops.insert(file.path.substr(0, file.path.find('/')));
  if (tops.empty()) return "true";
  std::string command = "cd " + shell_quote(to) + " 2>/dev/null || exit 0; find";
  for (const std::string& top : tops) command += " " + shell_quote("./" + top);
  // A name that is not there yet is no failure. Each record ends in a NUL
  // (GNU stat's --printf): a name may hold a newline.
  command += " -type f -exec stat --printf '%s %Y %a %n\\0' {} + 2>/dev/null; true";
  return command;
}

std::map<std::string, HostFile> parse_host_listing(std::string_view text) {
  std::map<std::string, HostFile> there;
  for (std::size_t begin = 0; begin < text.size();) {
    std::size_t end = std::min(text.find('\0', begin), text.size());
    std::string_view record = text.substr(begin, end - begin);
    begin = end + 1;
    HostFile file;
    if (!take_number(record, file.size) || !take_number(record, file.mtime) ||
        !take_number(record, file.mode, 8) || record.substr(0, 2) != "./" || record.size() < 3)
      continue;
    there[std::string(record.substr(2))] = file;
  }
  return there;
}

std::vector<PushFile> files_to_send(const std::vector<PushFile>& files,
                                    const std::map<std::string, HostFile>& there) {
  std::vector<PushFile> send;
  for (const PushFile& file : files) {
    auto found = there.find(file.path);
    if (found == there.end() || !(found->second == HostFile{file.size, file.mtime, file.mode}))
      send.push_back(file);
  }
  return send;
}

std::string unpack_command(const std::string& to) {
  std::string where = shell_quote(to);
  return "mkdir -p -- " + where + " && exec tar -xpf - -C " + where;
}

}  // namespace runner
