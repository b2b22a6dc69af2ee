// Private to the SSH executor: the connection's side of the channel
// protocol (see runner/exec/launcher.h), what every channel that runs
// something shares, be it an exec channel (ssh_exec_channel.h) or a
// launcher (ssh_launcher_channel.h): the exec request, the ready and end
// markers (it draws their tokens), writing to the shell's stdin, reading
// output on to the channel's job, the job's process-group line, signals to
// jobs, and how a signal's `kill` ended. Its channels' state is theirs
// (ssh_channel.h). Threading: none; its connection steps it.
#pragma once

#include <random>
#include <string>
#include <string_view>

#include "ssh_channel.h"
#include "ssh_channel_context.h"
#include "ssh_channel_pool.h"

namespace runner::ssh {

class ChannelProtocol {
 public:
  using Channel = SshChannel;

  ChannelProtocol(ChannelContext& context, ChannelPool& pool);

  // Sends channel.request as an exec request. A refusal is reported for the
  // job (if any) and releases the channel; `answer_lost`: libssh2 lost the
  // server's answer, so whether it ran is unknown (the caller decides).
  Outcome send_exec(Channel& channel, bool& answer_lost);
  // Gives the channel a fresh token and the scanners that look for it.
  void start_markers(Channel& channel);
  // Writes what is left of channel.line; progressed once all went out.
  Outcome write_stdin(Channel& channel);
  Outcome read_channel(Channel& channel);
  // Passes stdout held before the wrapper's line on to the channel's job.
  void release_head(Channel& channel);
  // Why a job did not start when the login shell ended with `status`.
  std::string login_shell_failure(int status) const;
  // A signal's channel or launcher line ended (the login shell with
  // `shell_status`): says so when the signal may not have reached its group.
  void control_ended(const Channel& channel, int shell_status);
  void send_signal(Channel& channel, int signal);

 private:
  // What a channel's stream carried: nothing before the ready marker, then
  // the current work's part of it.
  void take_channel_output(Channel& channel, int stream, std::string_view bytes);
  // Output of the channel's work: to its job, if it has one.
  void take_output(Channel& channel, int stream, std::string_view bytes);
  void handle_stdout(Channel& channel, std::string_view bytes);

  ChannelContext& m_context;
  ChannelPool& m_pool;
  std::minstd_rand m_random;  // end markers' tokens
};

}  // namespace runner::ssh
