// Private to the SSH executor: one channel of an SSH connection and what
// its kind needs. A channel runs something (a job, a signal's `kill`, a
// launcher that runs job after job) or is a tunnel for ProxyJump; the
// fields only one kind uses live in that kind's struct.
// Threading: none; its connection (ssh_connection.h) steps it.
#pragma once

#include <poll.h>

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "runner/core/file_system.h"
#include "runner/exec/launcher.h"
#include "ssh_common.h"

namespace runner::ssh {

// What only a channel that runs something uses. Every such channel speaks
// the protocol of runner/exec/launcher.h. A launcher carries one job after
// another; an idle one, like a pump channel, carries no work.
struct ExecChannel {
  std::string request;      // the exec request, kept for retries after EAGAIN
  bool pgid_known = false;  // the wrapper's line was seen (or given up on)
  long pgid = 0;
  std::string head;         // stdout before the wrapper's line
  size_t head_scanned = 0;  // where head's first unchecked line starts
  std::vector<int> pending_signals;
  // What goes to the shell's stdin and how much of it went out: a
  // launcher's script and lines, or a channel's whole script.
  std::string line;
  size_t line_sent = 0;
  // The scanners that find the ready marker, then the end of the current
  // work's output; `ready`: the ready marker was read on stdout, stderr.
  std::unique_ptr<EndMarkerScanner> out_marker;
  std::unique_ptr<EndMarkerScanner> err_marker;
  bool ready[2] = {false, false};
  std::string noise;           // the end of the login shell's start-up stderr
  std::string control_errors;  // a signal's: what its `kill` said
  bool launcher = false;
  bool drop_head = false;       // stdout before the wrapper's line is not the job's
  long previous_group = 0;      // the group of the job before on this launcher
  std::string launcher_script;  // a launcher's, until it goes out with the first line
  FileDescriptor input;         // a job's input file, while it is being sent
};

// What only a tunnel channel (ssh_jump_tunnel.cpp) uses: the tunnel, kept
// while its channel opens; then the jump side of the socketpair, and bytes
// in flight.
struct TunnelChannel {
  std::shared_ptr<Tunnel> tunnel;
  int bridge_fd = -1;
  std::string to_local;   // from the channel, not yet written to bridge_fd
  std::string to_remote;  // from bridge_fd, not yet written to the channel
  bool local_eof = false;
  TunnelChannel() = default;
  TunnelChannel(const TunnelChannel&) = delete;
  TunnelChannel& operator=(const TunnelChannel&) = delete;
  ~TunnelChannel();
  // The socketpair end, while bytes can move on it.
  void poll_fds(std::vector<pollfd>& out) const;
};

// One open (or opening) channel and the work it carries.
struct SshChannel {
  enum class Step {
    exec,
    write_line,    // launcher: sending the current work's line
    run,           // launcher: the work runs, or it is idle
    write_script,  // a channel of its own: sending its whole script
    feed,          // a job that reads input: sending it once the job runs
    send_eof,
    read,
    bridge,  // tunnel: carrying bytes both ways
    close,
    wait_closed,
    release
  };
  ChannelWork work;
  LIBSSH2_CHANNEL* handle = nullptr;
  Step step = Step::exec;
  bool exec_attempted = false;  // the work was sent (or began to be)
  bool silent = false;          // its job was already reported as ended
  std::variant<ExecChannel, TunnelChannel> per_kind;

  ExecChannel& exec() { return std::get<ExecChannel>(per_kind); }
  const ExecChannel& exec() const { return std::get<ExecChannel>(per_kind); }
  TunnelChannel& tunnel() { return std::get<TunnelChannel>(per_kind); }
  bool is_tunnel() const { return std::holds_alternative<TunnelChannel>(per_kind); }
  bool is_launcher() const {
    const ExecChannel* exec = std::get_if<ExecChannel>(&per_kind);
    return exec && exec->launcher;
  }
  // A launcher between jobs (or a pump channel) carries no work.
  bool idle() const { return work.kind == ChannelWork::Kind::pump; }
  // Makes a launcher idle: forgets its work and what was learnt about it.
  void clear_work();
};

}  // namespace runner::ssh
