// Private to the SSH executor: one SSH connection to a host and the
// channels that run over it. A passive state machine: a turn at the
// server's handshake limit, TCP connect (or a tunnel through a jump host),
// handshake (retried when sshd drops it before the banner), host-key check,
// authentication, then channels, opened one at a time: launchers that run
// jobs one after another (one channel per job where the host has no
// `setsid`), and channels that send a signal. A jump host's connection
// carries tunnels instead of jobs.
// Setting up, up to the ready session, is an SshConnector of its own
// (ssh_connector.h), which it owns while connecting; what the server sent is
// an InboundTrace (ssh_inbound.h) both see; the channels, the work waiting
// for one and sshd's limit on them are its ChannelPool (ssh_channel_pool.h).
// What runs on a channel is a component of its kind, each with its own
// state: ExecChannels (ssh_exec_channel.h), Launchers
// (ssh_launcher_channel.h), what both share, the ChannelProtocol
// (ssh_channel_protocol.h), and JumpTunnels (ssh_jump_tunnel.h). They see
// the connection only as a ChannelContext (ssh_channel_context.h). What
// remains here is the connection's own life: its state, stepping the
// session (ssh_session.cpp: opening and stepping channels, keepalive,
// disconnect) and how it ends (ssh_connection.cpp); a channel and its
// kinds' per-channel state are ssh_channel.h.
// Threading: none; the pool (ssh_executor.cpp) steps it from the event loop.
#pragma once

#include <poll.h>

#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "runner/exec/launcher.h"
#include "ssh_channel.h"
#include "ssh_channel_context.h"
#include "ssh_channel_pool.h"
#include "ssh_channel_protocol.h"
#include "ssh_common.h"
#include "ssh_connector.h"
#include "ssh_exec_channel.h"
#include "ssh_inbound.h"
#include "ssh_jump_tunnel.h"
#include "ssh_launcher_channel.h"
#include "ssh_proxy_command.h"

namespace runner::ssh {

class JumpLink;

class SshConnection : private ChannelContext {
 public:
  enum class State {
    connecting,  // TCP, handshake, host key, authentication
    ready,       // runs channels
    closing,     // no new work; disconnects once its channels are done
    closed,      // disconnected politely
    failed,      // could not connect, or broke: see error()
  };

  // `via`: the jump host to reach the target through (ProxyJump); null: TCP.
  SshConnection(const HostTarget& target, HostHints& hints, TaskSink& sink,
                std::shared_ptr<JumpLink> via = nullptr);
  ~SshConnection();
  SshConnection(const SshConnection&) = delete;
  SshConnection& operator=(const SshConnection&) = delete;

  // Resolves the host and starts the TCP connect; may fail at once.
  void start(Clock::time_point now);
  void poll_fds(std::vector<pollfd>& out) const;
  void step(Clock::time_point now);
  std::optional<Clock::time_point> deadline() const;

  State state() const { return m_state; }
  // Whether it ever reached `ready`.
  bool was_ready() const { return m_was_ready; }
  const Status& error() const { return m_error; }
  // "node03 (127.0.0.1:2222)"
  const std::string& display() const override {
    return m_connector ? m_connector->display() : m_display;
  }
  // Once ready: how it authenticated, and how the host key was found.
  const std::string& auth_method() const { return m_auth_method; }
  const std::string& host_key_status() const { return m_host_key_status; }
  // The time from a channel-open request to its answer, once one was opened.
  std::optional<Clock::duration> round_trip() const { return m_round_trip; }

  // Whether add_work() would be taken up without exceeding what sshd allows.
  bool accepts_work(Clock::time_point now) const;
  // Channels carrying work plus work waiting for one.
  int load() const;
  // Queues work for a channel; signals go before jobs.
  void add_work(ChannelWork work);
  // Work this connection gave back (sshd refused the channel): take it and
  // place it elsewhere.
  std::vector<ChannelWork> take_returned();
  // Routes a signal for one of this connection's jobs: reports task_exited at
  // once for a job whose command was not sent yet. False if the job is not here.
  bool signal_task(TaskId job, int signal);
  // Whether a job's command runs or waits here.
  bool has_jobs() const;

  // Stops taking work; disconnects politely once no channel is open.
  void close();
  // Drops the connection at once (channels and all), without reporting.
  void abandon();
  // Breaks the connection as if it was lost for `reason`: lost_jobs() and
  // take_unstarted() then say what it carried.
  void drop(const std::string& reason);

  // After a failure: the jobs whose command may have run (their outcome is
  // unknown), and the work that never started, taken out of the connection.
  std::vector<TaskId> lost_jobs() const;
  std::vector<ChannelWork> take_unstarted();

 private:
  enum class Phase {
    connecting,  // m_connector's
    ready,
    disconnect,
    done
  };

  using Channel = SshChannel;

  // ssh_connection.cpp: while connecting, what m_connector's step ended in.
  void after_connecting();

  // ssh_session.cpp: the session and its channels.
  void step_session(Clock::time_point now);
  void maybe_start_pump();
  Outcome step_open();
  // Steps a channel: its kind's steps (a launcher's own, then an exec
  // channel's; or a tunnel's), then the close every kind ends with
  // (step_ending).
  Outcome step_channel(Channel& channel);
  Outcome step_ending(Channel& channel);
  void keepalive(Clock::time_point now);
  bool send_queue_empty() const;

  // ChannelContext: what the kinds of channels see of it.
  LIBSSH2_SESSION* session() const override { return m_session; }
  TaskSink& sink() override { return m_sink; }
  const HostTarget& target() const override { return m_target; }
  HostHints& hints() override { return m_hints; }
  const InboundTrace& inbound() const override { return m_inbound; }
  Outcome classify(int rc, Channel* channel) override;
  bool blocked_outbound() const override;
  void note_progress() override { m_progressed = true; }
  Outcome opened(Channel& opening, LIBSSH2_CHANNEL* handle) override;
  // Why the socket broke, as precisely as known.
  std::string socket_failure() const;

  // ssh_connection.cpp: how it ends.
  void fail(ErrorKind kind, const std::string& message);
  void lose(const std::string& reason);
  void destroy_session();

  const HostTarget& m_target;
  HostHints& m_hints;
  TaskSink& m_sink;
  std::shared_ptr<JumpLink> m_via;  // kept while its tunnel carries m_fd
  Clock::time_point m_now{};
  InboundTrace m_inbound{m_now};
  std::unique_ptr<SshConnector> m_connector;  // until the session is ready
  std::unique_ptr<ProxyCommand> m_proxy;      // the ProxyCommand behind m_fd, if any
  std::string m_auth_method;
  std::string m_host_key_status;
  std::optional<Clock::duration> m_round_trip;
  Clock::time_point m_open_started{};
  State m_state = State::connecting;
  Phase m_phase = Phase::connecting;
  bool m_was_ready = false;
  Status m_error;
  std::string m_display;

  int m_fd = -1;
  LIBSSH2_SESSION* m_session = nullptr;
  Clock::time_point m_disconnect_deadline{};

  Clock::time_point m_busy_since{};
  Clock::time_point m_last_keepalive{};
  bool m_progressed = false;  // the last step did something

  ChannelPool m_pool;
  ChannelProtocol m_protocol{*this, m_pool};
  ExecChannels m_exec_channels{*this, m_pool, m_protocol};
  Launchers m_launchers{*this, m_pool, m_protocol};
  JumpTunnels m_tunnels{*this, m_pool};
};

}  // namespace runner::ssh
