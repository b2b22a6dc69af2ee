// Private to the SSH executor: tunnel channels, the jump host's side of
// ProxyJump (see ssh_jump.h): a direct-tcpip channel to the next host,
// opened for a Tunnel that connection asked for, then bridged to a
// socketpair whose other end that host's connection uses as its socket.
// Each channel's bytes in flight are its TunnelChannel (ssh_channel.h).
// Threading: none; its connection steps it.
#pragma once

#include "ssh_channel.h"
#include "ssh_channel_context.h"
#include "ssh_channel_pool.h"

namespace runner::ssh {

class JumpTunnels {
 public:
  using Channel = SshChannel;

  JumpTunnels(ChannelContext& context, ChannelPool& pool) : m_context(context), m_pool(pool) {}

  // Opens the channel being opened (the pool's opening()), a tunnel's.
  Outcome open();
  // A tunnel's steps, up to its close.
  Outcome step(Channel& channel);

 private:
  Outcome start_bridge(Channel& channel);
  Outcome pump_tunnel(Channel& channel, bool& done);

  ChannelContext& m_context;
  ChannelPool& m_pool;
};

}  // namespace runner::ssh
