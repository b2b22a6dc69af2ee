// Private to the SSH executor: one connection to a jump host (ProxyJump),
// shared by every connection that goes through it. It opens a direct-tcpip
// channel per tunnel and bridges it to a socketpair whose other end the
// next connection uses as its socket (libssh2 1.10 cannot run a session
// over a channel). Several hops chain: a jump link may itself be reached
// through another.
// Threading: none. Every executor behind a link steps it; a step with the
// same time as the last one (one event-loop round) does nothing.
#pragma once

#include <poll.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ssh_common.h"
#include "ssh_connection.h"

namespace runner::ssh {

class JumpLink {
 public:
  // `previous`: the link `hop` is reached through; null for the first hop.
  JumpLink(const HostTarget& hop, std::shared_ptr<JumpLink> previous);
  ~JumpLink();
  JumpLink(const JumpLink&) = delete;
  JumpLink& operator=(const JumpLink&) = delete;

  // Asks for a tunnel to host:port; it opens once the jump host is
  // connected. Drop the tunnel to give up on it.
  std::shared_ptr<Tunnel> open_tunnel(const std::string& host, int port, Clock::time_point now);

  void poll_fds(std::vector<pollfd>& out) const;
  void step(Clock::time_point now);
  std::optional<Clock::time_point> deadline() const;

  // The connection failed (or broke): a fresh link is needed.
  bool failed() const { return m_failed; }
  // "bastion", or "outer, bastion" for a chain: the hops as the user wrote them.
  std::string route_name() const;

 private:
  // A jump connection runs no jobs.
  class NoJobs : public TaskSink {
   public:
    void task_started(TaskId, long) override {}
    void task_output(TaskId, OutputStream, std::string_view) override {}
    void task_exited(TaskId, const JobExit&) override {}
    void signal_failed(TaskId, int, const std::string&) override {}
  };

  void settle();
  void fail_tunnel(Tunnel& tunnel, const Status& error);

  HostTarget m_target;
  HostHints m_hints;
  NoJobs m_no_jobs;
  std::shared_ptr<JumpLink> m_previous;
  std::unique_ptr<SshConnection> m_connection;
  std::vector<std::weak_ptr<Tunnel>> m_waiting;
  bool m_failed = false;
  std::optional<Clock::time_point> m_stepped_at;
};

}  // namespace runner::ssh
