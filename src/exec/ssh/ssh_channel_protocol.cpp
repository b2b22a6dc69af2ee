// ChannelProtocol: what every channel that runs something shares (see
// ssh_channel_protocol.h). Every libssh2 call is non-blocking, as in
// ssh_connection.cpp. Threading: none.
#include "ssh_channel_protocol.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include "runner/exec/launcher.h"
#include "runner/exec/shell.h"

namespace runner::ssh {

namespace {

// Output before the wrapper's "runner-pgid" line (login-shell noise) is
// passed on line by line; past this much without it, stop looking.
constexpr size_t k_max_head = 64 * 1024;

}  // namespace

ChannelProtocol::ChannelProtocol(ChannelContext& context, ChannelPool& pool)
    : m_context(context), m_pool(pool), m_random(std::random_device{}()) {}

Outcome ChannelProtocol::send_exec(Channel& channel, bool& answer_lost) {
  ExecChannel& exec = channel.exec();
  answer_lost = false;
  int rc = libssh2_channel_process_startup(channel.handle, "exec", 4, exec.request.data(),
                                           static_cast<unsigned>(exec.request.size()));
  if (rc == 0) return Outcome::progressed;
  if (rc == LIBSSH2_ERROR_SOCKET_NONE && !m_context.inbound().peer_closed &&
      m_context.inbound().socket_errno == 0) {
    // libssh2 1.10 in non-blocking mode sometimes loses the server's answer
    // to an exec request and returns -1 although the session is fine
    // (libssh2 issue 671). Only this channel is gone.
    answer_lost = true;
    return Outcome::progressed;
  }
  Outcome outcome = m_context.classify(rc, &channel);
  if (outcome != Outcome::progressed) return outcome;
  if (channel.work.kind == ChannelWork::Kind::job && !channel.silent) {
    m_context.sink().task_exited(
        channel.work.job,
        JobExit::failed_because(fmt::format("{}: the server refused to run the command: {}",
                                            m_context.display(), last_error(m_context.session()))));
  }
  channel.silent = true;
  channel.step = Channel::Step::release;
  return Outcome::progressed;
}

void ChannelProtocol::start_markers(Channel& channel) {
  ExecChannel& exec = channel.exec();
  std::uniform_int_distribution<unsigned long long> bits;
  std::string token = fmt::format("runner-end-{:016x}", bits(m_random));
  exec.out_marker = std::make_unique<EndMarkerScanner>(token);
  exec.err_marker = std::make_unique<EndMarkerScanner>(token);
}

Outcome ChannelProtocol::write_stdin(Channel& channel) {
  ExecChannel& exec = channel.exec();
  while (exec.line_sent < exec.line.size()) {
    ssize_t written = libssh2_channel_write(channel.handle, exec.line.data() + exec.line_sent,
                                            exec.line.size() - exec.line_sent);
    if (written > 0) {
      exec.line_sent += static_cast<size_t>(written);
      m_context.note_progress();
      continue;
    }
    if (written == 0) return Outcome::blocked;
    Outcome outcome = m_context.classify(static_cast<int>(written), &channel);
    if (outcome != Outcome::progressed) return outcome;
    // The channel refused the data: the shell is gone; its EOF follows.
    break;
  }
  exec.line.clear();
  exec.line_sent = 0;
  return Outcome::progressed;
}

Outcome ChannelProtocol::read_channel(Channel& channel) {
  // A share of each stream is gathered before it is passed on, so that a job
  // that writes fast reaches its log in few large writes. A job that writes
  // as fast as the link carries would otherwise keep this loop (and the
  // whole event loop) to itself: after a share, come back at once
  // (note_progress) for the rest. One buffer serves every connection.
  static thread_local std::vector<char> buffer(k_output_share);
  for (int stream : {0, SSH_EXTENDED_DATA_STDERR}) {
    size_t filled = 0;
    ssize_t got = 0;
    while (filled < buffer.size()) {
      got = libssh2_channel_read_ex(channel.handle, stream, buffer.data() + filled,
                                    buffer.size() - filled);
      if (got <= 0) break;
      filled += static_cast<size_t>(got);
    }
    if (filled > 0) {
      m_context.note_progress();
      take_channel_output(channel, stream, std::string_view(buffer.data(), filled));
    }
    if (got < 0) {
      Outcome outcome = m_context.classify(static_cast<int>(got), &channel);
      if (outcome == Outcome::broken || m_pool.blocked_on(channel)) return outcome;
    }
  }
  return Outcome::blocked;
}

void ChannelProtocol::take_channel_output(Channel& channel, int stream, std::string_view bytes) {
  ExecChannel& exec = channel.exec();
  int index = stream == 0 ? 0 : 1;
  EndMarkerScanner* marker = index == 0 ? exec.out_marker.get() : exec.err_marker.get();
  if (!marker) return;
  std::string rest;
  if (!exec.ready[index]) {
    // The login shell's start-up output (a .bashrc banner) is no work's;
    // the end of its stderr is kept to say why a shell did not run.
    bool ready = marker->feed(bytes, [&](std::string_view part) {
      if (index == 1) exec.noise = keep_tail(exec.noise + std::string(part), k_kept_words);
    });
    if (!ready) return;
    exec.ready[index] = true;
    rest = marker->take_rest();
    marker->reset();
    bytes = rest;
    if (bytes.empty()) return;
  }
  if (!exec.launcher && channel.work.kind == ChannelWork::Kind::job) {
    take_output(channel, stream, bytes);
    return;
  }
  // Between jobs nothing is expected; what comes (a finished job's
  // background processes writing on) belongs to no job.
  if (channel.idle()) return;
  marker->feed(bytes, [&](std::string_view part) { take_output(channel, stream, part); });
}

void ChannelProtocol::take_output(Channel& channel, int stream, std::string_view bytes) {
  ExecChannel& exec = channel.exec();
  if (stream == 0) {
    handle_stdout(channel, bytes);
  } else if (channel.work.kind == ChannelWork::Kind::job && !channel.silent) {
    m_context.sink().task_output(channel.work.job, OutputStream::err, bytes);
  } else if (channel.work.kind == ChannelWork::Kind::signal) {
    exec.control_errors = keep_tail(exec.control_errors + std::string(bytes), k_kept_words);
  }
}

void ChannelProtocol::handle_stdout(Channel& channel, std::string_view bytes) {
  ExecChannel& exec = channel.exec();
  if (channel.work.kind != ChannelWork::Kind::job || channel.silent) return;
  TaskId job = channel.work.job;
  if (exec.pgid_known) {
    m_context.sink().task_output(job, OutputStream::out, bytes);
    return;
  }
  // Hold everything until the wrapper's line: lines before it come from the
  // login shell's start-up files and are passed on after task_started.
  exec.head.append(bytes);
  size_t& line_start = exec.head_scanned;
  size_t newline;
  while ((newline = exec.head.find('\n', line_start)) != std::string::npos) {
    std::string_view line(exec.head.data() + line_start, newline + 1 - line_start);
    if (std::optional<long> pgid = parse_pgid_line(line)) {
      std::string text = std::exchange(exec.head, {});
      // On a launcher that ran a job before, what came first is that job's
      // stray output, not this one's.
      size_t from = exec.drop_head ? 0 : line_start;
      text.erase(from, newline + 1 - from);
      exec.pgid_known = true;
      exec.pgid = *pgid;
      m_context.sink().task_started(job, *pgid);
      for (int signal : std::exchange(exec.pending_signals, {})) send_signal(channel, signal);
      if (!text.empty()) m_context.sink().task_output(job, OutputStream::out, text);
      return;
    }
    line_start = newline + 1;
  }
  if (exec.head.size() > k_max_head) {
    exec.pgid_known = true;
    m_context.sink().task_output(job, OutputStream::out, std::exchange(exec.head, {}));
  }
}

void ChannelProtocol::release_head(Channel& channel) {
  ExecChannel& exec = channel.exec();
  std::string head = std::exchange(exec.head, {});
  if (!head.empty() && !exec.drop_head)
    m_context.sink().task_output(channel.work.job, OutputStream::out, head);
}

std::string ChannelProtocol::login_shell_failure(int status) const {
  return fmt::format(
      "{}: the job did not start: the login shell of {} ended (status {}) without running the "
      "command; is it a POSIX shell that accepts `-c`?",
      m_context.display(), m_context.target().user, status);
}

void ChannelProtocol::control_ended(const Channel& channel, int shell_status) {
  const ExecChannel& exec = channel.exec();
  const EndMarkerScanner& marker = *exec.out_marker;
  if (marker.ended() && marker.status() == 0) return;
  std::string why;
  if (!exec.ready[0] || !marker.ended()) {
    why = fmt::format("{}: the login shell of {} ended (status {}) without running `kill`",
                      m_context.display(), m_context.target().user, shell_status);
    if (std::string said = last_line(exec.noise); !said.empty()) why += ": " + said;
  } else {
    why = fmt::format("{}: `kill` failed (status {})", m_context.display(), marker.word());
    if (std::string said = last_line(exec.control_errors); !said.empty()) why += ": " + said;
  }
  m_context.sink().signal_failed(channel.work.job, channel.work.signal, why);
}

void ChannelProtocol::send_signal(Channel& channel, int signal) {
  ChannelWork work;
  work.kind = ChannelWork::Kind::signal;
  work.job = channel.work.job;
  work.pgid = channel.exec().pgid;
  work.signal = signal;
  if (!m_pool.has_room()) {
    // No room for another channel here; any connection to the host will do.
    m_pool.give_back(std::move(work));
  } else {
    m_pool.add(std::move(work));
    m_context.note_progress();
  }
}

}  // namespace runner::ssh
