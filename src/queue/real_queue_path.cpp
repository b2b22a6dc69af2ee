// Resolving a queue path: std::filesystem::weakly_canonical follows links
// only in the part of the path that exists, so a link to a file not created
// yet would stay a link; the last component is therefore followed by hand.
#include "runner/queue/real_queue_path.h"

#include <filesystem>
#include <system_error>

namespace runner {

namespace {

constexpr int k_max_links = 40;  // as the kernel's ELOOP limit

}  // namespace

std::string real_queue_path(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  fs::path resolved = fs::absolute(path, error);
  if (error) return path;
  for (int link = 0; link < k_max_links; ++link) {
    fs::path canonical = fs::weakly_canonical(resolved, error);
    if (error) break;
    resolved = canonical;
    if (!fs::is_symlink(resolved, error)) break;
    fs::path target = fs::read_symlink(resolved, error);
    if (error) break;
    resolved = target.is_absolute() ? target : resolved.parent_path() / target;
  }
  return resolved.lexically_normal().string();
}

}  // namespace runner
