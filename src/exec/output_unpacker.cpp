#include "runner/exec/output_unpacker.h"

#include <archive.h>
#include <archive_entry.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>

#include "coroutine.h"
#include "runner/core/printable.h"
#include "runner/exec/file_digest.h"
#include "runner/exec/output_entry.h"

namespace runner {

namespace {

constexpr std::size_t k_block_bytes = 64 * 1024;

// How libarchive writes: never through a link (a folder of the path that
// is a link fails the member), never to a path with `..`, an existing file
// replaced rather than written into (it may be another's hard link), its
// time kept. No owner, no ACL, no extended attribute; modes are masked
// here (without ARCHIVE_EXTRACT_PERM the umask applies and set-uid,
// set-gid and sticky bits are dropped anyway). The paths given are the
// folder's real path joined with a name output_entry_path made relative,
// so ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS, which refuses every absolute
// path, cannot be asked for: output_entry_path does its work.
constexpr int k_disk_options = ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                               ARCHIVE_EXTRACT_UNLINK | ARCHIVE_EXTRACT_TIME;

using Archive = std::unique_ptr<archive, int (*)(archive*)>;
using Entry = std::unique_ptr<archive_entry, void (*)(archive_entry*)>;

Archive disk_writer() {
  Archive disk(archive_write_disk_new(), &archive_write_free);
  if (disk) archive_write_disk_set_options(disk.get(), k_disk_options);
  return disk;
}

// A member as it is written here: its path, type and mode, nothing else of
// what the host said.
Entry clean_entry(const std::string& full, unsigned type, unsigned perm) {
  Entry entry(archive_entry_new(), &archive_entry_free);
  if (!entry) return entry;
  archive_entry_set_pathname(entry.get(), full.c_str());
  archive_entry_set_filetype(entry.get(), type);
  archive_entry_set_perm(entry.get(), perm);
  return entry;
}

// Why libarchive failed: the system's word when there is one.
std::string why(archive* a) {
  if (!a) return "out of memory";
  if (int error = archive_errno(a); error > 0) return std::strerror(error);
  const char* text = archive_error_string(a);
  return text ? text : "libarchive gave no reason";
}

}  // namespace

struct OutputUnpacker::Reading {
  explicit Reading(const std::string& into) : coroutine([this] { run(); }) {
    std::error_code error;
    root = std::filesystem::canonical(into, error).string();
    if (error) result.error = fmt::format("{}: {}", into, error.message());
  }
  ~Reading() {
    // libarchive's objects live on the coroutine's stack: end it cleanly.
    ended = true;
    coroutine.resume();
  }

  // The coroutine's body: every member of the stream, until its end or
  // a failure that ends the reading.
  void run() {
    if (!result.error.empty()) return;
    Archive reader(archive_read_new(), &archive_read_free);
    if (!reader) {
      result.error = "out of memory";
      return;
    }
    archive_read_support_format_tar(reader.get());
    archive_read_support_format_empty(reader.get());
    if (archive_read_open(reader.get(), this, nullptr, &Reading::read_more, nullptr) !=
        ARCHIVE_OK) {
      result.error = "the tar stream from the host is not one: " + why(reader.get());
      return;
    }
    for (std::size_t members = 0;;) {
      archive_entry* member = nullptr;
      int status = archive_read_next_header(reader.get(), &member);
      if (status == ARCHIVE_EOF) return;
      if (status < ARCHIVE_WARN) {
        result.error = "the tar stream from the host is broken: " + why(reader.get());
        return;
      }
      if (++members > k_output_member_limit) {
        result.error =
            fmt::format("the stream holds more than {} members; the rest was not unpacked",
                        k_output_member_limit);
        return;
      }
      if (!unpack(reader.get(), member)) return;
    }
  }

  // libarchive's read callback: what has arrived, or a pause until more
  // does; 0 at the stream's end.
  static la_ssize_t read_more(archive*, void* self_pointer, const void** buffer) {
    Reading& self = *static_cast<Reading*>(self_pointer);
    while (self.pending.empty() && !self.ended) self.coroutine.yield();
    // libarchive needs what it was given until it asks again.
    self.serving.swap(self.pending);
    self.pending.clear();
    *buffer = self.serving.data();
    return static_cast<la_ssize_t>(self.serving.size());
  }

  // One member; false when the stream broke in it.
  bool unpack(archive* reader, archive_entry* member) {
    const char* raw = archive_entry_pathname(member);
    if (!raw) raw = archive_entry_pathname_utf8(member);
    if (!raw) {
      note(result.refused, refused_more, "a member whose name cannot be read; not brought back");
      return true;
    }
    std::string name = raw;
    Result<std::string> path = output_entry_path(name);
    if (!path) {
      refuse(name, path.status().message());
      return true;
    }
    if (const char* target = archive_entry_hardlink(member)) {
      link(*path, target);
      return true;
    }
    switch (archive_entry_filetype(member)) {
      case AE_IFREG:
        if (path->empty()) {
          refuse(name, "a file that names the folder itself");
          return true;
        }
        if (archive_entry_sparse_count(member) > 0) {
          refuse(name, "a sparse file");
          return true;
        }
        return write_file(reader, member, *path);
      case AE_IFDIR:
        make_directory(*path);
        return true;
      case AE_IFLNK:
        refuse(name, "a symbolic link, which is never followed here");
        return true;
      default:
        refuse(name, "not a regular file or a folder");
        return true;
    }
  }

  bool write_file(archive* reader, archive_entry* member, const std::string& path) {
    std::string full = root + "/" + path;
    // Readable and writable by its owner, executable if it was; no more.
    Entry entry = clean_entry(full, AE_IFREG, (archive_entry_perm(member) & 0755) | 0600);
    if (entry) {
      archive_entry_set_size(entry.get(), archive_entry_size(member));
      if (archive_entry_mtime_is_set(member))
        archive_entry_set_mtime(entry.get(), archive_entry_mtime(member), 0);
    }
    Archive disk = disk_writer();
    std::string failure;
    bool made = false;
    if (!entry || !disk || archive_write_header(disk.get(), entry.get()) < ARCHIVE_WARN)
      failure = why(disk.get());
    else
      made = true;
    Sha256 digest;
    std::uint64_t size = 0;
    block.resize(k_block_bytes);
    while (true) {
      la_ssize_t got = archive_read_data(reader, block.data(), block.size());
      if (got == 0) break;
      if (got < 0) {
        // The rest of the stream cannot be read: neither can this file.
        if (made) ::unlink(full.c_str());
        forget(path);
        result.error = fmt::format("the tar stream from the host broke in {}: {}",
                                   printable(path), why(reader));
        return false;
      }
      std::string_view bytes(block.data(), static_cast<std::size_t>(got));
      digest.add(bytes);
      size += bytes.size();
      if (failure.empty() && archive_write_data(disk.get(), bytes.data(), bytes.size()) != got)
        failure = why(disk.get());
    }
    if (failure.empty() && archive_write_finish_entry(disk.get()) < ARCHIVE_WARN)
      failure = why(disk.get());
    if (failure.empty()) {
      record({path, size, digest.hex()});
      return true;
    }
    // Nothing half-written stays, and the members after it still come.
    disk.reset();
    if (made) ::unlink(full.c_str());
    forget(path);
    note(result.unwritten, unwritten_more, printable(path) + ": " + failure);
    return true;
  }

  void make_directory(const std::string& path) {
    if (path.empty()) return;
    Entry entry = clean_entry(root + "/" + path, AE_IFDIR, 0755);
    Archive disk = disk_writer();
    if (!entry || !disk || archive_write_header(disk.get(), entry.get()) < ARCHIVE_WARN ||
        archive_write_finish_entry(disk.get()) < ARCHIVE_WARN) {
      note(result.unwritten, unwritten_more, printable(path) + "/: " + why(disk.get()));
      return;
    }
    // A file of that name, if one came before, is gone.
    forget(path);
  }

  // A hard link joins `path` to a file this stream brought (tar makes one
  // for a file named twice); to anything else it is refused.
  void link(const std::string& path, std::string_view target_name) {
    Result<std::string> target = output_entry_path(target_name);
    auto found = target ? written.find(*target) : written.end();
    if (found == written.end()) {
      refuse(path, fmt::format("a hard link to {}, which did not come before it",
                               printable(target_name)));
      return;
    }
    if (*target == path) return;
    OutputFile file = result.files[found->second];
    Entry entry = clean_entry(root + "/" + path, AE_IFREG, 0644);
    if (entry) archive_entry_set_hardlink(entry.get(), (root + "/" + *target).c_str());
    Archive disk = disk_writer();
    if (!entry || !disk || archive_write_header(disk.get(), entry.get()) < ARCHIVE_WARN ||
        archive_write_finish_entry(disk.get()) < ARCHIVE_WARN) {
      note(result.unwritten, unwritten_more, printable(path) + ": " + why(disk.get()));
      forget(path);
      return;
    }
    file.path = path;
    record(std::move(file));
  }

  void refuse(std::string_view name, const std::string& why_not) {
    note(result.refused, refused_more,
         printable(name) + ": " + why_not + "; not brought back");
  }

  // Keeps `text` in `notes` while there are few; counts the rest.
  static void note(std::vector<std::string>& notes, std::size_t& more, std::string text) {
    if (notes.size() < k_output_note_limit)
      notes.push_back(std::move(text));
    else
      ++more;
  }

  void record(OutputFile file) {
    auto [at, fresh] = written.try_emplace(file.path, result.files.size());
    if (fresh)
      result.files.push_back(std::move(file));
    else
      result.files[at->second] = std::move(file);
  }

  // `path` is no longer what was recorded of it (it was replaced).
  void forget(const std::string& path) {
    auto found = written.find(path);
    if (found == written.end()) return;
    std::size_t index = found->second;
    written.erase(found);
    result.files.erase(result.files.begin() + static_cast<std::ptrdiff_t>(index));
    for (auto& [name, at] : written)
      if (at > index) --at;
  }

  std::string root;  // the folder's real path: no link in it
  Coroutine coroutine;
  std::string pending;  // arrived, not yet given to libarchive
  std::string serving;  // given to libarchive, kept until it asks again
  bool ended = false;   // nothing more will arrive
  std::vector<char> block;
  std::map<std::string, std::size_t> written;  // path -> its place in result.files
  std::size_t refused_more = 0;
  std::size_t unwritten_more = 0;
  UnpackedFiles result;
};

OutputUnpacker::OutputUnpacker(const std::string& into)
    : m_reading(std::make_unique<Reading>(into)) {}

OutputUnpacker::~OutputUnpacker() = default;

void OutputUnpacker::feed(std::string_view bytes) {
  Reading& reading = *m_reading;
  if (!reading.coroutine.usable() || reading.coroutine.ended() || reading.ended) return;
  reading.pending.append(bytes);
  reading.coroutine.resume();
}

UnpackedFiles OutputUnpacker::finish() {
  Reading& reading = *m_reading;
  reading.ended = true;
  reading.coroutine.resume();
  UnpackedFiles result = std::move(reading.result);
  if (!reading.coroutine.usable() && result.error.empty())
    result.error = "no memory to unpack the files that came back";
  if (reading.refused_more > 0)
    result.refused.push_back(fmt::format("and {} more", reading.refused_more));
  if (reading.unwritten_more > 0)
    result.unwritten.push_back(fmt::format("and {} more", reading.unwritten_more));
  return result;
}

UnpackedFiles unpack_outputs(std::string_view stream, const std::string& into) {
  OutputUnpacker unpacker(into);
  unpacker.feed(stream);
  return unpacker.finish();
}

}  // namespace runner
