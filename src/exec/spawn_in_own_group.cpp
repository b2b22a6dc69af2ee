// Starting a user's process in a group of its own (see spawn_in_own_group.h).
//
// posix_spawn is not enough: between its fork and its setpgid the child is
// still in runner's process group with every signal blocked, so a Ctrl-C
// typed in that moment stays pending in the child and kills it once the
// signal mask is lifted. Here the child leaves the group first, then sets
// each of those signals to "ignore" (which discards one pending) and back to
// its default, and only then unblocks signals and runs the program.
//
// Like posix_spawn, this uses vfork: the child borrows runner's memory
// until it runs the program, and runner waits until then, so a start costs
// no copy of runner's page tables. The child therefore only makes system
// calls, with every signal blocked until no handler of runner's is left.
#include "spawn_in_own_group.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

extern char** environ;

namespace runner {

namespace {

constexpr int k_reset_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGPIPE, SIGCHLD};

// Makes `from` the child's descriptor `to`, kept across exec.
bool install_stream(int from, int to) {
  if (from == k_kept_stream) return true;
  if (from != to) return dup2(from, to) == to;
  return fcntl(to, F_SETFD, 0) == 0;
}

// In the child, between vfork and exec: system calls only, no allocation.
[[noreturn]] void become(const char* path, const char* const argv[], const ChildStreams& streams,
                         const char* const environment[], int report_fd) {
  int error = 0;
  if (setpgid(0, 0) != 0) error = errno;
  struct sigaction ignore = {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction fresh = {};
  fresh.sa_handler = SIG_DFL;
  for (int signal : k_reset_signals) {
    sigaction(signal, &ignore, nullptr);
    sigaction(signal, &fresh, nullptr);
  }
  // No handler of runner's may run in the child: it would run on runner's memory.
  for (int signal = 1; signal < NSIG; ++signal) {
    struct sigaction current = {};
    if (sigaction(signal, nullptr, &current) == 0 && current.sa_handler != SIG_IGN &&
        current.sa_handler != SIG_DFL)
      sigaction(signal, &fresh, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  if (error == 0 && sigprocmask(SIG_SETMASK, &none, nullptr) != 0) error = errno;
  if (error == 0 && !(install_stream(streams.input, 0) && install_stream(streams.output, 1) &&
                      install_stream(streams.error, 2)))
    error = errno;
  if (error == 0) {
    execve(path, const_cast<char* const*>(argv),
           environment ? const_cast<char* const*>(environment) : environ);
    error = errno;
  }
  ssize_t written = write(report_fd, &error, sizeof error);
  (void)written;
  _exit(127);
}

}  // namespace

int spawn_in_own_group(pid_t& pid, const char* path, const char* const argv[],
                       const ChildStreams& streams, const char* const environment[]) {
  // Closed by a successful exec: end of file says the program runs.
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return errno;
  // No signal may be handled in the child before it has left runner's
  // group, dropped what was meant for runner and reset runner's handlers.
  sigset_t all, previous;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, &previous);
  pid = vfork();
  if (pid == 0) become(path, argv, streams, environment, report[1]);
  // Here the child runs its program, or has exited: it is in its own group
  // already, so runner need not call setpgid for it.
  int vfork_error = errno;
  sigprocmask(SIG_SETMASK, &previous, nullptr);
  close(report[1]);
  if (pid < 0) {
    close(report[0]);
    return vfork_error;
  }
  int child_error = 0;
  ssize_t got;
  do got = read(report[0], &child_error, sizeof child_error);
  while (got < 0 && errno == EINTR);
  close(report[0]);
  if (got <= 0) return 0;
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  pid = -1;
  return child_error != 0 ? child_error : ECHILD;
}

std::string program_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string candidate = dirs.substr(start, end - start) + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return program;
}

}  // namespace runner
