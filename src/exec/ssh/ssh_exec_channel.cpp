// Exec channels: a login shell per channel, given one script on its stdin
// (a job's, where the host cannot run launchers, or a signal's `kill`), and
// what every channel that runs something shares with launchers (see
// ssh_launcher_channel.cpp): the exec request, reading output, a job's
// process-group line, its end, and signals to jobs. Threading: none.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <utility>
#include <vector>

#include "runner/exec/launcher.h"
#include "runner/exec/shell.h"
#include "ssh_connection.h"

namespace runner::ssh {

namespace {

// Output before the wrapper's "runner-pgid" line (login-shell noise) is
// passed on line by line; past this much without it, stop looking.
constexpr size_t k_max_head = 64 * 1024;

// How much of a job's input is read from its file at a time.
constexpr size_t k_input_chunk = 64 * 1024;

// The executor takes it as not started unless the job had started.
JobExit not_started(const std::string& why, int signal) {
  return JobExit::failed_because(why, signal_name(signal));
}

}  // namespace

SshConnection::Outcome SshConnection::step_exec(Channel& channel) {
  ExecChannel& exec = channel.exec();
  using Step = Channel::Step;
  if (exec.launcher && (channel.step == Step::exec || channel.step == Step::write_line ||
                        channel.step == Step::run)) {
    Outcome outcome = step_launcher(channel);
    if (outcome == Outcome::broken || m_pool.blocked_on(channel)) return outcome;
    if (channel.step == Step::exec || channel.step == Step::write_line ||
        channel.step == Step::run) {
      return Outcome::blocked;
    }
  }
  if (channel.step == Step::exec) {
    if (channel.idle() || channel.silent) {
      channel.step = Step::release;
    } else {
      if (exec.request.empty()) exec.request = std::string(k_login_command);
      channel.exec_attempted = true;
      bool answer_lost = false;
      Outcome outcome = send_exec(channel, answer_lost);
      if (outcome != Outcome::progressed) return outcome;
      if (answer_lost) {
        // Its script never went out, so nothing of it ran: the work waits
        // for another channel.
        if (!channel.silent) m_pool.wait_again(std::move(channel.work));
        channel.clear_work();
        channel.step = Step::release;
      } else if (channel.step == Step::exec) {
        start_markers(channel);
        const std::string& token = exec.out_marker->token();
        if (channel.work.kind != ChannelWork::Kind::job)
          exec.line = control_channel_script(
              kill_group_command(channel.work.pgid, channel.work.signal), token);
        else if (channel.work.input.empty())
          exec.line = job_channel_script(channel.work.command, token, channel.work.mark);
        else
          exec.line = input_channel_script(channel.work.command, token, channel.work.mark);
        exec.line_sent = 0;
        channel.step = Step::write_script;
      }
      m_progressed = true;
    }
  }
  if (channel.step == Step::write_script) {
    Outcome outcome = write_stdin(channel);
    if (outcome != Outcome::progressed) return outcome;
    bool has_input = channel.work.kind == ChannelWork::Kind::job && !channel.work.input.empty();
    channel.step = has_input ? Step::feed : Step::send_eof;
  }
  if (channel.step == Step::feed) {
    Outcome outcome = feed_input(channel);
    if (outcome != Outcome::progressed) return outcome;
    channel.step = Step::send_eof;
  }
  if (channel.step == Step::send_eof) {
    Outcome outcome = classify(libssh2_channel_send_eof(channel.handle), &channel);
    if (outcome != Outcome::progressed) return outcome;
    channel.step = Step::read;
  }
  if (channel.step == Step::read) {
    Outcome outcome = read_channel(channel);
    if (outcome == Outcome::broken || m_pool.blocked_on(channel)) return outcome;
    if (!libssh2_channel_eof(channel.handle)) return Outcome::blocked;
    channel.step = Step::close;
    m_progressed = true;
  }
  return Outcome::progressed;
}

bool SshConnection::signal_task(TaskId job, int signal) {
  auto is_this = [&](const ChannelWork& work) {
    return work.kind == ChannelWork::Kind::job && work.job == job;
  };
  std::string why = fmt::format("stopped by SIG{} before it started", signal_name(signal));
  if (m_pool.remove_waiting_job(job)) {
    m_sink.task_exited(job, not_started(why, signal));
    return true;
  }
  if (Channel* opening = m_pool.opening(); opening && is_this(opening->work)) {
    if (!opening->silent) m_sink.task_exited(job, not_started(why, signal));
    opening->silent = true;
    return true;
  }
  for (auto& channel : m_pool.channels()) {
    if (!is_this(channel->work)) continue;
    if (channel->silent) return true;
    if (!channel->exec_attempted) {
      channel->silent = true;
      m_sink.task_exited(job, not_started(why, signal));
    } else if (channel->exec().pgid_known && channel->exec().pgid > 0) {
      send_signal(*channel, signal);
    } else {
      channel->exec().pending_signals.push_back(signal);
    }
    return true;
  }
  return false;
}

SshConnection::Outcome SshConnection::feed_input(Channel& channel) {
  ExecChannel& exec = channel.exec();
  // Output is read meanwhile (a job that cannot write stops reading), but
  // a packet that is half sent is finished before anything else is asked
  // of libssh2.
  if (!blocked_outbound()) {
    Outcome outcome = read_channel(channel);
    if (outcome == Outcome::broken || m_pool.blocked_on(channel)) return outcome;
    // The job ended without reading all of it, or was stopped: on to its end.
    if (libssh2_channel_eof(channel.handle) || channel.silent) return Outcome::progressed;
  }
  if (!exec.pgid_known) return Outcome::blocked;
  if (exec.line.empty() && !exec.input.valid()) {
    exec.input = FileDescriptor(::open(channel.work.input.c_str(), O_RDONLY | O_CLOEXEC));
    if (!exec.input.valid()) {
      m_sink.task_output(channel.work.job, OutputStream::err,
                         fmt::format("runner: cannot read {}: {}\n", channel.work.input,
                                     std::strerror(errno)));
      return Outcome::progressed;
    }
  }
  for (size_t sent = 0; sent < k_output_share;) {
    if (exec.line.empty()) {
      exec.line.resize(k_input_chunk);
      ssize_t got = ::read(exec.input.get(), exec.line.data(), exec.line.size());
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        if (got < 0)
          m_sink.task_output(channel.work.job, OutputStream::err,
                             fmt::format("runner: reading {} failed: {}\n", channel.work.input,
                                         std::strerror(errno)));
        exec.line.clear();
        exec.input = FileDescriptor();
        return Outcome::progressed;
      }
      exec.line.resize(static_cast<size_t>(got));
      exec.line_sent = 0;
    }
    size_t left = exec.line.size() - exec.line_sent;
    Outcome outcome = write_stdin(channel);
    if (outcome != Outcome::progressed) return outcome;
    sent += left;
  }
  // Come back at once for the rest, after the other channels had a turn.
  m_progressed = true;
  return Outcome::blocked;
}

void SshConnection::send_signal(Channel& channel, int signal) {
  ChannelWork work;
  work.kind = ChannelWork::Kind::signal;
  work.job = channel.work.job;
  work.pgid = channel.exec().pgid;
  work.signal = signal;
  if (!m_pool.has_room()) {
    // No room for another channel here; any connection to the host will do.
    m_pool.give_back(std::move(work));
  } else {
    add_work(std::move(work));
  }
}

SshConnection::Outcome SshConnection::send_exec(Channel& channel, bool& answer_lost) {
  ExecChannel& exec = channel.exec();
  answer_lost = false;
  int rc = libssh2_channel_process_startup(channel.handle, "exec", 4, exec.request.data(),
                                           static_cast<unsigned>(exec.request.size()));
  if (rc == 0) return Outcome::progressed;
  if (rc == LIBSSH2_ERROR_SOCKET_NONE && !m_inbound.peer_closed && m_inbound.socket_errno == 0) {
    // libssh2 1.10 in non-blocking mode sometimes loses the server's answer
    // to an exec request and returns -1 although the session is fine
    // (libssh2 issue 671). Only this channel is gone.
    answer_lost = true;
    return Outcome::progressed;
  }
  Outcome outcome = classify(rc, &channel);
  if (outcome != Outcome::progressed) return outcome;
  if (channel.work.kind == ChannelWork::Kind::job && !channel.silent) {
    m_sink.task_exited(channel.work.job, JobExit::failed_because(fmt::format(
                                             "{}: the server refused to run the command: {}",
                                             m_display, last_error(m_session))));
  }
  channel.silent = true;
  channel.step = Channel::Step::release;
  return Outcome::progressed;
}

SshConnection::Outcome SshConnection::read_channel(Channel& channel) {
  // A share of each stream is gathered before it is passed on, so that a job
  // that writes fast reaches its log in few large writes. A job that writes
  // as fast as the link carries would otherwise keep this loop (and the
  // whole event loop) to itself: after a share, come back at once
  // (m_progressed) for the rest. One buffer serves every connection.
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
      m_progressed = true;
      take_channel_output(channel, stream, std::string_view(buffer.data(), filled));
    }
    if (got < 0) {
      Outcome outcome = classify(static_cast<int>(got), &channel);
      if (outcome == Outcome::broken || m_pool.blocked_on(channel)) return outcome;
    }
  }
  return Outcome::blocked;
}

void SshConnection::take_output(Channel& channel, int stream, std::string_view bytes) {
  ExecChannel& exec = channel.exec();
  if (stream == 0) {
    handle_stdout(channel, bytes);
  } else if (channel.work.kind == ChannelWork::Kind::job && !channel.silent) {
    m_sink.task_output(channel.work.job, OutputStream::err, bytes);
  } else if (channel.work.kind == ChannelWork::Kind::signal) {
    exec.control_errors = keep_tail(exec.control_errors + std::string(bytes), k_kept_words);
  }
}

void SshConnection::handle_stdout(Channel& channel, std::string_view bytes) {
  ExecChannel& exec = channel.exec();
  if (channel.work.kind != ChannelWork::Kind::job || channel.silent) return;
  TaskId job = channel.work.job;
  if (exec.pgid_known) {
    m_sink.task_output(job, OutputStream::out, bytes);
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
      m_sink.task_started(job, *pgid);
      for (int signal : std::exchange(exec.pending_signals, {})) send_signal(channel, signal);
      if (!text.empty()) m_sink.task_output(job, OutputStream::out, text);
      return;
    }
    line_start = newline + 1;
  }
  if (exec.head.size() > k_max_head) {
    exec.pgid_known = true;
    m_sink.task_output(job, OutputStream::out, std::exchange(exec.head, {}));
  }
}

void SshConnection::finish_channel(Channel& channel) {
  if (channel.is_launcher()) {
    launcher_closed(channel);
    return;
  }
  if (channel.work.kind == ChannelWork::Kind::signal) {
    control_ended(channel, libssh2_channel_get_exit_status(channel.handle));
    return;
  }
  if (channel.work.kind != ChannelWork::Kind::job || channel.silent) return;
  TaskId job = channel.work.job;
  bool wrapper_ran = channel.exec().pgid_known;
  release_head(channel);
  int code = libssh2_channel_get_exit_status(channel.handle);
  char* signal = nullptr;
  size_t signal_length = 0;
  libssh2_channel_get_exit_signal(channel.handle, &signal, &signal_length, nullptr, nullptr,
                                  nullptr, nullptr);
  std::string signalled;
  if (signal) {
    signalled.assign(signal, signal_length);
    code = -1;
    libssh2_free(m_session, signal);
  }
  JobExit exit = !wrapper_ran ? JobExit::failed_because(login_shell_failure(code), signalled)
                 : !signalled.empty() ? JobExit::killed(signalled)
                                      : JobExit::exited(code);
  m_sink.task_exited(job, exit);
}

void SshConnection::release_head(Channel& channel) {
  ExecChannel& exec = channel.exec();
  std::string head = std::exchange(exec.head, {});
  if (!head.empty() && !exec.drop_head)
    m_sink.task_output(channel.work.job, OutputStream::out, head);
}

std::string SshConnection::login_shell_failure(int status) const {
  return fmt::format(
      "{}: the job did not start: the login shell of {} ended (status {}) without running the "
      "command; is it a POSIX shell that accepts `-c`?",
      m_display, m_target.user, status);
}

}  // namespace runner::ssh
