// Private to the queue area: the small file operations the queue files are
// built from, made through a FileSystem, each throwing std::system_error
// naming the file.
#pragma once

#include <sys/types.h>

#include <string>
#include <system_error>

#include "runner/core/file_system.h"

namespace runner::file_io {

std::system_error io_error(int error, const std::string& what);

// Writes all of `text` to `fd`; `path` names it in errors.
void write_all(FileSystem& files, int fd, const std::string& text, const std::string& path);

// What `fd` holds from `offset` to its end.
std::string read_from(FileSystem& files, int fd, off_t offset, const std::string& path);

// The folder holding `path` ("." for a bare name).
std::string directory_of(const std::string& path);

// fsync of a folder, so a rename in it survives a crash; best effort.
void sync_directory(FileSystem& files, const std::string& directory);

}  // namespace runner::file_io
