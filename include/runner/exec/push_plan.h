// What `runner push` sends to a host: the local files, what the host
// already has of them (its listing), and the difference. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace runner {

// One regular file to copy: `path` under the destination, found here as
// `root`/`path`, with its size, modification time (whole seconds, as tar
// keeps it) and permission bits.
struct PushFile {
  std::string root;
  std::string path;
  std::uint64_t size = 0;
  std::int64_t mtime = 0;
  unsigned mode = 0;
};

// What a host has at a file's path.
struct HostFile {
  std::uint64_t size = 0;
  std::int64_t mtime = 0;
  unsigned mode = 0;
  bool operator==(const HostFile&) const = default;
};

// What HostOps::put_files did on one host.
struct PutResult {
  std::size_t sent = 0;     // files copied
  std::uint64_t bytes = 0;  // their bytes
  std::size_t skipped = 0;  // files the host had already, same size, time and mode
  std::string error;        // non-empty: nothing was copied, and why
  bool lost = false;        // the host was lost first
};

// "3 files sent (1.2 MiB), 10 skipped"
std::string put_summary(const PutResult& result);

// The sh command that lists, under `to` on a host, the regular files below
// the top-level names of `files` (each record "<size> <mtime> <octal mode>
// ./<path>" and a NUL, path relative to `to`, byte for byte); it prints
// nothing when `to` is missing.
std::string host_listing_command(const std::string& to, const std::vector<PushFile>& files);

// Reads host_listing_command's output; records it does not understand are
// skipped. Pure: a host's bytes, hostile (a fuzzer's entry point too).
std::map<std::string, HostFile> parse_host_listing(std::string_view text);

// The files the host lacks or has with another size, time or mode.
std::vector<PushFile> files_to_send(const std::vector<PushFile>& files,
                                    const std::map<std::string, HostFile>& there);

// The sh command that unpacks a tar stream on its stdin into `to` (made if
// missing), keeping modes and times.
std::string unpack_command(const std::string& to);

}  // namespace runner
