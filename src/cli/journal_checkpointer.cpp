// The journal's checkpoint, brought up to date by a forked child or by the
// run itself.
#include "runner/cli/journal_checkpointer.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <exception>

#include "runner/report/campaign_index.h"

namespace runner {

JournalCheckpointer::~JournalCheckpointer() {
  if (m_child > 0)
    while (waitpid(m_child, nullptr, 0) < 0 && errno == EINTR) {
    }
}

bool JournalCheckpointer::child_at_work() {
  if (m_child <= 0) return false;
  pid_t done = waitpid(m_child, nullptr, WNOHANG);
  if (done == 0) return true;
  m_child = -1;
  return false;
}

bool JournalCheckpointer::refresh_in_background() {
  if (child_at_work()) return false;
  pid_t pid = fork();
  if (pid != 0) {
    m_child = pid;
    return pid > 0;
  }
  // The child: the run's connections and descriptors are left alone, and
  // nothing of the run's is torn down (_exit); a Ctrl-C ends it.
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) ::signal(signal, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  // A journal that cannot be read now is read by the next reader.
  static_cast<void>(read_recent_records(m_state_dir, /*checkpoint_after=*/1));
  _exit(0);
}

}  // namespace runner
