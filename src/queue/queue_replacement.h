// Private to the queue area: replacing the queue file by a new text without
// losing what others append to it with `>>` meanwhile. Such appenders take
// no lock, and one that opened the old file just before the rename writes
// into a file that no name leads to any more. So the old file is read
// through a descriptor that stays open (HeldQueueFile), and whatever it
// holds beyond the text the new one was made from is appended to the new
// file: right after the rename, and again whenever carry_late_appends is
// called, for an appender that opened the old file before the rename and
// wrote after it.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <optional>
#include <string>

#include "runner/core/file_system.h"
#include "runner/core/result.h"

namespace runner {

class HeldQueueFile {
 public:
  // Opens and reads `path` through `files`, which its later operations
  // use too; nullopt when it does not exist.
  static Result<std::optional<HeldQueueFile>> open(FileSystem& files, const std::string& path);

  const std::string& text() const { return m_text; }      // as read
  const struct stat& opened() const { return m_opened; }  // its mode, owner, inode when opened
  FileSystem& files() const { return *m_files; }

  // Whether `path` still names this file and the file still starts with
  // text(): nothing happened to it but appends. A failure when it cannot
  // be read.
  Result<bool> only_appended_to(const std::string& path) const;

  // Once replaced: appends to `path` what this file received since it was
  // last carried over. Returns the number of bytes carried.
  Result<std::size_t> carry_late_appends(const std::string& path);

 private:
  HeldQueueFile(FileSystem& files, FileDescriptor fd, std::string text, const struct stat& opened);
  FileSystem* m_files;
  FileDescriptor m_fd;
  std::string m_text;
  struct stat m_opened {};
  off_t m_carried = 0;  // bytes of the file that are in the new one
};

// Replaces the file at `path`, read as `held` (and through its file
// system), by `text`: written beside it, fsync'd, and renamed over it (the
// rename waited for when `sync_directory`). Returns false, replacing
// nothing, when the file was changed meanwhile other than by appending to
// it. Bytes appended to it (before the rename or until the call returns)
// end up at the end of the new file.
Result<bool> replace_keeping_appends(HeldQueueFile& held, const std::string& path,
                                     const std::string& text, bool sync_directory);

// A new file beside `path` holding `text`, fsync'd, with the permissions of
// the file it will replace; returns its name. Nothing is left behind when
// it cannot be written whole.
Result<std::string> write_temporary(FileSystem& files, const std::string& path,
                                    const std::string& text);
// The same, with the permissions of `replacing`, the file at `path` as
// looked at already, or none for a new file.
Result<std::string> write_temporary(FileSystem& files, const std::string& path,
                                    const std::string& text,
                                    const std::optional<struct stat>& replacing);

// Renames `temporary` over `path` (removing it when that fails) and notes
// it as this process's own change; fsyncs the folder when `sync`.
Status commit_temporary(FileSystem& files, const std::string& temporary, const std::string& path,
                        bool sync);

}  // namespace runner
