#include "support/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace runner::testing {

namespace {

int decode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

Process::Process(const ProcessSpec& spec) {
  int out[2], err[2], in[2];
  if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) || pipe2(in, O_CLOEXEC))
    throw std::runtime_error("pipe failed");
  m_pid = fork();
  if (m_pid < 0) throw std::runtime_error("fork failed");
  if (m_pid == 0) {
    setpgid(0, 0);
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (!spec.cwd.empty() && chdir(spec.cwd.c_str()) != 0) _exit(126);
    for (const auto& [key, value] : spec.env) {
      if (value.empty())
        unsetenv(key.c_str());
      else
        setenv(key.c_str(), value.c_str(), 1);
    }
    std::vector<char*> argv;
    for (const auto& a : spec.args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  close(in[0]);
  if (!spec.input.empty()) {
    ssize_t ignored = write(in[1], spec.input.data(), spec.input.size());
    (void)ignored;
  }
  close(in[1]);
  m_out = out[0];
  m_err = err[0];
  fcntl(m_out, F_SETFL, O_NONBLOCK);
  fcntl(m_err, F_SETFL, O_NONBLOCK);
  m_deadline = std::chrono::steady_clock::now() + spec.timeout;
}

Process::~Process() {
  if (!m_done) {
    kill(-m_pid, SIGKILL);
    waitpid(m_pid, nullptr, 0);
  }
  if (m_out >= 0) close(m_out);
  if (m_err >= 0) close(m_err);
}

void Process::signal(int signal) { kill(m_pid, signal); }

void Process::pump(int timeout_ms) {
  pollfd fds[2] = {{m_out, POLLIN, 0}, {m_err, POLLIN, 0}};
  poll(fds, 2, timeout_ms);
  char buffer[65536];
  for (auto [fd, target] : {std::pair{m_out, &m_result.out}, std::pair{m_err, &m_result.err}}) {
    if (fd < 0) continue;
    ssize_t n;
    while ((n = read(fd, buffer, sizeof buffer)) > 0) target->append(buffer, n);
  }
}

std::string Process::peek_out() {
  pump(0);
  return m_result.out;
}

std::string Process::peek_err() {
  pump(0);
  return m_result.err;
}

bool Process::wait_for_output(const std::string& text, std::chrono::milliseconds timeout) {
  auto give_up = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < give_up) {
    pump(50);
    if (m_result.out.find(text) != std::string::npos ||
        m_result.err.find(text) != std::string::npos)
      return true;
  }
  return false;
}

ProcessResult Process::wait() {
  if (m_done) return m_result;
  int status = 0;
  while (true) {
    pump(50);
    pid_t r = waitpid(m_pid, &status, WNOHANG);
    if (r == m_pid) break;
    if (std::chrono::steady_clock::now() > m_deadline) {
      m_result.timed_out = true;
      kill(-m_pid, SIGKILL);
      waitpid(m_pid, &status, 0);
      break;
    }
  }
  // Collect what is left in the pipes (children of the process may still
  // hold them: do not wait for EOF).
  pump(0);
  m_result.status = decode(status);
  m_done = true;
  return m_result;
}

LiveProcess::LiveProcess() {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  m_pid = fork();
  if (m_pid < 0) throw std::runtime_error("fork failed");
  if (m_pid == 0) {
    close(fds[1]);
    char byte;
    while (read(fds[0], &byte, 1) > 0) {
    }
    _exit(0);
  }
  close(fds[0]);
  m_pipe = fds[1];
}

LiveProcess::~LiveProcess() {
  close(m_pipe);
  waitpid(m_pid, nullptr, 0);
}

ProcessResult run_process(const ProcessSpec& spec) {
  Process process(spec);
  return process.wait();
}

std::string sh_output(const std::string& command) {
  return run_process({{"/bin/sh", "-c", "--", command}}).out;
}

ProcessSpec runner_spec(std::vector<std::string> args, const std::string& cwd) {
  ProcessSpec spec;
  spec.args.push_back(RUNNER_BINARY);
  for (auto& a : args) spec.args.push_back(std::move(a));
  spec.cwd = cwd;
  spec.env = {{"NO_COLOR", "1"}, {"SSH_AUTH_SOCK", ""}};
  return spec;
}

namespace {

// A /proc file's contents; empty when the process went away meanwhile.
std::string read_proc_file(const std::filesystem::path& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string text;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof buffer)) > 0) text.append(buffer, n);
  close(fd);
  return text;
}

// Calls `visit(pid, state, pgrp, cmdline)` for every process.
template <typename Visit>
void for_each_process(Visit visit) {
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ignored)) {
    std::string name = entry.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::string line = read_proc_file(entry.path() / "stat");
    auto paren = line.rfind(')');
    if (paren == std::string::npos || paren + 2 > line.size()) continue;
    std::istringstream rest(line.substr(paren + 2));
    char state = '?';
    long ppid = 0, group = 0;
    rest >> state >> ppid >> group;
    std::string cmdline = read_proc_file(entry.path() / "cmdline");
    for (char& c : cmdline)
      if (c == '\0') c = ' ';
    visit(std::stol(name), state, group, cmdline);
  }
}

}  // namespace

int live_group_members(long pgid) {
  int count = 0;
  for_each_process([&](long, char state, long group, const std::string&) {
    if (group == pgid && state != 'Z') ++count;
  });
  return count;
}

int live_processes_running(const std::string& command_line) {
  int count = 0;
  for_each_process([&](long, char state, long, const std::string& cmdline) {
    std::string_view trimmed = cmdline;
    while (!trimmed.empty() && trimmed.back() == ' ') trimmed.remove_suffix(1);
    if (state != 'Z' && trimmed == command_line) ++count;
  });
  return count;
}

std::vector<long> live_processes_starting(const std::string& command_line_start) {
  std::vector<long> pids;
  for_each_process([&](long pid, char state, long, const std::string& cmdline) {
    if (state != 'Z' && cmdline.compare(0, command_line_start.size(), command_line_start) == 0)
      pids.push_back(pid);
  });
  return pids;
}

}  // namespace runner::testing
