#include "support/small_tmpfs.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

namespace runner::testing {

SmallTmpfs::SmallTmpfs(std::string dir, const std::string& size) : m_dir(std::move(dir)) {
  std::error_code ignored;
  std::filesystem::create_directories(m_dir, ignored);
  std::string options = "size=" + size + ",mode=0755";
  if (::mount("tmpfs", m_dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) == 0) {
    m_mounted = true;
  } else {
    m_error = "mount -t tmpfs -o " + options + " tmpfs " + m_dir + ": " + std::strerror(errno);
  }
}

SmallTmpfs::~SmallTmpfs() {
  // Lazily, so that a process still inside (a runner the test left) does
  // not keep it mounted.
  if (m_mounted) ::umount2(m_dir.c_str(), MNT_DETACH);
}

bool SmallTmpfs::fill() {
  int fd = ::open((m_dir + "/.filler").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  std::vector<char> block(64 * 1024, 'f');
  std::size_t size = block.size();
  // Smaller and smaller writes take the last free pages too.
  while (size > 0) {
    ssize_t n = ::write(fd, block.data(), size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) size /= 2;
  }
  bool full = errno == ENOSPC;
  ::close(fd);
  return full;
}

void SmallTmpfs::free_space() { ::unlink((m_dir + "/.filler").c_str()); }

bool setup_required() {
  const char* ci = std::getenv("CI");
  return ci && std::string(ci) == "true";
}

}  // namespace runner::testing
