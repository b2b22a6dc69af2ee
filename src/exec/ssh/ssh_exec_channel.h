// Private to the SSH executor: exec channels, a login shell per channel
// given one script on its stdin (a job's, where the host cannot run
// launchers, or a signal's `kill`): their steps from the exec request to
// EOF, a job's input file fed once it runs, a job's end, and signals routed
// to jobs wherever they wait or run. What they share with launchers is the
// ChannelProtocol (ssh_channel_protocol.h). Threading: none; its connection
// steps it.
#pragma once

#include "ssh_channel.h"
#include "ssh_channel_context.h"
#include "ssh_channel_pool.h"
#include "ssh_channel_protocol.h"

namespace runner::ssh {

class ExecChannels {
 public:
  using Channel = SshChannel;

  ExecChannels(ChannelContext& context, ChannelPool& pool, ChannelProtocol& protocol)
      : m_context(context), m_pool(pool), m_protocol(protocol) {}

  // The steps of a channel that runs something, past a launcher's own
  // (ssh_launcher_channel.h), up to its close.
  Outcome step(Channel& channel);
  // Reports the end of a closed channel's work (not a launcher's).
  void finish(Channel& channel);
  // Routes a signal for a job: reports task_exited at once for a job whose
  // command was not sent yet. False if the job is not here.
  bool signal_job(TaskId job, int signal);

 private:
  // Sends a share of the job's input file once its wrapper runs; progressed
  // once it all went out (or the job ended, or the file failed: said on
  // the job's stderr).
  Outcome feed_input(Channel& channel);

  ChannelContext& m_context;
  ChannelPool& m_pool;
  ChannelProtocol& m_protocol;
};

}  // namespace runner::ssh
