// SshConfigResolver: `ssh -G` run for several hosts at once, its answers
// read by parse_ssh_g_output, its errors turned into failures that name the
// file and line; the built-in parser when the ssh client cannot be run.
// Threading: none; resolve() blocks while the `ssh -G` processes run.
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <sstream>

#include "runner/exec/ssh/ssh_config.h"
#include "ssh_config_text.h"

extern char** environ;

namespace runner {

namespace {

using namespace ssh_config_text;

// How many `ssh -G` run at once.
constexpr size_t k_parallel_lookups = 8;

// What went wrong, from what `ssh -G` printed on stderr, and the first place
// in a file it names.
struct SshComplaint {
  std::string text;
  std::string file;  // empty when no line of it names one
  int line = 0;
};

// `ssh` prints "Pseudo-terminal will not be allocated ..." when stdin is not
// a terminal; the rest of stderr is what went wrong.
SshComplaint meaningful_stderr(const std::string& text) {
  SshComplaint complaint;
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line.find("Pseudo-terminal will not be allocated") != std::string::npos) {
      continue;
    }
    if (line.find("terminating, ") != std::string::npos) continue;
    // "FILE: line N: message" or "FILE line N: message"
    size_t at = line.find(" line ");
    if (complaint.line == 0 && at != std::string::npos && at > 0) {
      size_t number_end = line.find(':', at + 6);
      std::optional<int> number =
          number_end == std::string::npos
              ? std::nullopt
              : parse_number(std::string_view(line).substr(at + 6, number_end - at - 6));
      if (number) {
        std::string file = line.substr(0, at);
        if (!file.empty() && file.back() == ':') file.pop_back();
        complaint.file = file;
        complaint.line = *number;
        lines.push_back(std::string(trim(std::string_view(line).substr(number_end + 1))));
        continue;
      }
    }
    lines.push_back(line);
  }
  for (const std::string& line : lines) {
    complaint.text += (complaint.text.empty() ? "" : "; ") + line;
  }
  return complaint;
}

// One `ssh -G` process and what it printed.
struct Lookup {
  size_t index = 0;
  pid_t pid = -1;
  int out = -1;
  int err = -1;
  std::string out_text;
  std::string err_text;
  int spawn_error = 0;
};

void start_lookup(Lookup& lookup, const std::vector<std::string>& args) {
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    lookup.spawn_error = errno;
    return;
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    lookup.spawn_error = errno;
    close(out_pipe[0]);
    close(out_pipe[1]);
    return;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  int rc = posix_spawnp(&lookup.pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) {
    lookup.spawn_error = rc;
    lookup.pid = -1;
    close(out_pipe[0]);
    close(err_pipe[0]);
    return;
  }
  lookup.out = out_pipe[0];
  lookup.err = err_pipe[0];
}

// Reads both pipes of every lookup until each is closed.
void drain(std::vector<Lookup*>& running) {
  while (true) {
    std::vector<pollfd> fds;
    std::vector<std::pair<Lookup*, bool>> owners;
    for (Lookup* lookup : running) {
      if (lookup->out >= 0) {
        fds.push_back({lookup->out, POLLIN, 0});
        owners.emplace_back(lookup, true);
      }
      if (lookup->err >= 0) {
        fds.push_back({lookup->err, POLLIN, 0});
        owners.emplace_back(lookup, false);
      }
    }
    if (fds.empty()) return;
    if (poll(fds.data(), fds.size(), 30000) <= 0 && errno != EINTR) {
      // `ssh -G` never waits on the network; something is badly wrong.
      for (auto& [lookup, is_out] : owners) {
        int& fd = is_out ? lookup->out : lookup->err;
        if (fd >= 0) close(fd);
        fd = -1;
        if (lookup->pid > 0) kill(lookup->pid, SIGKILL);
      }
      return;
    }
    for (size_t i = 0; i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      auto [lookup, is_out] = owners[i];
      char buffer[8192];
      ssize_t got = read(fds[i].fd, buffer, sizeof buffer);
      if (got > 0) {
        (is_out ? lookup->out_text : lookup->err_text).append(buffer, static_cast<size_t>(got));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        close(fds[i].fd);
        (is_out ? lookup->out : lookup->err) = -1;
      }
    }
  }
}

int wait_exit(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

SshConfigResolver::SshConfigResolver(SshConfigSource source)
    : m_source(std::move(source)), m_local(local_token_values(m_source.home)) {}

std::vector<Result<SshHostConfig>> SshConfigResolver::resolve(
    const std::vector<SshQuery>& queries) {
  // Empty while ssh has not answered for the query.
  std::vector<std::optional<Result<SshHostConfig>>> answers(queries.size());
  std::vector<Lookup> lookups(queries.size());
  size_t next = 0;
  while (next < queries.size() && m_have_ssh.value_or(true)) {
    std::vector<Lookup*> running;
    for (; next < queries.size() && running.size() < k_parallel_lookups; ++next) {
      Lookup& lookup = lookups[next];
      lookup.index = next;
      start_lookup(lookup, ssh_g_arguments(m_source, queries[next]));
      if (lookup.pid < 0) {
        if (lookup.spawn_error == ENOENT || lookup.spawn_error == EACCES) {
          m_have_ssh = false;
          m_note = fmt::format(
              "the ssh client ({}) cannot be run ({}): reading the ssh configuration with "
              "runner's built-in parser, which understands Host, Match host/user, Include "
              "and the usual keywords; install openssh-client for full `ssh -G` resolution",
              m_source.ssh_program, std::strerror(lookup.spawn_error));
          ++next;
          break;
        }
        answers[next] = Status::error(fmt::format("cannot run {}: {}", m_source.ssh_program,
                                                  std::strerror(lookup.spawn_error)));
        continue;
      }
      running.push_back(&lookup);
    }
    drain(running);
    for (Lookup* lookup : running) {
      int status = wait_exit(lookup->pid);
      std::optional<Result<SshHostConfig>>& answer = answers[lookup->index];
      const SshQuery& query = queries[lookup->index];
      if (status == 0) {
        m_have_ssh = true;
        answer = parse_ssh_g_output(lookup->out_text, query, m_local);
        continue;
      }
      SshComplaint complaint = meaningful_stderr(lookup->err_text);
      const std::string& why = complaint.text;
      if (status == 127 || why.find("illegal option -- G") != std::string::npos ||
          why.find("unknown option -- G") != std::string::npos) {
        m_have_ssh = false;
        m_note = fmt::format(
            "{} cannot resolve the ssh configuration (`ssh -G` failed: {}): reading it with "
            "runner's built-in parser, which understands Host, Match host/user, Include and "
            "the usual keywords",
            m_source.ssh_program, why.empty() ? fmt::format("status {}", status) : why);
        continue;
      }
      answer = Status::at(
          complaint.file, complaint.line,
          fmt::format("the ssh configuration for {} cannot be read: {}", query.host,
                      why.empty() ? fmt::format("ssh -G exited with status {}", status) : why));
    }
  }
  // Those ssh did not answer for, as it cannot be run or has no -G: the
  // built-in parser.
  std::vector<Result<SshHostConfig>> resolved;
  resolved.reserve(queries.size());
  for (size_t i = 0; i < queries.size(); ++i) {
    resolved.push_back(answers[i] ? std::move(*answers[i])
                                  : resolve_with_builtin_parser(m_source, queries[i], m_local));
  }
  return resolved;
}

}  // namespace runner
