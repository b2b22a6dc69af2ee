// Test doubles for the scheduler: a scripted HostTransport that records what
// ran, an in-memory JobSource, and an observer that records what it is told.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "runner/sched/job_source.h"
#include "runner/sched/run_observer.h"

namespace runner::testing {

// Jobs finish after a scripted number of step() calls with a scripted exit.
class FakeTransport final : public HostTransport {
 public:
  struct Outcome {
    JobExit exit{.code = 0};
    int steps = 1;  // step() calls until it exits
    std::string output;
  };

  explicit FakeTransport(int host) : m_host(host) {}

  // Where events go; set before connect().
  TransportEvents* events = nullptr;

  // Scripting.
  std::optional<TransportError> connect_error;
  std::function<Outcome(const std::string& command)> outcome = [](const std::string&) {
    return Outcome{};
  };
  // Next step(): every running job is lost and the host fails.
  void drop() { m_drop = true; }

  // Recording.
  std::vector<std::pair<JobId, std::string>> started;
  std::vector<std::pair<JobId, int>> signals;
  std::size_t running() const { return m_jobs.size(); }

  void connect() override {
    if (connect_error)
      events->host_failed(m_host, *connect_error);
    else
      events->host_ready(m_host);
  }
  void start_job(JobId id, const std::string& command) override {
    started.emplace_back(id, command);
    m_jobs[id] = outcome(command);
    m_fresh.push_back(id);
  }
  void signal_job(JobId id, int signal) override {
    signals.emplace_back(id, signal);
    auto it = m_jobs.find(id);
    if (it != m_jobs.end() && signal == 9) {
      it->second.exit = JobExit{.signal = "KILL"};
      it->second.steps = 0;
    }
  }
  void shutdown() override {}
  bool idle() const override { return m_jobs.empty(); }
  void poll_fds(std::vector<pollfd>&) override {}
  std::optional<Clock::time_point> deadline() const override { return std::nullopt; }

  void step(Clock::time_point) override {
    if (m_drop) {
      m_drop = false;
      auto jobs = std::move(m_jobs);
      m_jobs.clear();
      for (auto& [id, o] : jobs) events->job_exited(id, JobExit{.error = "connection lost", .lost = true});
      events->host_failed(m_host, TransportError{TransportErrorKind::disconnected, "dropped"});
      return;
    }
    for (JobId id : std::exchange(m_fresh, {})) {
      events->job_started(id, 1000 + static_cast<long>(id));
      if (!m_jobs[id].output.empty()) events->job_output(id, OutputStream::out, m_jobs[id].output);
    }
    std::vector<JobId> done;
    for (auto& [id, o] : m_jobs)
      if (--o.steps <= 0) done.push_back(id);
    for (JobId id : done) {
      JobExit exit = m_jobs[id].exit;
      m_jobs.erase(id);
      events->job_exited(id, exit);
    }
  }

 private:
  int m_host;
  std::map<JobId, Outcome> m_jobs;
  std::vector<JobId> m_fresh;
  bool m_drop = false;
};

// A queue held in memory.
class ListSource final : public JobSource {
 public:
  std::deque<JobSpec> jobs;
  std::optional<QueueUnavailable> unavailable;
  int takes = 0;

  void add(const std::string& command, int slots = 1, Params params = {}) {
    jobs.push_back(JobSpec{command, std::move(params), slots, static_cast<int>(jobs.size()) + 1});
  }

  TakeBatch take_while(const std::function<bool(const JobSpec&)>& can_place) override {
    ++takes;
    TakeBatch batch;
    if (unavailable) {
      batch.stopped = *unavailable;
      return batch;
    }
    while (!jobs.empty()) {
      if (!can_place(jobs.front())) {
        batch.stopped = HeadNotPlaceable{jobs.front()};
        return batch;
      }
      batch.taken.push_back(jobs.front());
      jobs.pop_front();
    }
    return batch;
  }
};

// Remembers every event, in order, as text.
class RecordingObserver final : public RunObserver {
 public:
  std::vector<std::string> events;
  std::vector<std::string> notices;
  std::vector<std::pair<RunningJob, JobExit>> finished;

  void host_ready(const Host& h) override { events.push_back("ready " + h.name); }
  void host_failed(const Host& h, const TransportError& e) override {
    events.push_back("failed " + h.name + ": " + e.message);
  }
  void job_started(const RunningJob& j) override {
    events.push_back("start " + j.label + " " + j.command);
  }
  void job_pgid(const RunningJob&) override {}
  void job_output(const RunningJob& j, OutputStream, std::string_view b) override {
    events.push_back("output " + j.label + " " + std::string(b));
  }
  void job_finished(const RunningJob& j, const JobExit& e, Clock::duration) override {
    events.push_back("end " + j.label + " " + j.command);
    finished.emplace_back(j, e);
  }
  void notice(const std::string& m) override { notices.push_back(m); }
  void warning(const std::string& m) override { notices.push_back(m); }
};

}  // namespace runner::testing
