// Listing a folder's regular files with getdents64 on the folders' own
// descriptors: the entry's type as the directory gives it, a look at a file
// only for a link or a file system that gives no type.
#include "runner/report/folder_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "runner/core/file_system.h"

namespace runner {

namespace {

namespace fs = std::filesystem;

// What the listing does with an entry of `folder_fd`.
enum class EntryKind { file, folder, other };

EntryKind entry_kind(int folder_fd, const char* name, unsigned char type) {
  struct stat status {};
  if (type == DT_UNKNOWN) {
    if (::fstatat(folder_fd, name, &status, AT_SYMLINK_NOFOLLOW) != 0) return EntryKind::other;
    if (S_ISDIR(status.st_mode)) return EntryKind::folder;
    if (S_ISREG(status.st_mode)) return EntryKind::file;
    if (!S_ISLNK(status.st_mode)) return EntryKind::other;
    type = DT_LNK;
  }
  if (type == DT_DIR) return EntryKind::folder;
  if (type == DT_REG) return EntryKind::file;
  // A link counts as what it leads to when that is a regular file.
  if (type == DT_LNK && ::fstatat(folder_fd, name, &status, 0) == 0 && S_ISREG(status.st_mode))
    return EntryKind::file;
  return EntryKind::other;
}

// The size of the buffer a folder's entries are read into.
constexpr std::size_t k_entries_bytes = 32 * 1024;

// A listing under way: the buffer a directory's entries are read into
// (k_entries_bytes, shared by every level), how many more entries may be
// looked at, and what was found.
struct Listing {
  std::unique_ptr<char[]> buffer = std::make_unique_for_overwrite<char[]>(k_entries_bytes);
  std::size_t entries_left;
  FolderFiles found;
};

// The files of the folder open as `folder_fd`, `depth` levels below the
// listed one, then its subfolders' files.
void add_files(const FileDescriptor& folder_fd, const fs::path& folder, int depth,
               Listing& listing) {
  std::vector<std::string> below;
  char* buffer = listing.buffer.get();
  for (ssize_t got; (got = ::getdents64(folder_fd.get(), buffer, k_entries_bytes)) > 0;) {
    for (ssize_t at = 0; at < got;) {
      const auto* entry = reinterpret_cast<const dirent64*>(buffer + at);
      at += entry->d_reclen;
      const char* name = entry->d_name;
      if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
      if (listing.entries_left == 0) {
        listing.found.cut_short = true;
        return;
      }
      --listing.entries_left;
      EntryKind kind = entry_kind(folder_fd.get(), name, entry->d_type);
      if (kind == EntryKind::file) listing.found.files.push_back(folder / name);
      if (kind == EntryKind::folder) below.emplace_back(name);
    }
  }
  if (depth == k_folder_files_depth) return;
  for (const std::string& name : below) {
    FileDescriptor fd(
        ::openat(folder_fd.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (fd.valid()) add_files(fd, folder / name, depth + 1, listing);
    if (listing.found.cut_short) return;
  }
}

}  // namespace

std::optional<FolderFiles> regular_files_under(const fs::path& folder, std::size_t entries) {
  FileDescriptor fd(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return std::nullopt;
  // The buffer is not cleared first: getdents64 writes what is read of it.
  Listing listing{.entries_left = entries};
  add_files(fd, folder, 0, listing);
  std::sort(listing.found.files.begin(), listing.found.files.end());
  return std::move(listing.found);
}

}  // namespace runner
