// HostOps as the runner does them on a real host: each operation is a
// shell command (shell.h, push_plan.h) run as an own task of the host's
// Executor, whose output is read back into the typed answer. put_files's
// archives are made by a process of their own while the loop goes on:
// their pidfds are this object's descriptors.
//
// Threading: none; answers come from the executor's step() or this one's.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runner/exec/executor.h"
#include "runner/exec/host_ops.h"

namespace runner {

class PushArchive;

// How ShellHostOps runs an own command: what it says goes to `on_stdout`
// (when set: its stdout) or is kept, up to 64 KiB; its end, with what was
// kept, to `done`.
Executor::OwnTaskHandler own_command_handler(std::function<void(std::string_view)> on_stdout,
                                             HostOps::CommandDone done);

class ShellHostOps final : public HostOps {
 public:
  // `executor` must outlive this, and this every command it started.
  explicit ShellHostOps(Executor& executor) : m_executor(executor) {}

  TaskId run_command(const std::string& command, CommandDone done) override;
  TaskId look_at_gpus(std::function<void(const GpuLookAnswer&)> done) override;
  TaskId run_command_streaming(const std::string& command,
                               std::function<void(std::string_view)> on_stdout,
                               CommandDone done) override;
  void stop_command(TaskId command) override;
  void kill_leftovers(const std::vector<ProcessGroup>& groups,
                      std::function<void(const LeftoverCheck&)> done) override;
  // As one tar stream over the host's connection, unpacked as it comes
  // (OutputUnpacker) (file_fetch.cpp).
  void get_files(const std::string& patterns, const std::string& into,
                 std::function<void(const FetchedFiles&)> done) override;
  // First a listing of what the host has, then one tar stream of the
  // files it lacks or has with another size, time or mode (file_put.cpp).
  void put_files(const std::vector<PushFile>& files, const std::string& to,
                 std::function<void(const PutResult&)> done) override;
  // Kills the commands of put_files under way, and fails those waiting
  // for their archive.
  void stop_transfers() override;
  // With as many `rm` commands as the paths' length needs, one after the
  // other (file_fetch.cpp).
  void remove_files(const std::vector<std::string>& paths, CommandDone done) override;
  // Reads its /proc/net/tcp{,6} (no ports where it has no /proc) and
  // `hostname -I`.
  void survey_network(std::function<void(Result<NetworkSurvey>)> done) override;
  // With probe's survey script: tools, `ip -o addr` (else `ifconfig -a`,
  // else /proc/net) and /proc/net/tcp{,6}.
  void survey_interfaces(std::function<void(Result<HostSurvey>)> done) override;
  // With probe's prober script.
  void probe_connections(const std::string& tool, const std::vector<std::string>& tools,
                         const std::vector<ProbeTarget>& targets, int timeout_seconds,
                         std::function<void(const ConnectionProbes&)> done) override;

  // Pollable: the archives put_files waits for.
  void poll_fds(std::vector<pollfd>& out) override;
  void step(Clock::time_point now) override;
  std::optional<Clock::time_point> deadline() const override { return std::nullopt; }

 private:
  struct AwaitedArchive {
    std::shared_ptr<PushArchive> archive;
    std::function<void(const Status&)> then;
  };
  // Runs `then` once `archive` is made (or could not be).
  void await_archive(std::shared_ptr<PushArchive> archive, std::function<void(const Status&)> then);

  // Runs commands[next], then, if it succeeded, those after it.
  void run_in_turn(std::shared_ptr<std::vector<std::string>> commands, std::size_t next,
                   CommandDone done);
  // run_command_streaming (or, with an `input` file, its stdin that file),
  // counted among the transfers that stop_transfers stops while it runs.
  void run_transfer(const std::string& command, const std::optional<std::string>& input,
                    std::function<void(std::string_view)> on_stdout, CommandDone done);

  Executor& m_executor;
  std::set<TaskId> m_transfers;  // own commands of put_files under way
  // The archives put_files waits for while they are made: their pidfds
  // are polled, and they are looked at on every step.
  std::vector<AwaitedArchive> m_awaited_archives;
};

}  // namespace runner
