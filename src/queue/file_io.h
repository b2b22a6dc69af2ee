// Private to the queue area: the small POSIX file operations the queue
// files are built from, each throwing std::system_error naming the file.
#pragma once

#include <sys/types.h>

#include <string>
#include <system_error>

namespace runner::file_io {

std::system_error io_error(int error, const std::string& what);

// Writes all of `text` to `fd`; `path` names it in errors.
void write_all(int fd, const std::string& text, const std::string& path);

// What `fd` holds from `offset` to its end.
std::string read_from(int fd, off_t offset, const std::string& path);

// The folder holding `path` ("." for a bare name).
std::string directory_of(const std::string& path);

// fsync of a folder, so a rename in it survives a crash; best effort.
void sync_directory(const std::string& directory);

}  // namespace runner::file_io
