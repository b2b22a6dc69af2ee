// Keeps the journal's checkpoint (report/campaign_index) up to date beside a
// run, so that `runner status` during and after a long run reads little:
// when the run log asks (every k_checkpoint_every_bytes of journal, and each
// time the journal is sealed: state/run_log.h), a child process reads what
// came after the checkpoint and writes a new one while the run goes on.
//
// Threading: none.
#pragma once

#include <sys/types.h>

#include <string>

namespace runner {

class JournalCheckpointer {
 public:
  explicit JournalCheckpointer(std::string state_dir) : m_state_dir(std::move(state_dir)) {}
  JournalCheckpointer(const JournalCheckpointer&) = delete;
  JournalCheckpointer& operator=(const JournalCheckpointer&) = delete;
  // Waits for a child still at work.
  ~JournalCheckpointer();

  // In a child process, unless one is still at work; false then, or when
  // no child could be started (the checkpoint stays as it is).
  bool refresh_in_background();

 private:
  bool child_at_work();

  std::string m_state_dir;
  pid_t m_child = -1;
};

}  // namespace runner
