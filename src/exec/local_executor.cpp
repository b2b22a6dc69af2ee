// Local slots: each job is `sh -c <command>` spawned as a child in its own
// process group, stdin from /dev/null (opened once for all of them) or the
// file a task reads, stdout and stderr through non-blocking pipes; a pidfd
// tells when it exits. The job ends when its shell exits, as over SSH:
// processes it left running may hold the pipes, and what they write
// afterwards is not kept.
#include "runner/exec/local_executor.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <utility>

#include "local_launch.h"
#include "runner/core/file_system.h"
#include "runner/core/process_group.h"
#include "runner/exec/docker_exec.h"
#include "spawn_in_own_group.h"

namespace runner {

namespace {

std::string signal_name(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev ? abbrev : fmt::format("SIG{}", signal);
}

// One running child: its pipes and pidfd; -1 once closed.
struct LocalJob {
  pid_t pid = -1;
  int pidfd = -1;
  std::array<int, 2> pipes{-1, -1};  // stdout, stderr read ends
};

class LocalExecutor final : public Executor {
 public:
  LocalExecutor(int host, ExecutorEvents& events, std::unique_ptr<LocalLaunch> launch)
      : Executor(host, events), m_launch(std::move(launch)) {}

  ~LocalExecutor() override {
    for (auto& [id, job] : m_jobs) {
      kill(-job.pid, SIGKILL);
      waitpid(job.pid, nullptr, 0);
      close_job_fds(job);
    }
  }

  void connect() override { report_ready(); }

  void start_task(JobId id, const std::string& command) override {
    start_task_on_slots(id, command, 1);
  }

  void start_task_on_slots(JobId id, const std::string& command, int slots) override {
    launch(id, command, slots, std::nullopt);
  }

  void start_task_reading(JobId id, const std::string& command,
                          const std::string& input) override {
    launch(id, command, 1, input);
  }

  void signal_task(JobId id, int signal) override {
    auto it = m_jobs.find(id);
    if (it == m_jobs.end()) return;
    std::string error = m_launch->deliver(id, it->second.pid, signal);
    if (!error.empty()) report_signal_failed(id, signal, error);
  }

  void shutdown() override {}
  bool idle() const override { return m_jobs.empty(); }
  std::string address() const override { return m_launch->address(); }

  void poll_fds(std::vector<pollfd>& out) override {
    for (auto& [id, job] : m_jobs) {
      for (int fd : job.pipes)
        if (fd >= 0) out.push_back({fd, POLLIN, 0});
      out.push_back({job.pidfd, POLLIN, 0});
    }
  }

  void step(Clock::time_point) override {
    for (auto it = m_jobs.begin(); it != m_jobs.end();) {
      JobId id = it->first;
      LocalJob& job = it->second;
      if (std::optional<JobExit> exit = reap(job, *m_launch)) {
        drain_after_exit(id, job);
        close_job_fds(job);
        it = m_jobs.erase(it);
        report_ending();
        report_exited(id, *exit);
      } else {
        for (int stream = 0; stream < 2; ++stream) drain(id, job, stream, k_output_share);
        ++it;
      }
    }
  }

  std::optional<Clock::time_point> deadline() const override { return std::nullopt; }

 private:
  // Once the launch says that nothing runs here any more, that is said
  // (once) before the end of the task that found it, so that the task is
  // known to be lost with the whole allocation.
  void report_ending() {
    if (m_ending_reported) return;
    Status ending = m_launch->ending();
    if (ending.ok()) return;
    m_ending_reported = true;
    report_failed(ending);
  }

  // Starts the task's process on `slots` slots, its stdin the file `input`,
  // or /dev/null without one.
  void launch(JobId id, const std::string& command, int slots,
              const std::optional<std::string>& input) {
    FileDescriptor input_fd;
    if (input) {
      input_fd = FileDescriptor(open(input->c_str(), O_RDONLY | O_CLOEXEC));
    } else if (!m_null_input.valid()) {
      m_null_input = FileDescriptor(open("/dev/null", O_RDONLY | O_CLOEXEC));
    }
    const FileDescriptor& stdin_fd = input ? input_fd : m_null_input;
    if (!stdin_fd.valid()) {
      report_exited(id, JobExit::not_started_because(fmt::format(
                            "{}: {}", input.value_or("/dev/null"), std::strerror(errno))));
      return;
    }
    LocalJob job;
    std::string error =
        spawn(m_launch->command_for(id, command, slots), stdin_fd.get(), group_mark(id), job);
    if (!error.empty()) {
      report_exited(id, JobExit::not_started_because(error));
      return;
    }
    pid_t pid = job.pid;
    m_jobs.emplace(id, job);
    report_started(id, pid);
  }

  // Starts `launch`, its stdin `stdin_fd`, with runner's environment and
  // `mark` as the job's mark (process_group.h).
  static std::string spawn(const LaunchCommand& launch, int stdin_fd, const std::string& mark,
                           LocalJob& job) {
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0) return fmt::format("pipe: {}", std::strerror(errno));
    if (pipe2(err, O_CLOEXEC) != 0) {
      close(out[0]);
      close(out[1]);
      return fmt::format("pipe: {}", std::strerror(errno));
    }
    std::vector<const char*> argv;
    for (const std::string& word : launch.argv) argv.push_back(word.c_str());
    argv.push_back(nullptr);
    std::string prefix = std::string(k_job_mark_variable) + "=";
    std::string mark_entry = prefix + mark;
    std::vector<const char*> environment;
    for (char** entry = environ; *entry; ++entry)
      if (!std::string_view(*entry).starts_with(prefix)) environment.push_back(*entry);
    environment.push_back(mark_entry.c_str());
    environment.push_back(nullptr);
    int rc = spawn_in_own_group(job.pid, launch.path.c_str(), argv.data(),
                                ChildStreams{stdin_fd, out[1], err[1]}, environment.data());
    close(out[1]);
    close(err[1]);
    if (rc != 0) {
      close(out[0]);
      close(err[0]);
      return fmt::format("cannot run {}: {}", launch.path, std::strerror(rc));
    }
    job.pipes = {out[0], err[0]};
    for (int fd : job.pipes) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    job.pidfd = static_cast<int>(syscall(SYS_pidfd_open, job.pid, 0));
    if (job.pidfd < 0) {
      std::string error =
          fmt::format("pidfd_open: {} (Linux 5.3 or later is needed)", std::strerror(errno));
      kill(-job.pid, SIGKILL);
      waitpid(job.pid, nullptr, 0);
      close_job_fds(job);
      return error;
    }
    return {};
  }

  // Reads up to `limit` bytes of one pipe, as far as it holds any.
  void drain(JobId id, LocalJob& job, int stream, size_t limit) {
    char buffer[65536];
    int& fd = job.pipes[stream];
    for (size_t taken = 0; fd >= 0 && taken < limit;) {
      ssize_t n = read(fd, buffer, std::min(sizeof buffer, limit - taken));
      if (n > 0) {
        taken += static_cast<size_t>(n);
        report_output(id, stream == 0 ? OutputStream::out : OutputStream::err,
                      std::string_view(buffer, static_cast<size_t>(n)));
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        close(std::exchange(fd, -1));
      } else if (errno == EAGAIN) {
        break;
      }
    }
  }

  // Once the shell has exited, everything it wrote is in the pipes, ahead
  // of anything written since: a pipe's capacity holds all of it.
  void drain_after_exit(JobId id, LocalJob& job) {
    for (int stream = 0; stream < 2; ++stream) {
      int fd = job.pipes[stream];
      if (fd < 0) continue;
      int capacity = fcntl(fd, F_GETPIPE_SZ);
      drain(id, job, stream, capacity > 0 ? static_cast<size_t>(capacity) : k_output_share);
    }
  }

  // How the shell ended, once it has.
  static std::optional<JobExit> reap(const LocalJob& job, LocalLaunch& launch) {
    int status = 0;
    if (waitpid(job.pid, &status, WNOHANG) != job.pid) return std::nullopt;
    return launch.exit_of(status);
  }

  static void close_job_fds(LocalJob& job) {
    for (int& fd : job.pipes)
      if (fd >= 0) close(std::exchange(fd, -1));
    if (job.pidfd >= 0) close(std::exchange(job.pidfd, -1));
  }

  std::unique_ptr<LocalLaunch> m_launch;
  std::map<JobId, LocalJob> m_jobs;
  bool m_ending_reported = false;
  FileDescriptor m_null_input;  // /dev/null, the stdin of every task that reads no file
};

}  // namespace

LaunchCommand ShellLaunch::command_for(TaskId, const std::string& command, int) {
  return {"/bin/sh", {"sh", "-c", with_docker_exec_stop(command)}};
}

std::string ShellLaunch::deliver(TaskId, pid_t pgid, int signal) {
  // A group that is gone has ended meanwhile: no failure.
  if (kill(-pgid, signal) != 0 && errno != ESRCH)
    return fmt::format("this machine: kill: {}", std::strerror(errno));
  return {};
}

JobExit ShellLaunch::exit_of(int status) {
  if (WIFSIGNALED(status)) return JobExit::killed(signal_name(WTERMSIG(status)));
  return JobExit::exited(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

std::unique_ptr<Executor> make_local_executor(int host, ExecutorEvents& events,
                                              std::unique_ptr<LocalLaunch> launch) {
  return std::make_unique<LocalExecutor>(host, events, std::move(launch));
}

std::unique_ptr<Executor> make_local_executor(int host, ExecutorEvents& events) {
  return make_local_executor(host, events, std::make_unique<ShellLaunch>());
}

}  // namespace runner
