// Private to exec: the tar archive a push sends (ShellHostOps::put_files),
// made by a `tar -c` of its own in a temporary folder while the event loop
// goes on. Hosts that lack the same files share one. The folder, and a tar
// still at work, go with the archive's last holder. Threading: none.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runner/core/result.h"
#include "runner/core/status.h"
#include "runner/exec/push_plan.h"

namespace runner {

class PushArchive {
 public:
  // The archive of `files`: one being made or sent already, or a new one
  // whose tar has started. An error when it cannot be started.
  static Result<std::shared_ptr<PushArchive>> of(const std::vector<PushFile>& files);
  // Kills a tar still at work and removes the folder.
  ~PushArchive();
  PushArchive(const PushArchive&) = delete;
  PushArchive& operator=(const PushArchive&) = delete;

  // The archive's file; whole once made() says so.
  std::string path() const { return m_folder + "/push.tar"; }
  // While tar runs, a descriptor that becomes readable when it ends; -1 after.
  int pending_fd() const { return m_pidfd; }
  // nullopt while tar runs; then whether it made the archive, or what tar said.
  std::optional<Status> made();

 private:
  PushArchive() = default;
  Status start(const std::vector<PushFile>& files);

  std::string m_folder;
  pid_t m_pid = -1;
  int m_pidfd = -1;
  std::optional<Status> m_made;
};

}  // namespace runner
