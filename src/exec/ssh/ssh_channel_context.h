// Private to the SSH executor: what the kinds of channels (exec channels,
// launchers, tunnels) need of the connection they run on, and nothing more:
// its session, where their jobs' news goes, how it is named, what the
// server sent, and how a libssh2 result reads. The connection
// (ssh_connection.h) implements it. Threading: none.
#pragma once

#include <string>

#include "ssh_common.h"
#include "ssh_inbound.h"

namespace runner::ssh {

struct SshChannel;

// What one call into libssh2 did.
enum class Outcome { progressed, blocked, finished, broken };

class ChannelContext {
 public:
  virtual LIBSSH2_SESSION* session() const = 0;
  virtual TaskSink& sink() = 0;
  // "node03 (127.0.0.1:2222)"
  virtual const std::string& display() const = 0;
  virtual const HostTarget& target() const = 0;
  virtual HostHints& hints() = 0;
  virtual const InboundTrace& inbound() const = 0;
  // What libssh2's `rc` means here: 0, and an error that ends only the
  // channel, are progressed; a half-sent request blocks on `channel`.
  virtual Outcome classify(int rc, SshChannel* channel) = 0;
  // Whether libssh2 waits to send the rest of a packet.
  virtual bool blocked_outbound() const = 0;
  // The step did something: the connection is stepped again at once.
  virtual void note_progress() = 0;
  // The channel being opened got its handle.
  virtual Outcome opened(SshChannel& opening, LIBSSH2_CHANNEL* handle) = 0;

 protected:
  ~ChannelContext() = default;
};

}  // namespace runner::ssh
