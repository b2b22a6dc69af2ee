// One piece of work on every host of a fleet, all at once in one event
// loop: begun on each host once it is connected, over when the work says so
// or the host fails, for the commands that do one thing on every host
// (`runner check`, `runner hosts --detect`, `runner push`). A subclass says
// how the work begins and ends on a host; this connects, drives the loop
// and keeps count. Threading: none.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runner/config/hosts.h"
#include "runner/core/clock.h"
#include "runner/exec/executor.h"
#include "runner/exec/host_ops.h"

namespace runner {

class SshContext;

class HostRound : public ExecutorEvents {
 public:
  // `work` names it for a host that times out: "the command".
  explicit HostRound(std::string work) : m_work(std::move(work)) {}

  // Until every host is done, or `deadline` passes (each host not done then
  // is timed out).
  void run(const Fleet& fleet, std::shared_ptr<SshContext> ssh,
           std::optional<Clock::time_point> deadline = std::nullopt);

  void host_ready(int host) final;
  void host_failed(int host, const Status& error) final;
  // The work's own tasks report here; by default nothing is done with it.
  void task_started(TaskId, long) override {}
  void task_output(TaskId, OutputStream, std::string_view) override {}
  void task_exited(TaskId, const JobExit&) override {}
  void signal_failed(TaskId, int, const std::string&) override {}

 protected:
  // The host is connected: begin its work, which ends with done(host).
  virtual void begin(int host, Executor& executor) = 0;
  // The host failed, or the deadline passed, before its work was done:
  // why. It is done after this.
  virtual void failed(int host, const std::string& why) = 0;

  // The host's work is over; false when it already was.
  bool done(int host);
  bool is_done(int host) const { return m_done[host]; }
  Executor& executor(int host) { return *m_executors[host]; }
  HostOps& host_ops(int host) { return *m_host_ops[host]; }

 private:
  std::string m_work;
  std::vector<Executor*> m_executors;
  std::vector<HostOps*> m_host_ops;
  std::vector<bool> m_done;
  std::vector<bool> m_began;
  std::size_t m_left = 0;
};

}  // namespace runner
