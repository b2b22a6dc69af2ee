// Exec channels (see ssh_exec_channel.h). Threading: none.
#include "ssh_exec_channel.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runner/exec/launcher.h"
#include "runner/exec/shell.h"

namespace runner::ssh {

namespace {

// How much of a job's input is read from its file at a time.
constexpr size_t k_input_chunk = 64 * 1024;

// The executor takes it as not started unless the job had started.
JobExit not_started(const std::string& why, int signal) {
  return JobExit::failed_because(why, signal_name(signal));
}

}  // namespace

Outcome ExecChannels::step(Channel& channel) {
  ExecChannel& exec = channel.exec();
  using Step = Channel::Step;
  if (channel.step == Step::exec) {
    if (channel.idle() || channel.silent) {
      channel.step = Step::release;
    } else {
      if (exec.request.empty()) exec.request = std::string(k_login_command);
      channel.exec_attempted = true;
      bool answer_lost = false;
      Outcome outcome = m_protocol.send_exec(channel, answer_lost);
      if (outcome != Outcome::progressed) return outcome;
      if (answer_lost) {
        // Its script never went out, so nothing of it ran: the work waits
        // for another channel.
        if (!channel.silent) m_pool.wait_again(std::move(channel.work));
        channel.clear_work();
        channel.step = Step::release;
      } else if (channel.step == Step::exec) {
        m_protocol.start_markers(channel);
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
      m_context.note_progress();
    }
  }
  if (channel.step == Step::write_script) {
    Outcome outcome = m_protocol.write_stdin(channel);
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
    Outcome outcome = m_context.classify(libssh2_channel_send_eof(channel.handle), &channel);
    if (outcome != Outcome::progressed) return outcome;
    channel.step = Step::read;
  }
  if (channel.step == Step::read) {
    Outcome outcome = m_protocol.read_channel(channel);
    if (outcome == Outcome::broken || m_pool.blocked_on(channel)) return outcome;
    if (!libssh2_channel_eof(channel.handle)) return Outcome::blocked;
    channel.step = Step::close;
    m_context.note_progress();
  }
  return Outcome::progressed;
}

bool ExecChannels::signal_job(TaskId job, int signal) {
  auto is_this = [&](const ChannelWork& work) {
    return work.kind == ChannelWork::Kind::job && work.job == job;
  };
  std::string why = fmt::format("stopped by SIG{} before it started", signal_name(signal));
  if (m_pool.remove_waiting_job(job)) {
    m_context.sink().task_exited(job, not_started(why, signal));
    return true;
  }
  if (Channel* opening = m_pool.opening(); opening && is_this(opening->work)) {
    if (!opening->silent) m_context.sink().task_exited(job, not_started(why, signal));
    opening->silent = true;
    return true;
  }
  for (auto& channel : m_pool.channels()) {
    if (!is_this(channel->work)) continue;
    if (channel->silent) return true;
    if (!channel->exec_attempted) {
      channel->silent = true;
      m_context.sink().task_exited(job, not_started(why, signal));
    } else if (channel->exec().pgid_known && channel->exec().pgid > 0) {
      m_protocol.send_signal(*channel, signal);
    } else {
      channel->exec().pending_signals.push_back(signal);
    }
    return true;
  }
  return false;
}

Outcome ExecChannels::feed_input(Channel& channel) {
  ExecChannel& exec = channel.exec();
  // Output is read meanwhile (a job that cannot write stops reading), but
  // a packet that is half sent is finished before anything else is asked
  // of libssh2.
  if (!m_context.blocked_outbound()) {
    Outcome outcome = m_protocol.read_channel(channel);
    if (outcome == Outcome::broken || m_pool.blocked_on(channel)) return outcome;
    // The job ended without reading all of it, or was stopped: on to its end.
    if (libssh2_channel_eof(channel.handle) || channel.silent) return Outcome::progressed;
  }
  if (!exec.pgid_known) return Outcome::blocked;
  if (exec.line.empty() && !exec.input.valid()) {
    exec.input = FileDescriptor(::open(channel.work.input.c_str(), O_RDONLY | O_CLOEXEC));
    if (!exec.input.valid()) {
      m_context.sink().task_output(
          channel.work.job, OutputStream::err,
          fmt::format("runner: cannot read {}: {}\n", channel.work.input, std::strerror(errno)));
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
          m_context.sink().task_output(channel.work.job, OutputStream::err,
                                       fmt::format("runner: reading {} failed: {}\n",
                                                   channel.work.input, std::strerror(errno)));
        exec.line.clear();
        exec.input = FileDescriptor();
        return Outcome::progressed;
      }
      exec.line.resize(static_cast<size_t>(got));
      exec.line_sent = 0;
    }
    size_t left = exec.line.size() - exec.line_sent;
    Outcome outcome = m_protocol.write_stdin(channel);
    if (outcome != Outcome::progressed) return outcome;
    sent += left;
  }
  // Come back at once for the rest, after the other channels had a turn.
  m_context.note_progress();
  return Outcome::blocked;
}

void ExecChannels::finish(Channel& channel) {
  if (channel.work.kind == ChannelWork::Kind::signal) {
    m_protocol.control_ended(channel, libssh2_channel_get_exit_status(channel.handle));
    return;
  }
  if (channel.work.kind != ChannelWork::Kind::job || channel.silent) return;
  TaskId job = channel.work.job;
  bool wrapper_ran = channel.exec().pgid_known;
  m_protocol.release_head(channel);
  int code = libssh2_channel_get_exit_status(channel.handle);
  char* signal = nullptr;
  size_t signal_length = 0;
  libssh2_channel_get_exit_signal(channel.handle, &signal, &signal_length, nullptr, nullptr,
                                  nullptr, nullptr);
  std::string signalled;
  if (signal) {
    signalled.assign(signal, signal_length);
    code = -1;
    libssh2_free(m_context.session(), signal);
  }
  JobExit exit = !wrapper_ran
                     ? JobExit::failed_because(m_protocol.login_shell_failure(code), signalled)
                 : !signalled.empty() ? JobExit::killed(signalled)
                                      : JobExit::exited(code);
  m_context.sink().task_exited(job, exit);
}

}  // namespace runner::ssh
