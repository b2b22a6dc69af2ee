// Private to the SSH executor: launchers, channels whose remote shell runs
// one job after another, each in a session of its own: their own steps
// (the exec request, the launcher's script with the first line, each
// work's line, reading until its end marker), a launched job's end, and a
// launcher that closed. What they share with exec channels is the
// ChannelProtocol (ssh_channel_protocol.h); once a launcher is retired, the
// steps it ends with are ExecChannels' (ssh_exec_channel.h).
// Threading: none; its connection steps it.
#pragma once

#include "ssh_channel.h"
#include "ssh_channel_context.h"
#include "ssh_channel_pool.h"
#include "ssh_channel_protocol.h"

namespace runner::ssh {

class Launchers {
 public:
  using Channel = SshChannel;

  Launchers(ChannelContext& context, ChannelPool& pool, ChannelProtocol& protocol)
      : m_context(context), m_pool(pool), m_protocol(protocol) {}

  // Whether the channel is a launcher at one of its own steps.
  static bool at_own_step(const Channel& channel);
  // A launcher's own steps.
  Outcome step(Channel& channel);
  // Reports what a launcher that closed leaves: the end of its work, if any.
  void closed(Channel& channel);

 private:
  void finish_launched(Channel& channel);
  // The channel's job ended with `status` as the launcher's shell saw it.
  JobExit exit_from_status(const Channel& channel, int status) const;

  ChannelContext& m_context;
  ChannelPool& m_pool;
  ChannelProtocol& m_protocol;
};

}  // namespace runner::ssh
