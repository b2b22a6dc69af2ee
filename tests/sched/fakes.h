// Test doubles for the scheduler: a scripted Executor that records what
// ran, HostOps that answer with scripted typed values, an in-memory JobSource, an observer that
// records what it is told, and a run log that records what is written to it and can refuse to sync.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runner/exec/shell_host_ops.h"
#include "runner/sched/job_source.h"
#include "runner/sched/run_observer.h"
#include "runner/sched/scheduler.h"
#include "runner/state/run_log.h"

namespace runner::testing {

// Jobs finish after a scripted number of step() calls with a scripted exit.
class FakeExecutor final : public Executor {
 public:
  struct Outcome {
    JobExit exit = JobExit::exited(0);
    int steps = 1;  // step() calls until it exits
    std::string output;
    // step() calls before its process starts (task_started); a job that
    // does not start reports no task_started at all.
    int start_steps = 0;
    bool starts = true;
  };

  FakeExecutor(int host, ExecutorEvents& events) : Executor(host, events) {}

  // If set, "sent <command>" is appended for every start_task.
  std::vector<std::string>* log = nullptr;

  // Scripting.
  std::optional<Status> connect_error;
  std::function<Outcome(const std::string& command)> outcome = [](const std::string&) {
    return Outcome{};
  };
  // Next step(): every running job is lost and the host fails.
  void drop() { m_drop = true; }
  // Next step(): the allocation is ending (ErrorKind::ended), then every
  // running job is lost, as a Slurm executor says it.
  void end_allocation() { m_end_allocation = true; }

  // Recording.
  std::vector<std::pair<JobId, std::string>> started;
  std::vector<std::pair<JobId, int>> signals;
  std::size_t running() const { return m_jobs.size(); }

  int connects = 0;

  void connect() override {
    ++connects;
    if (connect_error)
      report_failed(*connect_error);
    else
      report_ready();
  }
  void start_task(JobId id, const std::string& command) override {
    started.emplace_back(id, command);
    if (log) log->push_back("sent " + command);
    m_jobs[id] = outcome(command);
    m_fresh.push_back(id);
  }
  void start_task_reading(JobId id, const std::string& command, const std::string&) override {
    start_task(id, command);
  }
  void signal_task(JobId id, int signal) override {
    signals.emplace_back(id, signal);
    auto it = m_jobs.find(id);
    auto fresh = std::find(m_fresh.begin(), m_fresh.end(), id);
    if (it != m_jobs.end() && fresh != m_fresh.end()) {
      // Not started yet: it never will be (as the SSH executor does).
      m_fresh.erase(fresh);
      it->second.exit =
          JobExit::not_started_because("stopped before it started", signal == 9 ? "KILL" : "TERM");
      it->second.steps = 0;
    } else if (it != m_jobs.end() && signal == 9) {
      it->second.exit = JobExit::killed("KILL");
      it->second.steps = 0;
    }
  }
  void shutdown() override {}
  bool idle() const override { return m_jobs.empty(); }
  std::string address() const override {
    return reached_as.empty() ? "10.0.0." + std::to_string(host() + 1) : reached_as;
  }
  std::string reached_as;  // address(); empty: 10.0.0.<host + 1>
  void poll_fds(std::vector<pollfd>&) override {}
  std::optional<Clock::time_point> deadline() const override { return std::nullopt; }

  void step(Clock::time_point) override {
    if (std::exchange(m_end_allocation, false)) {
      report_failed(Status{ErrorKind::ended, "Slurm is ending allocation 7 (state COMPLETING)"});
      for (auto& [id, o] : std::exchange(m_jobs, {}))
        report_exited(id, JobExit::lost_because("Slurm is ending allocation 7"));
      m_fresh.clear();
      return;
    }
    if (m_drop) {
      m_drop = false;
      auto jobs = std::move(m_jobs);
      m_jobs.clear();
      m_fresh.clear();
      for (auto& [id, o] : jobs) report_exited(id, JobExit::lost_because("connection lost"));
      report_failed(Status{ErrorKind::disconnected, "dropped"});
      return;
    }
    for (JobId id : std::exchange(m_fresh, {})) {
      Outcome& job = m_jobs[id];
      if (job.start_steps-- > 0) {
        m_fresh.push_back(id);
        continue;
      }
      if (!job.starts) continue;
      report_started(id, 1000 + static_cast<long>(id));
      if (!job.output.empty()) report_output(id, OutputStream::out, job.output);
    }
    std::vector<JobId> done;
    for (auto& [id, o] : m_jobs)
      if (std::find(m_fresh.begin(), m_fresh.end(), id) == m_fresh.end() && --o.steps <= 0)
        done.push_back(id);
    for (JobId id : done) {
      JobExit exit = m_jobs[id].exit;
      m_jobs.erase(id);
      report_exited(id, exit);
    }
  }

 private:
  std::map<JobId, Outcome> m_jobs;
  std::vector<JobId> m_fresh;
  bool m_drop = false;
  bool m_end_allocation = false;
};

// A host's typed operations, answered with scripted values. Each runs as an
// own task of the host's FakeExecutor, the runner's commands under their
// own text and the typed operations under their name (k_survey, ...): it
// takes the steps the executor's `outcome` gives it, is lost with the
// host, and shows in FakeRun::control_sent; when it exits 0 its answer is
// the scripted value.
class FakeHostOps final : public HostOps {
 public:
  static constexpr const char* k_survey = "survey_network";
  static constexpr const char* k_kill_leftovers = "kill_leftovers";
  static constexpr const char* k_get_files = "get_files";
  static constexpr const char* k_put_files = "put_files";
  static constexpr const char* k_remove_files = "remove_files";
  static constexpr const char* k_look_at_gpus = "look_at_gpus";

  explicit FakeHostOps(FakeExecutor& executor) : m_executor(executor) {}

  // Scripting.
  // survey_network's answer, each time it is asked.
  std::function<NetworkSurvey()> survey = [] { return NetworkSurvey{}; };
  // kill_leftovers's answer for the groups asked about (by default none
  // was found).
  std::function<LeftoverCheck(const std::vector<ProcessGroup>& groups)> leftovers =
      [](const std::vector<ProcessGroup>&) { return LeftoverCheck{}; };
  FetchedFiles fetched;  // get_files's answer
  // look_at_gpus's answer, each time it is asked and its own task (the
  // executor's outcome for k_look_at_gpus) exits 0: by default, no GPU
  // holds anything.
  std::function<GpuLookAnswer()> gpus = [] {
    return GpuLookAnswer{std::map<std::string, GpuUsage>{}};
  };
  PutResult put;         // put_files's answer

  // Recording.
  int surveys = 0;
  std::vector<std::vector<ProcessGroup>> leftover_checks;  // kill_leftovers's groups, each call
  std::vector<std::vector<std::string>> removals;          // remove_files's paths, each call
  std::vector<std::string> fetches;                        // get_files's patterns, each call
  std::vector<std::string> puts;                           // put_files's folder, each call
  int transfer_stops = 0;
  std::vector<TaskId> stopped;  // stop_command's commands

  TaskId run_command(const std::string& command, CommandDone done) override {
    return run_command_streaming(command, nullptr, std::move(done));
  }
  TaskId run_command_streaming(const std::string& command,
                               std::function<void(std::string_view)> on_stdout,
                               CommandDone done) override {
    return m_executor.start_own_task(
        command, own_command_handler(std::move(on_stdout), std::move(done)));
  }
  void stop_command(TaskId command) override {
    stopped.push_back(command);
    m_executor.signal_task(command, 9);
  }
  void kill_leftovers(const std::vector<ProcessGroup>& groups,
                      std::function<void(const LeftoverCheck&)> done) override {
    leftover_checks.push_back(groups);
    answer_at_end<LeftoverCheck>(
        k_kill_leftovers, [this, groups] { return leftovers(groups); }, std::move(done));
  }
  void get_files(const std::string& patterns, const std::string&,
                 std::function<void(const FetchedFiles&)> done) override {
    fetches.push_back(patterns);
    answer_at_end<FetchedFiles>(
        k_get_files, [this] { return fetched; }, std::move(done));
  }
  void put_files(const std::vector<PushFile>&, const std::string& to,
                 std::function<void(const PutResult&)> done) override {
    puts.push_back(to);
    answer_at_end<PutResult>(
        k_put_files, [this] { return put; }, std::move(done));
  }
  void stop_transfers() override { ++transfer_stops; }
  void remove_files(const std::vector<std::string>& paths, CommandDone done) override {
    removals.push_back(paths);
    run_command(k_remove_files, std::move(done));
  }
  void survey_network(std::function<void(Result<NetworkSurvey>)> done) override {
    ++surveys;
    run_command(k_survey, [this, done](const JobExit& exit, const std::string&) {
      if (exit.succeeded())
        done(survey());
      else
        done(Status{exit.lost() ? ErrorKind::disconnected : ErrorKind::failed, exit.error()});
    });
  }
  // `check --net`'s operations, which the scheduler never asks for:
  // empty answers.
  void survey_interfaces(std::function<void(Result<HostSurvey>)> done) override {
    done(HostSurvey{});
  }
  void probe_connections(const std::string&, const std::vector<std::string>&,
                         const std::vector<ProbeTarget>&, int,
                         std::function<void(const ConnectionProbes&)> done) override {
    done(ConnectionProbes{});
  }

  TaskId look_at_gpus(std::function<void(const GpuLookAnswer&)> done) override {
    return run_command(k_look_at_gpus,
                       [this, done](const JobExit& exit, const std::string& output) {
                         done(exit.succeeded() ? gpus()
                                              : GpuLookAnswer{std::nullopt, exit,
                                                              output.substr(0, output.find('\n'))});
                       });
  }

  void poll_fds(std::vector<pollfd>&) override {}
  void step(Clock::time_point) override {}
  std::optional<Clock::time_point> deadline() const override { return std::nullopt; }

 private:
  // Runs `label`: when it exits 0, the answer is `scripted()`; else an
  // empty one that says how it ended (lost, and why).
  template <typename Answer>
  void answer_at_end(const char* label, std::function<Answer()> scripted,
                     std::function<void(const Answer&)> done) {
    run_command(label, [scripted, done](const JobExit& exit, const std::string&) {
      Answer answer = exit.succeeded() ? scripted() : Answer{};
      answer.lost = exit.lost();
      if (!exit.succeeded()) answer.error = exit.error();
      done(answer);
    });
  }

  FakeExecutor& m_executor;
};

// Makes fake executors and their fake host operations, and lets the test
// reach them.
class FakeBackend final : public Backend {
 public:
  // `made` gets the executors, `made_ops` their HostOps; `log`, if set, is
  // given to each executor.
  FakeBackend(const Fleet& fleet, std::vector<FakeExecutor*>& made,
              std::vector<FakeHostOps*>& made_ops, std::vector<std::string>* log = nullptr)
      : m_fleet(fleet), m_made(made), m_made_ops(made_ops), m_log(log) {}
  const Fleet& fleet() const override { return m_fleet; }
  std::vector<std::unique_ptr<Executor>> executors(ExecutorEvents& events) override {
    std::vector<std::unique_ptr<Executor>> executors;
    for (std::size_t h = 0; h < m_fleet.hosts.size(); ++h) {
      auto executor = std::make_unique<FakeExecutor>(static_cast<int>(h), events);
      executor->log = m_log;
      m_made.push_back(executor.get());
      executors.push_back(std::move(executor));
    }
    return executors;
  }
  std::unique_ptr<HostOps> host_ops(Executor& executor) override {
    auto ops = std::make_unique<FakeHostOps>(static_cast<FakeExecutor&>(executor));
    m_made_ops.push_back(ops.get());
    return ops;
  }

 private:
  const Fleet& m_fleet;
  std::vector<FakeExecutor*>& m_made;
  std::vector<FakeHostOps*>& m_made_ops;
  std::vector<std::string>* m_log;
};

// A queue held in memory.
class ListSource final : public JobSource {
 public:
  std::deque<JobSpec> jobs;
  std::optional<QueueUnavailable> unavailable;
  int takes = 0;
  // As a long queue does: the jobs a take removes in all, taken ahead after
  // those placed (1: none is taken ahead).
  std::size_t jobs_per_take = 1;

  void add(const std::string& command, int slots = 1, Params params = {}) {
    jobs.push_back(JobSpec{command, std::move(params), slots, static_cast<int>(jobs.size()) + 1});
  }

  TakeBatch take_while(const std::function<bool(const JobSpec&)>& can_place,
                       const std::function<bool(const JobSpec&)>& can_take_ahead) override {
    ++takes;
    TakeBatch batch;
    if (unavailable) {
      batch.stopped = *unavailable;
      return batch;
    }
    while (!jobs.empty()) {
      if (!can_place(jobs.front())) {
        batch.stopped = HeadNotPlaceable{jobs.front()};
        break;
      }
      batch.taken.push_back(jobs.front());
      jobs.pop_front();
    }
    if (batch.taken.empty() || !std::holds_alternative<HeadNotPlaceable>(batch.stopped))
      return batch;
    while (!jobs.empty() && batch.taken.size() + batch.taken_ahead.size() < jobs_per_take &&
           can_take_ahead(jobs.front())) {
      batch.taken_ahead.push_back(jobs.front());
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
  std::vector<std::pair<Job, JobExit>> finished;
  std::vector<Clock::duration> durations;  // of the finished jobs, in order

  void host_ready(const Host& h) override { events.push_back("ready " + h.name); }
  void host_failed(const Host& h, const Status& e) override {
    events.push_back("failed " + h.name + ": " + e.message());
  }
  void host_reconnecting(const Host& h, const Status& e, Clock::duration) override {
    events.push_back("reconnecting " + h.name + ": " + e.message());
  }
  void job_launched(const Job& j) override {
    events.push_back("start " + j.label() + " " + j.tasks.front().command);
  }
  void task_started(const Job&, const Task&) override {}
  void task_output(const Job&, const Task& t, OutputStream, std::string_view b) override {
    events.push_back("output " + t.label + " " + std::string(b));
  }
  void job_finished(const Job& j, const JobExit& e, Clock::duration took) override {
    events.push_back("end " + j.label() + " " + j.tasks.front().command);
    finished.emplace_back(j, e);
    durations.push_back(took);
  }
  void service_ready(const Job& j, Clock::duration, const Params& variables) override {
    std::string text = "ready " + j.tasks.front().command;
    for (const auto& [name, value] : variables) text += " " + name + "=" + value;
    events.push_back(text);
  }
  void outputs_collected(JobId job, int, std::optional<int> rank, const std::string& into,
                         const FetchedFiles& fetched) override {
    events.push_back(fmt::format("outputs #{}{} into {}: {} files{}", job,
                                 rank ? fmt::format(" rank {}", *rank) : "", into,
                                 fetched.files.size(), fetched.error.empty() ? "" : " " + fetched.error));
  }
  void notice(const std::string& m) override { notices.push_back(m); }
  void warning(const std::string& m) override { notices.push_back(m); }
};

// Writes what the scheduler records into `events` (shared with the
// observer's), as "journal job_start #1 COMMAND", ..., "journal sync";
// refuses to sync while `refuses_sync`.
class FakeRunLog final : public RunLog {
 public:
  explicit FakeRunLog(std::vector<std::string>& events) : m_events(events) {}
  bool refuses_sync = false;
  std::vector<JobStartRecord> starts;

  void record_taken_ahead(JobTakenAheadRecord record) override {
    m_events.push_back(fmt::format("journal job_taken_ahead #{} {}", record.job, record.template_command));
  }
  void record_launch(JobStartRecord record) override {
    m_events.push_back(fmt::format("journal job_start #{} {}", record.job, record.template_command));
    starts.push_back(std::move(record));
  }
  void record_process_group(JobId job, const ProcessGroup&, std::optional<int>) override {
    m_events.push_back(fmt::format("journal job_pgid #{}", job));
  }
  void record_end(JobId job, const JobExit&, std::chrono::milliseconds, bool,
                  std::optional<int>) override {
    m_events.push_back(fmt::format("journal job_end #{}", job));
  }
  void record_host_failed(std::string_view host, std::string_view) override {
    m_events.push_back(fmt::format("journal host_failed {}", host));
  }
  void record_service_ready(JobId job, std::chrono::milliseconds, const Params&) override {
    m_events.push_back(fmt::format("journal service_ready #{}", job));
  }
  void record_outputs(JobId job, int, std::optional<int>, std::string_view,
                      const std::vector<OutputFile>&, std::string_view, std::string_view) override {
    m_events.push_back(fmt::format("journal outputs #{}", job));
  }
  void record_gpu_figures(JobId job, int, const GpuFigures&) override {
    m_events.push_back(fmt::format("journal job_gpu #{}", job));
  }
  Status sync() override {
    m_events.push_back(refuses_sync ? "journal sync refused" : "journal sync");
    return refuses_sync ? Status::error("cannot write to the journal: full") : Status();
  }

 private:
  std::vector<std::string>& m_events;
};

// A fleet of hosts named `name`, each with slots that have a `gpu` value:
// make_fleet({{"a", {"0", "1"}}}) is host a with slots "a gpu=0", "a gpu=1".
inline Fleet make_fleet(
    const std::vector<std::pair<std::string, std::vector<std::string>>>& hosts) {
  Fleet fleet;
  for (const auto& [name, gpus] : hosts) {
    Host host;
    host.name = name;
    host.address.host = name;
    int h = static_cast<int>(fleet.hosts.size());
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      host.slots.push_back(static_cast<int>(fleet.slots.size()));
      fleet.slots.push_back(
          Slot{h, static_cast<int>(i), {{"gpu", gpus[i]}}, name + " gpu=" + gpus[i]});
    }
    fleet.hosts.push_back(host);
  }
  return fleet;
}

// A look at a host's GPUs that found `memory` MiB in use per GPU index
// and `processes` compute processes on each.
inline GpuLookAnswer usage(const std::vector<std::pair<long, int>>& gpus) {
  std::map<std::string, GpuUsage> found;
  for (std::size_t i = 0; i < gpus.size(); ++i)
    found[std::to_string(i)] = GpuUsage{gpus[i].first, gpus[i].second};
  return GpuLookAnswer{std::move(found)};
}

// A scheduler over fake executors and an in-memory queue, driven tick by
// tick with injected time.
struct FakeRun {
  Fleet fleet;
  ListSource source;
  RecordingObserver observer;
  FakeRunLog run_log{observer.events};
  std::vector<FakeExecutor*> executors;  // owned by the scheduler
  std::vector<FakeHostOps*> host_ops;    // owned by the scheduler
  std::unique_ptr<Scheduler> scheduler;
  Clock::time_point now{};
  JobId next_id = 1;

  explicit FakeRun(Fleet f, SchedulerOptions options = {}) : fleet(std::move(f)) {
    options.clock = [this] { return now; };
    FakeBackend backend(fleet, executors, host_ops, &observer.events);
    scheduler = std::make_unique<Scheduler>(backend, source, run_log, observer, options,
                                            [this] { return next_id++; });
  }

  // One loop iteration: executors and their host operations first, the
  // scheduler last, as in a run.
  void tick(Clock::duration advance = std::chrono::milliseconds(10)) {
    now += advance;
    for (auto& t : executors) t->step(now);
    for (auto& ops : host_ops) ops->step(now);
    scheduler->step(now);
  }

  // Like the event loop, steps only when an executor has news or the
  // scheduler's deadline has come (jumping there), so a scheduler that
  // forgets to ask for a step hangs here as it would in a run.
  int run(int max_ticks = 5000) {
    for (int i = 0; i < max_ticks && !scheduler->finished(); ++i) {
      bool busy = std::any_of(executors.begin(), executors.end(),
                              [](auto& t) { return t->running() > 0; });
      auto due = scheduler->deadline();
      if (!busy && !due) break;  // nothing would ever wake the loop
      if (!busy && *due > now) now = *due - std::chrono::milliseconds(10);
      tick();
    }
    EXPECT_TRUE(scheduler->finished()) << "run did not finish";
    return scheduler->exit_code();
  }

  // Queue jobs sent to host `h`, in order.
  std::vector<std::string> jobs_sent(std::size_t h) const { return sent(h, false); }
  // The runner's own commands sent to host `h` (FakeHostOps: a typed
  // operation under its name).
  std::vector<std::string> control_sent(std::size_t h) const { return sent(h, true); }
  std::vector<std::string> all_jobs_sent() const {
    std::vector<std::string> out;
    for (std::size_t h = 0; h < executors.size(); ++h)
      for (auto& command : jobs_sent(h)) out.push_back(command);
    return out;
  }
  // How job `id` ended, each time it ended.
  std::vector<JobExit> ends_of(JobId id) const {
    std::vector<JobExit> out;
    for (const auto& [job, exit] : observer.finished)
      if (job.id == id) out.push_back(exit);
    return out;
  }

 private:
  std::vector<std::string> sent(std::size_t h, bool control) const {
    std::vector<std::string> out;
    for (const auto& [id, command] : executors[h]->started)
      if ((id >= k_first_own_command_id) == control) out.push_back(command);
    return out;
  }
};

}  // namespace runner::testing
