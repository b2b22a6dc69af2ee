// The SSH Executor: a pool of connections to one host. Jobs go to the
// first connection with room; a second connection opens only when sshd's
// MaxSessions refuses a channel, and at most a few handshake at once (sshd's
// MaxStartups drops bursts). The host is resolved through the ssh
// configuration; a host behind ProxyJump is reached through the run's shared
// jump connection, which this executor steps too. Public calls only queue
// requests; all work and every event happen in connect() and step().
// Threading: none.
#include "runner/exec/ssh/ssh_executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "runner/exec/shell.h"
#include "ssh_common.h"
#include "ssh_connection.h"
#include "ssh_context.h"
#include "ssh_jump.h"

namespace runner {

namespace {

using ssh::ChannelWork;
using ssh::SshConnection;

constexpr int k_max_concurrent_handshakes = 4;

class SshExecutor final : public Executor, public ssh::TaskSink {
 public:
  SshExecutor(int host, const HostAddress& address, std::shared_ptr<SshContext> context,
              ExecutorEvents& events)
      : Executor(host, events), m_address(address), m_context(std::move(context)) {}

  void connect() override {
    if (m_phase == Phase::connecting || m_phase == Phase::ready) return;
    // A first connect, or again after host_failed: start afresh.
    m_phase = Phase::connecting;
    m_ready_reported = false;
    m_shutting_down = false;
    m_connection_cap.reset();
    m_info.reset();
    m_link.reset();
    Result<ssh::HostTarget> target = m_context->target_for(host(), m_address);
    if (!target) {
      fail_host(target.status());
      return;
    }
    m_target = std::move(*target);
    Clock::time_point now = m_context->options().clock();
    open_connection(now);
    settle(now);
  }

  std::optional<SshHostInfo> info() const {
    if (!m_info) return std::nullopt;
    SshHostInfo info = *m_info;
    for (const auto& connection : m_connections) {
      if (std::optional<Clock::duration> round_trip = connection->round_trip()) {
        info.round_trip = std::chrono::duration_cast<std::chrono::microseconds>(*round_trip);
        break;
      }
    }
    if (!info.round_trip) info.round_trip = m_round_trip;
    return info;
  }

  std::string address() const override {
    return m_target.hostname.empty() ? m_address.host : m_target.hostname;
  }

  void start_task(TaskId job, const std::string& command) override {
    start_task_reading(job, command, {});
  }

  void start_task_reading(TaskId job, const std::string& command,
                          const std::string& input) override {
    ChannelWork work;
    work.kind = ChannelWork::Kind::job;
    work.job = job;
    work.command = command;
    work.input = input;
    work.mark = group_mark(job);
    m_pending.push_back(std::move(work));
    m_requested = true;
  }

  void signal_task(TaskId job, int signal) override {
    m_signals.emplace_back(job, signal);
    m_requested = true;
  }

  void shutdown() override {
    m_shutting_down = true;
    m_requested = true;
  }

  bool idle() const override {
    return m_connections.empty() && m_pending.empty() && m_control.empty() && m_signals.empty() &&
           m_assigned.empty();
  }

  void poll_fds(std::vector<pollfd>& out) override {
    if (m_link) m_link->poll_fds(out);
    for (const auto& connection : m_connections) connection->poll_fds(out);
  }

  void step(Clock::time_point now) override {
    if (m_link) m_link->step(now);
    for (size_t i = 0; i < m_connections.size(); ++i) m_connections[i]->step(now);
    settle(now);
  }

  std::optional<Clock::time_point> deadline() const override {
    if (m_requested || !m_signals.empty()) return Clock::time_point{};
    if (m_phase == Phase::failed && !m_pending.empty()) return Clock::time_point{};
    if (m_shutting_down && m_assigned.empty() && m_pending.empty() && !m_connections.empty()) {
      bool all_closing = std::all_of(m_connections.begin(), m_connections.end(), [](auto& c) {
        return c->state() == SshConnection::State::closing;
      });
      if (!all_closing) return Clock::time_point{};
    }
    std::optional<Clock::time_point> next = m_link ? m_link->deadline() : std::nullopt;
    for (const auto& connection : m_connections) {
      std::optional<Clock::time_point> at = connection->deadline();
      if (at && (!next || *at < *next)) next = at;
    }
    if (m_phase == Phase::ready && (!m_pending.empty() || !m_control.empty())) {
      // Work waits: step soon if some connection could take it now.
      for (const auto& connection : m_connections) {
        if (connection->accepts_work(m_context->options().clock())) return Clock::time_point{};
      }
    }
    return next;
  }

 private:
  enum class Phase { created, connecting, ready, failed };

  // TaskSink: what connections report about jobs.
  void task_started(TaskId job, long pgid) override {
    m_started.insert(job);
    report_started(job, pgid);
  }
  void task_output(TaskId job, OutputStream stream, std::string_view bytes) override {
    report_output(job, stream, bytes);
  }
  void signal_failed(TaskId job, int signal, const std::string& why) override {
    report_signal_failed(job, signal, why);
  }
  void task_exited(TaskId job, const JobExit& reported) override {
    m_assigned.erase(job);
    JobExit exit = reported;
    // An error before its process reported its group (the login shell
    // failed, the server refused): nothing of it ran. A lost one may have.
    bool started = m_started.erase(job) > 0;
    if (const JobExit::Failed* failed = std::get_if<JobExit::Failed>(&exit.how); failed && !started)
      exit.how = JobExit::NotStarted{failed->why, failed->signal};
    report_exited(job, exit);
  }

  SshConnection& open_connection(Clock::time_point now) {
    if (!m_target.jumps.empty()) {
      // The live link to the last jump host (a new one if it broke).
      m_link = m_context->jump_link(m_target.jumps, m_target.jumps.size());
    }
    m_connections.push_back(std::make_unique<SshConnection>(m_target, m_hints, *this, m_link));
    SshConnection& connection = *m_connections.back();
    connection.start(now);
    return connection;
  }

  // Reacts to what the connections did, places waiting work, and grows or
  // shrinks the pool.
  void settle(Clock::time_point now) {
    m_requested = false;
    for (size_t i = 0; i < m_connections.size(); ++i) {
      SshConnection& connection = *m_connections[i];
      for (ChannelWork& work : connection.take_returned()) requeue(std::move(work), false);
      if (connection.state() == SshConnection::State::ready && !m_ready_reported &&
          m_phase == Phase::connecting) {
        m_ready_reported = true;
        m_phase = Phase::ready;
        m_info = SshHostInfo{connection.display(), connection.auth_method(),
                             connection.host_key_status(), std::nullopt};
        report_ready();
      }
      if (!m_round_trip && connection.round_trip()) {
        m_round_trip =
            std::chrono::duration_cast<std::chrono::microseconds>(*connection.round_trip());
      }
      if (connection.state() == SshConnection::State::failed) {
        if (handle_failure(connection)) return;
      }
    }
    std::erase_if(m_connections, [](const auto& connection) {
      return connection->state() == SshConnection::State::failed ||
             connection->state() == SshConnection::State::closed;
    });

    deliver_signals();
    if (m_phase == Phase::failed) {
      refuse_pending();
      return;
    }
    if (m_phase == Phase::ready) {
      place_work(now);
      grow(now);
    }
    if (m_shutting_down) close_when_done();
  }

  // Returns true when the whole host failed (the pool is gone).
  bool handle_failure(SshConnection& connection) {
    for (ChannelWork& work : connection.take_unstarted()) requeue(std::move(work), true);
    if (connection.was_ready()) {
      // A broken connection with running jobs: the host is gone. One that
      // ran nothing yet (idle, or dropped by the server just as work came)
      // is replaced; its work waits for the new connection.
      if (connection.lost_jobs().empty()) return false;
      fail_host(connection.error());
      return true;
    }

    bool others = std::any_of(m_connections.begin(), m_connections.end(), [&](const auto& c) {
      return c.get() != &connection && (c->state() == SshConnection::State::ready ||
                                        c->state() == SshConnection::State::connecting);
    });
    if (!others) {
      fail_host(connection.error());
      return true;
    }
    // An extra connection could not be made: make do with those that exist.
    int ready = static_cast<int>(
        std::count_if(m_connections.begin(), m_connections.end(),
                      [](const auto& c) { return c->state() == SshConnection::State::ready; }));
    m_connection_cap = std::max(1, ready);
    return false;
  }

  // Every job on the host ends: lost if its command was sent, refused if not.
  void fail_host(Status error) {
    m_phase = Phase::failed;
    for (auto& connection : m_connections) {
      if (connection->state() != SshConnection::State::failed) connection->drop(error.message());
      for (ChannelWork& work : connection->take_unstarted()) requeue(std::move(work), true);
    }
    m_connections.clear();
    JobExit lost = JobExit::lost_because(error.message());
    std::vector<TaskId> running;
    for (const auto& [job, connection] : m_assigned) running.push_back(job);
    for (TaskId job : running) task_exited(job, lost);
    m_control.clear();
    refuse_pending();
    m_link.reset();
    report_failed(error);
  }

  void refuse_pending() {
    while (!m_pending.empty()) {
      ChannelWork work = std::move(m_pending.front());
      m_pending.pop_front();
      report_exited(work.job, JobExit::not_started_because(
                                  fmt::format("not started: {} is unusable", m_address.host)));
    }
    m_signals.clear();
  }

  void requeue(ChannelWork work, bool at_front) {
    if (work.kind == ChannelWork::Kind::pump) return;
    if (work.kind == ChannelWork::Kind::signal) {
      m_control.push_back(std::move(work));
      return;
    }
    m_assigned.erase(work.job);
    if (at_front) {
      m_pending.push_front(std::move(work));
    } else {
      m_pending.push_back(std::move(work));
    }
  }

  void deliver_signals() {
    for (auto [job, signal] : std::exchange(m_signals, {})) {
      auto queued = std::find_if(m_pending.begin(), m_pending.end(),
                                 [job = job](const ChannelWork& w) { return w.job == job; });
      if (queued != m_pending.end()) {
        m_pending.erase(queued);
        std::string name = signal_name(signal);
        report_exited(job, JobExit::not_started_because(
                               fmt::format("stopped by SIG{} before it started", name), name));
        continue;
      }
      auto assigned = m_assigned.find(job);
      if (assigned == m_assigned.end()) continue;  // already ended
      SshConnection* connection = assigned->second;
      connection->signal_task(job, signal);
      for (ChannelWork& work : connection->take_returned()) requeue(std::move(work), false);
    }
  }

  void place_work(Clock::time_point now) {
    auto place = [&](std::deque<ChannelWork>& queue) {
      while (!queue.empty()) {
        auto target = std::find_if(m_connections.begin(), m_connections.end(),
                                   [&](const auto& c) { return c->accepts_work(now); });
        if (target == m_connections.end()) return;
        ChannelWork work = std::move(queue.front());
        queue.pop_front();
        if (work.kind == ChannelWork::Kind::job) m_assigned[work.job] = target->get();
        (*target)->add_work(std::move(work));
      }
    };
    place(m_control);
    place(m_pending);
  }

  // Opens connections for work that no connection has room for.
  void grow(Clock::time_point now) {
    size_t waiting = m_pending.size() + m_control.size();
    if (waiting == 0) return;
    int connecting = 0;
    int live = 0;
    for (const auto& connection : m_connections) {
      if (connection->state() == SshConnection::State::connecting) ++connecting;
      if (connection->state() == SshConnection::State::connecting ||
          connection->state() == SshConnection::State::ready) {
        ++live;
      }
    }
    int per_connection = std::max(1, m_hints.channel_limit.value_or(1 << 20));
    int wanted = static_cast<int>((waiting + per_connection - 1) / per_connection) - connecting;
    int room = k_max_concurrent_handshakes - connecting;
    if (m_connection_cap) room = std::min(room, *m_connection_cap - live);
    for (int i = 0; i < std::min(wanted, room); ++i) open_connection(now);
    // A connection may fail at once (e.g. the name no longer resolves).
    for (const auto& connection : m_connections) {
      if (connection->state() == SshConnection::State::failed) {
        if (handle_failure(*connection)) return;
      }
    }
    std::erase_if(m_connections, [](const auto& connection) {
      return connection->state() == SshConnection::State::failed;
    });
  }

  void close_when_done() {
    if (!m_assigned.empty() || !m_pending.empty() || !m_control.empty()) return;
    for (auto& connection : m_connections) connection->close();
    std::erase_if(m_connections, [](const auto& connection) {
      return connection->state() == SshConnection::State::closed;
    });
    // The jump connection closes once no executor holds it.
    if (m_connections.empty()) m_link.reset();
  }

  HostAddress m_address;
  std::shared_ptr<SshContext> m_context;
  ssh::HostTarget m_target;
  std::shared_ptr<ssh::JumpLink> m_link;  // the jump host in front, if any
  std::optional<SshHostInfo> m_info;
  std::optional<std::chrono::microseconds> m_round_trip;
  ssh::HostHints m_hints;
  Phase m_phase = Phase::created;
  bool m_ready_reported = false;
  bool m_shutting_down = false;
  bool m_requested = false;  // a public call queued something: step soon
  std::optional<int> m_connection_cap;
  std::vector<std::unique_ptr<SshConnection>> m_connections;
  std::deque<ChannelWork> m_pending;  // jobs not yet on a connection
  std::deque<ChannelWork> m_control;  // signals not yet on a connection
  std::vector<std::pair<TaskId, int>> m_signals;
  std::map<TaskId, SshConnection*> m_assigned;  // jobs on a connection
  std::set<TaskId> m_started;                   // running jobs whose process reported its group
};

}  // namespace

std::shared_ptr<SshContext> make_ssh_context(const SshOptions& options) {
  return std::make_shared<SshContext>(options);
}

std::vector<Status> resolve_ssh_config(SshContext& context,
                                       const std::vector<HostAddress>& addresses) {
  return context.resolve(addresses);
}

std::string ssh_config_note(const SshContext& context) { return context.note(); }

std::optional<SshHostInfo> ssh_host_info(const Executor& executor) {
  auto* ssh = dynamic_cast<const SshExecutor*>(&executor);
  return ssh ? ssh->info() : std::nullopt;
}

std::unique_ptr<Executor> make_ssh_executor(int host, const HostAddress& address,
                                            std::shared_ptr<SshContext> context,
                                            ExecutorEvents& events) {
  return std::make_unique<SshExecutor>(host, address, std::move(context), events);
}

std::unique_ptr<Executor> make_ssh_executor(int host, const HostAddress& address,
                                            const SshOptions& options, ExecutorEvents& events) {
  return std::make_unique<SshExecutor>(host, address, make_ssh_context(options), events);
}

}  // namespace runner
