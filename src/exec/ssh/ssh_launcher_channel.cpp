// SshConnection's side of the channel protocol (see runner/exec/launcher.h):
// the ready and end markers of every channel, and launcher channels, a
// remote shell per channel that runs one job after another, each in a
// session of its own. Every libssh2 call is non-blocking, as in
// ssh_connection.cpp. Threading: none.
#include <fmt/format.h>

#include <utility>

#include "runner/exec/launcher.h"
#include "runner/exec/shell.h"
#include "ssh_connection.h"

namespace runner::ssh {

namespace {

// The highest signal number a status of 128 + N may name.
constexpr int k_last_signal = 64;

}  // namespace

void SshChannel::clear_work() {
  work = ChannelWork{ChannelWork::Kind::pump};
  silent = false;
  exec_attempted = false;
  ExecChannel& state = exec();
  state.pgid_known = false;
  state.pgid = 0;
  state.head.clear();
  state.head_scanned = 0;
  state.pending_signals.clear();
  state.control_errors.clear();
  if (state.out_marker) state.out_marker->reset();
  if (state.err_marker) state.err_marker->reset();
}

SshConnection::Outcome SshConnection::step_launcher(Channel& channel) {
  ExecChannel& exec = channel.exec();
  using Step = Channel::Step;
  if (channel.step == Step::exec) {
    if (channel.silent) {
      channel.step = Step::release;
      return Outcome::progressed;
    }
    if (exec.request.empty()) exec.request = std::string(k_login_command);
    bool answer_lost = false;
    Outcome outcome = send_exec(channel, answer_lost);
    if (outcome != Outcome::progressed) return outcome;
    m_progressed = true;
    if (answer_lost) {
      // No job was sent on this channel yet: it waits for another.
      m_pool.wait_again(std::move(channel.work));
      channel.clear_work();
      channel.step = Step::release;
    }
    if (channel.step == Step::release) return Outcome::progressed;
    start_markers(channel);
    exec.launcher_script = launcher_script(exec.out_marker->token());
    channel.step = Step::write_line;
    m_progressed = true;
  }
  if (channel.step == Step::write_line) {
    if (exec.line.empty()) {
      // The launcher's script goes out with its first line.
      exec.line = std::exchange(exec.launcher_script, {});
      exec.line_sent = 0;
      if (channel.silent) {
        // Stopped before its line went out.
        channel.clear_work();
      } else {
        const std::string& token = exec.out_marker->token();
        exec.line += channel.work.kind == ChannelWork::Kind::job
                         ? launcher_job_line(channel.work.command, token, exec.previous_group,
                                             channel.work.mark)
                         : launcher_control_line(
                               kill_group_command(channel.work.pgid, channel.work.signal), token);
        channel.exec_attempted = true;
      }
    }
    Outcome outcome = write_stdin(channel);
    if (outcome != Outcome::progressed) return outcome;
    channel.step = Step::run;
  }
  if (channel.step == Step::run) {
    Outcome outcome = read_channel(channel);
    if (outcome == Outcome::broken || m_pool.blocked_on(channel)) return outcome;
    if (!channel.idle() && exec.out_marker->ended() && exec.err_marker->ended()) {
      m_progressed = true;
      if (exec.out_marker->word() == k_launcher_busy) {
        // The previous job left processes that may write here: retire this
        // launcher; its job, which did not run, waits for another.
        if (!channel.silent) m_pool.wait_again(std::move(channel.work));
        channel.clear_work();
        channel.step = Step::send_eof;
        return Outcome::progressed;
      }
      bool retire = exec.out_marker->held_note();
      finish_launched(channel);
      if (retire) {
        // A process the job started still writes here: what comes later
        // belongs to no job.
        channel.step = Step::send_eof;
        return Outcome::progressed;
      }
    }
    if (libssh2_channel_eof(channel.handle)) {
      channel.step = Step::close;
      m_progressed = true;
    }
  }
  return Outcome::progressed;
}

void SshConnection::start_markers(Channel& channel) {
  ExecChannel& exec = channel.exec();
  std::uniform_int_distribution<unsigned long long> bits;
  std::string token = fmt::format("runner-end-{:016x}", bits(m_random));
  exec.out_marker = std::make_unique<EndMarkerScanner>(token);
  exec.err_marker = std::make_unique<EndMarkerScanner>(token);
}

SshConnection::Outcome SshConnection::write_stdin(Channel& channel) {
  ExecChannel& exec = channel.exec();
  while (exec.line_sent < exec.line.size()) {
    ssize_t written = libssh2_channel_write(channel.handle, exec.line.data() + exec.line_sent,
                                            exec.line.size() - exec.line_sent);
    if (written > 0) {
      exec.line_sent += static_cast<size_t>(written);
      m_progressed = true;
      continue;
    }
    if (written == 0) return Outcome::blocked;
    Outcome outcome = classify(static_cast<int>(written), &channel);
    if (outcome != Outcome::progressed) return outcome;
    // The channel refused the data: the shell is gone; its EOF follows.
    break;
  }
  exec.line.clear();
  exec.line_sent = 0;
  return Outcome::progressed;
}

void SshConnection::take_channel_output(Channel& channel, int stream, std::string_view bytes) {
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

void SshConnection::finish_launched(Channel& channel) {
  ExecChannel& exec = channel.exec();
  if (channel.work.kind == ChannelWork::Kind::signal) control_ended(channel, 0);
  if (channel.work.kind == ChannelWork::Kind::job && !channel.silent) {
    TaskId job = channel.work.job;
    release_head(channel);
    int status = exec.out_marker->status().value_or(-1);
    JobExit exit =
        exec.pgid_known
            ? exit_from_status(channel, status)
            : JobExit::failed_because(fmt::format(
                  "{}: the job did not start: `setsid sh` failed (status {})", m_display, status));
    m_sink.task_exited(job, exit);
  }
  if (channel.work.kind == ChannelWork::Kind::job) {
    exec.previous_group = exec.pgid_known ? exec.pgid : 0;
    exec.drop_head = true;
  }
  channel.clear_work();
}

void SshConnection::launcher_closed(Channel& channel) {
  ExecChannel& exec = channel.exec();
  if (channel.idle()) return;
  int status = libssh2_channel_get_exit_status(channel.handle);
  if (status == k_launcher_unavailable && !exec.pgid_known) {
    // No `setsid` there: nothing ran. From now on, a channel per job.
    m_hints.no_launcher = true;
    if (!channel.silent) m_pool.wait_again(std::move(channel.work));
    channel.clear_work();
    m_progressed = true;
    return;
  }
  if (channel.work.kind == ChannelWork::Kind::signal) control_ended(channel, status);
  if (channel.work.kind != ChannelWork::Kind::job || channel.silent) return;
  release_head(channel);
  // The launcher ended under a running job: its outcome is unknown.
  JobExit exit = exec.pgid_known
                     ? JobExit::lost_because(fmt::format(
                           "{}: the shell that started the job ended while it ran", m_display))
                     : JobExit::failed_because(login_shell_failure(status));
  m_sink.task_exited(channel.work.job, exit);
}

JobExit SshConnection::exit_from_status(const Channel& channel, int status) const {
  // A shell reports a job killed by signal N as status 128 + N; a job's
  // shell that exits leaves its note first.
  if (!channel.exec().out_marker->exited_note() && status > 128 && status <= 128 + k_last_signal)
    return JobExit::killed(signal_name(status - 128));
  return JobExit::exited(status);
}

void SshConnection::control_ended(const Channel& channel, int shell_status) {
  const ExecChannel& exec = channel.exec();
  const EndMarkerScanner& marker = *exec.out_marker;
  if (marker.ended() && marker.status() == 0) return;
  std::string why;
  if (!exec.ready[0] || !marker.ended()) {
    why = fmt::format("{}: the login shell of {} ended (status {}) without running `kill`",
                      m_display, m_target.user, shell_status);
    if (std::string said = last_line(exec.noise); !said.empty()) why += ": " + said;
  } else {
    why = fmt::format("{}: `kill` failed (status {})", m_display, marker.word());
    if (std::string said = last_line(exec.control_errors); !said.empty()) why += ": " + said;
  }
  m_sink.signal_failed(channel.work.job, channel.work.signal, why);
}

}  // namespace runner::ssh
