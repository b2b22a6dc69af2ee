// Private to the queue area: the small file operations the queue files are
// built from, made through a FileSystem, each failure naming the file and
// the system's reason.
#pragma once

#include <sys/types.h>

#include <string>

#include "runner/core/file_system.h"
#include "runner/core/result.h"

namespace runner::file_io {

// "cannot write queue.yaml: No space left on device": `what` and errno
// `error` in words.
Status io_failure(int error, const std::string& what);

// Writes all of `text` to `fd`; `path` names it in errors.
Status write_all(FileSystem& files, int fd, const std::string& text, const std::string& path);

// What `fd` holds from `offset` to its end.
Result<std::string> read_from(FileSystem& files, int fd, off_t offset, const std::string& path);

// The first `size` bytes `fd` holds, or fewer where it ends before; one
// read where the file has them all.
Result<std::string> read_first(FileSystem& files, int fd, std::size_t size,
                               const std::string& path);

// The folder holding `path` ("." for a bare name).
std::string directory_of(const std::string& path);

// fsync of a folder, so a rename in it survives a crash; best effort.
void sync_directory(FileSystem& files, const std::string& directory);

}  // namespace runner::file_io
