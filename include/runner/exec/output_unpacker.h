// The tar stream of a job's outputs from its host, unpacked into the job's
// outputs folder as it arrives, member by member, with libarchive (only
// the tar formats; no filters). Nothing a host sends is trusted: a name
// passes output_entry_path (nothing lands outside the folder); a symbolic
// link, a device, a FIFO or a sparse file is refused; no parent is
// followed through a link (ARCHIVE_EXTRACT_SECURE_SYMLINKS); files belong
// to runner's user, with no set-uid, set-gid or sticky bit and nothing
// writable by others; a hard link only ever joins two files of the same
// stream. Each regular file is recorded with its exact name, size and the
// SHA-256 of its bytes, computed as it is written. A file that cannot be
// written here (a full disk) is removed, named with the reason, and the
// members after it are still unpacked.
//
// Threading: none. libarchive pulls its input, the event loop pushes it:
// the reading runs as a Coroutine that feed() resumes with each piece of
// the stream and that pauses whenever it has used up what came.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runner/core/output_file.h"

namespace runner {

// The most members one stream may hold, and the notes kept of each kind.
inline constexpr std::size_t k_output_member_limit = 100000;
inline constexpr std::size_t k_output_note_limit = 50;

// What became of one stream.
struct UnpackedFiles {
  std::vector<OutputFile> files;     // written whole, in the stream's order
  std::vector<std::string> refused;  // members not unpacked: "res/x.csv: a symbolic link, …"
  std::vector<std::string>
      unwritten;      // came, but could not be written here: "big.bin: No space left on device"
  std::string error;  // the stream could not be read to its end: why
};

class OutputUnpacker {
 public:
  // Into the existing folder `into`.
  explicit OutputUnpacker(const std::string& into);
  ~OutputUnpacker();
  OutputUnpacker(const OutputUnpacker&) = delete;
  OutputUnpacker& operator=(const OutputUnpacker&) = delete;

  // The next bytes of the stream; unpacks what they complete.
  void feed(std::string_view bytes);
  // The stream ended; what it held. Called once.
  UnpackedFiles finish();

 private:
  struct Reading;
  std::unique_ptr<Reading> m_reading;
};

// A whole stream at once (tests and fuzzing).
UnpackedFiles unpack_outputs(std::string_view stream, const std::string& into);

}  // namespace runner
