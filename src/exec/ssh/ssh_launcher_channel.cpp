// Launchers (see ssh_launcher_channel.h), and how a launcher forgets its
// work between jobs. Every libssh2 call is non-blocking, as in
// ssh_connection.cpp. Threading: none.
#include "ssh_launcher_channel.h"

#include <fmt/format.h>

#include <utility>

#include "runner/exec/launcher.h"
#include "runner/exec/shell.h"

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

bool Launchers::at_own_step(const Channel& channel) {
  using Step = Channel::Step;
  return channel.is_launcher() && (channel.step == Step::exec || channel.step == Step::write_line ||
                                   channel.step == Step::run);
}

Outcome Launchers::step(Channel& channel) {
  ExecChannel& exec = channel.exec();
  using Step = Channel::Step;
  if (channel.step == Step::exec) {
    if (channel.silent) {
      channel.step = Step::release;
      return Outcome::progressed;
    }
    if (exec.request.empty()) exec.request = std::string(k_login_command);
    bool answer_lost = false;
    Outcome outcome = m_protocol.send_exec(channel, answer_lost);
    if (outcome != Outcome::progressed) return outcome;
    m_context.note_progress();
    if (answer_lost) {
      // No job was sent on this channel yet: it waits for another.
      m_pool.wait_again(std::move(channel.work));
      channel.clear_work();
      channel.step = Step::release;
    }
    if (channel.step == Step::release) return Outcome::progressed;
    m_protocol.start_markers(channel);
    exec.launcher_script = launcher_script(exec.out_marker->token());
    channel.step = Step::write_line;
    m_context.note_progress();
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
    Outcome outcome = m_protocol.write_stdin(channel);
    if (outcome != Outcome::progressed) return outcome;
    channel.step = Step::run;
  }
  if (channel.step == Step::run) {
    Outcome outcome = m_protocol.read_channel(channel);
    if (outcome == Outcome::broken || m_pool.blocked_on(channel)) return outcome;
    if (!channel.idle() && exec.out_marker->ended() && exec.err_marker->ended()) {
      m_context.note_progress();
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
      m_context.note_progress();
    }
  }
  return Outcome::progressed;
}

void Launchers::finish_launched(Channel& channel) {
  ExecChannel& exec = channel.exec();
  if (channel.work.kind == ChannelWork::Kind::signal) m_protocol.control_ended(channel, 0);
  if (channel.work.kind == ChannelWork::Kind::job && !channel.silent) {
    TaskId job = channel.work.job;
    m_protocol.release_head(channel);
    int status = exec.out_marker->status().value_or(-1);
    JobExit exit = exec.pgid_known
                       ? exit_from_status(channel, status)
                       : JobExit::failed_because(fmt::format(
                             "{}: the job did not start: `setsid sh` failed (status {})",
                             m_context.display(), status));
    m_context.sink().task_exited(job, exit);
  }
  if (channel.work.kind == ChannelWork::Kind::job) {
    exec.previous_group = exec.pgid_known ? exec.pgid : 0;
    exec.drop_head = true;
  }
  channel.clear_work();
}

void Launchers::closed(Channel& channel) {
  ExecChannel& exec = channel.exec();
  if (channel.idle()) return;
  int status = libssh2_channel_get_exit_status(channel.handle);
  if (status == k_launcher_unavailable && !exec.pgid_known) {
    // No `setsid` there: nothing ran. From now on, a channel per job.
    m_context.hints().no_launcher = true;
    if (!channel.silent) m_pool.wait_again(std::move(channel.work));
    channel.clear_work();
    m_context.note_progress();
    return;
  }
  if (channel.work.kind == ChannelWork::Kind::signal) m_protocol.control_ended(channel, status);
  if (channel.work.kind != ChannelWork::Kind::job || channel.silent) return;
  m_protocol.release_head(channel);
  // The launcher ended under a running job: its outcome is unknown.
  JobExit exit =
      exec.pgid_known
          ? JobExit::lost_because(fmt::format(
                "{}: the shell that started the job ended while it ran", m_context.display()))
          : JobExit::failed_because(m_protocol.login_shell_failure(status));
  m_context.sink().task_exited(channel.work.job, exit);
}

JobExit Launchers::exit_from_status(const Channel& channel, int status) const {
  // A shell reports a job killed by signal N as status 128 + N; a job's
  // shell that exits leaves its note first.
  if (!channel.exec().out_marker->exited_note() && status > 128 && status <= 128 + k_last_signal)
    return JobExit::killed(signal_name(status - 128));
  return JobExit::exited(status);
}

}  // namespace runner::ssh
