// What this process did to its queue files (see own_changes.h), keyed by
// absolute path.
#include "own_changes.h"

#include <filesystem>
#include <map>
#include <utility>

namespace runner::own_changes {

namespace {

struct Notes {
  int queue_replaced = 0;
  bool blocked = false;
};

std::map<std::string, Notes>& notes() {
  static std::map<std::string, Notes> by_path;
  return by_path;
}

std::string key(const std::string& path) {
  std::error_code error;
  std::filesystem::path absolute = std::filesystem::absolute(path, error);
  return error ? path : absolute.lexically_normal().string();
}

}  // namespace

void note_queue_replaced(const std::string& queue_path) {
  ++notes()[key(queue_path)].queue_replaced;
}

bool take_queue_replaced(const std::string& queue_path) {
  auto found = notes().find(key(queue_path));
  if (found == notes().end() || found->second.queue_replaced <= 0) return false;
  --found->second.queue_replaced;
  return true;
}

void note_blocked(const std::string& lock_path) { notes()[key(lock_path)].blocked = true; }

bool take_blocked(const std::string& lock_path) {
  auto found = notes().find(key(lock_path));
  if (found == notes().end()) return false;
  return std::exchange(found->second.blocked, false);
}

void forget(const std::string& queue_path, const std::string& lock_path) {
  notes().erase(key(queue_path));
  notes().erase(key(lock_path));
}

}  // namespace runner::own_changes
