#include "runner/exec/output_entry.h"

#include <fmt/format.h>

namespace runner {

Result<std::string> output_entry_path(std::string_view member) {
  if (member.size() > k_output_path_limit)
    return Status::error(
        fmt::format("a name of {} bytes (at most {})", member.size(), k_output_path_limit));
  std::string path;
  std::size_t begin = 0;
  while (begin <= member.size()) {
    std::size_t end = member.find('/', begin);
    if (end == std::string_view::npos) end = member.size();
    std::string_view name = member.substr(begin, end - begin);
    begin = end + 1;
    if (name.empty() || name == ".") continue;
    if (name == "..") return Status::error("a `..` in it leaves the job's folder");
    if (name.size() > k_output_name_limit)
      return Status::error(
          fmt::format("a name of {} bytes in it (at most {})", name.size(), k_output_name_limit));
    if (!path.empty()) path += '/';
    path += name;
  }
  return path;
}

}  // namespace runner
