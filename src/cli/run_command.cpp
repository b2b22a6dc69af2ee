// `runner queue` and `runner broadcast`: load and validate everything, then
// drive the scheduler, the executors and the queue watcher in one event
// loop until the run is over.
#include <fmt/format.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

#include "build_info.h"
#include "fatal.h"
#include "gpu_telemetry.h"
#include "run_fleet.h"
#include "runner/cli/journal_checkpointer.h"
#include "runner/cli/options.h"
#include "runner/cli/resume.h"
#include "runner/cli/run_reporter.h"
#include "runner/config/config_error.h"
#include "runner/config/duration.h"
#include "runner/config/hosts.h"
#include "runner/config/job_render.h"
#include "runner/core/debug_log.h"
#include "runner/exec/backend.h"
#include "runner/exec/event_loop.h"
#include "runner/exec/signal_watcher.h"
#include "runner/probe/gpu_listing.h"
#include "runner/queue/queue_file.h"
#include "runner/queue/queue_watcher.h"
#include "runner/report/campaign_index.h"
#include "runner/state/gpu_power_series.h"
#include "runner/state/journal_replay.h"
#include "runner/state/run_log.h"
#include "runner/state/state_dir.h"
#include "runner/state/stop_requests.h"
#include "runner/ui/status_line.h"
#include "subcommand.h"

namespace runner {

namespace {

// The live journal's size limit: RUNNER_JOURNAL_SEGMENT_BYTES, when set to
// a number, else the default.
std::uint64_t journal_segment_bytes() {
  const char* set = std::getenv("RUNNER_JOURNAL_SEGMENT_BYTES");
  if (!set || !*set) return k_journal_segment_bytes;
  char* end = nullptr;
  unsigned long long bytes = std::strtoull(set, &end, 10);
  if (*end != '\0' || bytes == 0)
    throw ConfigError("RUNNER_JOURNAL_SEGMENT_BYTES is '" + std::string(set) +
                      "': give the journal's size limit in bytes, e.g. 4194304");
  return bytes;
}

// How long a host's nvidia-smi may take for `gpu_free:`:
// RUNNER_GPU_CHECK_TIMEOUT, when set to a duration, else the default.
Clock::duration gpu_check_limit() {
  const char* set = std::getenv("RUNNER_GPU_CHECK_TIMEOUT");
  if (!set || !*set) return k_gpu_usage_limit;
  std::optional<std::chrono::milliseconds> limit = parse_duration(set);
  if (!limit || limit->count() == 0)
    throw ConfigError("RUNNER_GPU_CHECK_TIMEOUT is '" + std::string(set) +
                      "': give how long nvidia-smi may take, e.g. 30s or 2m");
  return *limit;
}

// The run's GPU telemetry; none with --no-gpu-monitor, or inside Slurm,
// whose steps hold their GPUs apart from the runner's commands.
std::unique_ptr<GpuTelemetry> make_gpu_telemetry(const RunOptions& options, const Fleet& fleet,
                                                 Console& console) {
  if (options.no_gpu_monitor || options.slurm) return nullptr;
  std::chrono::milliseconds period = GpuTelemetry::k_default_period;
  if (!options.gpu_monitor_period.empty()) {
    std::optional<std::chrono::milliseconds> given = parse_duration(options.gpu_monitor_period);
    if (!given || given->count() < 10)
      throw ConfigError(fmt::format("--gpu-monitor-period {}: not a period of 10ms or more (try "
                                    "200ms or 1s)",
                                    options.gpu_monitor_period));
    period = *given;
  }
  return std::make_unique<GpuTelemetry>(
      fleet, period, [&console](const std::string& message) { console.warn(message); },
      steady_clock_source());
}

// Closes connections politely, giving them a moment.
void shut_down(EventLoop& loop, const std::vector<Executor*>& executors) {
  for (Executor* executor : executors) executor->shutdown();
  auto give_up = Clock::now() + std::chrono::seconds(3);
  auto all_idle = [&] {
    return std::all_of(executors.begin(), executors.end(),
                       [](Executor* executor) { return executor->idle(); });
  };
  while (!all_idle() && Clock::now() < give_up)
    fatal_unless(loop.run_once(std::chrono::milliseconds(100)));
}

// A reader that goes away (`runner q | head`) must not kill the run, and
// hundreds of concurrent jobs need more descriptors than the default.
void prepare_process() {
  signal(SIGPIPE, SIG_IGN);
  rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

// The live status line, unless asked not to, in CI, or without a terminal.
std::unique_ptr<StatusLine> make_status_line(const RunOptions& options, const Fleet& fleet,
                                             Console& console) {
  const char* ci = std::getenv("CI");
  bool in_ci = ci && *ci && std::strcmp(ci, "false") != 0 && std::strcmp(ci, "0") != 0;
  if (options.quiet || options.no_status || in_ci || !console.enable_status()) return nullptr;
  std::size_t runs_per_job = options.mode == Mode::broadcast ? fleet.slots.size() : 1;
  std::string queue_file = options.queue_file;
  return std::make_unique<StatusLine>(
      console, fleet.slots.size(), runs_per_job,
      [queue_file] { return count_queued_jobs(queue_file); }, Clock::now());
}

RunStartRecord run_start_record(const RunOptions& options, const Fleet& fleet,
                                std::optional<std::size_t> queued) {
  RunStartRecord record;
  record.mode = options.mode == Mode::queue ? "queue" : "broadcast";
  record.hosts_file = options.hosts_file;
  record.queue_file = options.queue_file;
  record.slots.emplace();
  for (const Slot& slot : fleet.slots)
    record.slots->push_back({slot.label, fleet.hosts[slot.host].name, slot.index, slot.params});
  record.queued = queued;
  return record;
}

// A run that cannot watch what it must ends before any job starts: said,
// and recorded as failed, so that the next run need not resume it.
int end_unstarted(Journal& journal, Console& console, const Status& why) {
  console.error(why.message());
  Status ended = journal.run_end("failed");
  if (ended.ok()) ended = journal.sync();
  if (!ended.ok()) console.error(ended.message());
  return 2;
}

// The queue file's jobs, validated against the fleet: how many there are
// (0 while a daemon's queue file does not exist yet).
std::size_t validated_queue(const RunOptions& options, const Fleet& fleet, QueueFile& queue) {
  if (!options.daemon && !std::filesystem::exists(options.queue_file))
    throw ConfigError(options.queue_file, 0, 0,
                      "queue file not found (create it, or pass --queue-file)");
  std::size_t queued = 0;
  if (!std::filesystem::exists(options.queue_file)) return queued;
  std::vector<QueueEntry> entries = value_or_fatal(queue.read_entries());
  fatal_unless(
      validate_jobs(entries, fleet, options.queue_file,
                    options.mode == Mode::queue ? JobPlacement::queue : JobPlacement::broadcast));
  for (const QueueEntry& entry : entries) queued += job_count(entry);
  return queued;
}

SchedulerOptions scheduler_options_for(const RunOptions& options, const RunFleet& run_fleet,
                                       const Journal& journal, const std::string& state_dir) {
  SchedulerOptions scheduler_options;
  scheduler_options.mode = options.mode;
  scheduler_options.daemon = options.daemon;
  scheduler_options.ignore_errors = options.ignore_errors;
  scheduler_options.max_requeue = options.max_requeue;
  scheduler_options.default_retries = options.retries;
  scheduler_options.keep_orphans = options.keep_orphans;
  scheduler_options.run_id = journal.run_id();
  scheduler_options.gpu_check_limit = gpu_check_limit();
  // Absolute, as the journal records it: results and report find it from anywhere.
  scheduler_options.outputs_dir = options.outputs_dir.empty()
                                      ? outputs_dir(state_dir)
                                      : std::filesystem::absolute(options.outputs_dir).string();
  if (run_fleet.allocation && run_fleet.allocation->ends_at)
    scheduler_options.take_until =
        Clock::now() + (*run_fleet.allocation->ends_at - std::chrono::system_clock::now());
  if (!options.timeout.empty()) {
    scheduler_options.default_timeout = parse_duration(options.timeout);
    if (!scheduler_options.default_timeout)
      throw ConfigError(
          fmt::format("--timeout {}: not a duration (try 90s, 45m, 2h or 1h30m)", options.timeout));
  }
  return scheduler_options;
}

// The run's start in the journal, and the end of the jobs a dead run left
// running; records that cannot be written wait in the journal, and the run
// log's sync says so: no job starts before they are written.
void record_run_start(Journal& journal, const RunOptions& options, const Fleet& fleet,
                      std::size_t queued, const std::vector<OrphanJob>& orphans) {
  static_cast<void>(journal.run_start(run_start_record(options, fleet, queued)));
  for (const OrphanJob& orphan : orphans)
    if (orphan.was_running)
      static_cast<void>(journal.job_end(orphan.id,
                                        JobExit::lost_because("the runner that started it stopped"),
                                        std::chrono::milliseconds(0), options.mode == Mode::queue));
}

// What the run watches besides its executors: the queue file, `runner
// stop`'s requests and interrupts (the first stops taking jobs, the second
// kills the running ones); the first that cannot be watched, as an error.
struct RunWatchers {
  std::unique_ptr<QueueWatcher> queue;
  std::unique_ptr<StopRequestWatcher> stop_requests;
  std::unique_ptr<SignalWatcher> signals;
};

Result<RunWatchers> watch_run(const RunOptions& options, const std::string& state_dir,
                              QueueFile& queue, Scheduler& scheduler, StatusLine* status_line,
                              Console& console) {
  RunWatchers watchers;
  Result<std::unique_ptr<QueueWatcher>> watcher =
      QueueWatcher::open(options.queue_file, queue.own_changes(), [&scheduler, status_line] {
        scheduler.queue_changed();
        if (status_line) status_line->queue_changed();
      });
  if (!watcher) return watcher.status();
  watchers.queue = std::move(*watcher);
  Result<std::unique_ptr<StopRequestWatcher>> stop_requests =
      StopRequestWatcher::open(state_dir, [&scheduler](const std::string& name) {
        scheduler.stop_service(name, Clock::now());
      });
  if (!stop_requests) return stop_requests.status();
  watchers.stop_requests = std::move(*stop_requests);
  Result<std::unique_ptr<SignalWatcher>> signals =
      SignalWatcher::open([&scheduler, &console, interrupts = 0](int) mutable {
        ++interrupts;
        if (interrupts == 1) {
          scheduler.stop_scheduling();
          if (scheduler.running_count() > 0)
            console.info(fmt::format(
                "stopping: no new jobs; {} still running (interrupt again to kill them)",
                scheduler.running_count()));
        } else {
          console.info("killing running jobs");
          scheduler.cancel_running(Clock::now());
        }
      });
  if (!signals) return signals.status();
  watchers.signals = std::move(*signals);
  return watchers;
}

// The run's end: its summary, and run_end in the journal; the exit status.
int finish_run(Scheduler& scheduler, RunReporter& reporter, Journal& journal, Console& console,
               Clock::duration wall) {
  int status = scheduler.exit_code();
  // Output that could not be written is a run that did not fully succeed.
  if (status == 0 && (reporter.logs_incomplete() || reporter.outputs_lost())) status = 1;
  if (!reporter.finished().empty() || status != 0)
    console.write_block(format_run_summary(
        reporter.finished(), reporter.slot_usage(),
        std::chrono::duration_cast<std::chrono::milliseconds>(wall)));
  if (std::size_t waiting = scheduler.taken_ahead_waiting())
    reporter.notice(fmt::format(
        "{} job{} taken out of the queue file ahead of need did not start; the journal keeps "
        "{} for `runner queue --resume`, which runs {} first",
        waiting, waiting == 1 ? "" : "s", waiting == 1 ? "it" : "them",
        waiting == 1 ? "it" : "them"));
  Status ended = journal.run_end(status == 0 ? "ok" : status == 130 ? "interrupted" : "failed");
  if (ended.ok()) ended = journal.sync();
  if (!ended.ok()) {
    console.error(fmt::format("{}; the journal lacks the last {} record{} of this run",
                              ended.message(), journal.waiting(),
                              journal.waiting() == 1 ? "" : "s"));
    if (status == 0) status = 1;
  }
  return status;
}

}  // namespace

int run_jobs(const RunOptions& options) {
  if (options.dry_run) return dry_run_jobs(options);
  prepare_process();
  Console console(stdout, stderr, options.color, options.quiet ? 0 : options.print_period);
  auto warn = [&console](const std::string& message) { console.warn(message); };
  RunFleet run_fleet = load_run_fleet(options, warn);
  const Fleet& fleet = run_fleet.fleet;
  QueueFile queue(options.queue_file, warn);
  std::size_t queued = validated_queue(options, fleet, queue);
  SshOptions ssh_options = options.ssh;
  ssh_options.before_prompt = [&console] { console.hide_status(); };
  std::shared_ptr<SshContext> ssh =
      run_fleet.allocation ? nullptr : prepare_ssh(fleet, ssh_options, warn);

  std::string state_dir =
      options.state_dir.empty() ? state_dir_for(options.queue_file) : options.state_dir;
  fatal_unless(ensure_state_dir(state_dir));
  if (Status opened = debug_log::open_file(debug_log_path(state_dir)); !opened.ok())
    console.warn(opened.message());
  debug_log::step("a run starts: runner {} {}, {} hosts, {} slots", build_version(),
                  options.mode == Mode::queue ? "queue" : "broadcast", fleet.hosts.size(),
                  fleet.slots.size());
  Journal journal =
      value_or_fatal(Journal::open(state_dir, false, real_file_system(), journal_segment_bytes()));
  std::vector<OrphanJob> orphans =
      jobs_to_resume(replay_journal(value_or_fatal(read_recent_records(state_dir)).records), fleet,
                     journal.path(), options.resume);
  JobLogs logs(state_dir);
  record_run_start(journal, options, fleet, queued, orphans);
  RunReporter reporter(fleet, console, logs);
  JournalRunLog run_log(journal, reporter);
  static_cast<void>(run_log.sync());
  std::unique_ptr<StatusLine> status_line = make_status_line(options, fleet, console);
  reporter.set_status_line(status_line.get());
  JournalCheckpointer checkpointer(state_dir);
  run_log.set_checkpoint_refresh([&checkpointer] { return checkpointer.refresh_in_background(); });

  QueueFileSource source(queue);
  std::unique_ptr<Backend> backend = make_run_backend(run_fleet, ssh);
  Scheduler scheduler(*backend, source, run_log, reporter,
                      scheduler_options_for(options, run_fleet, journal, state_dir),
                      [&] { return journal.next_job_id(); });
  scheduler.adopt_orphans(std::move(orphans));
  std::unique_ptr<GpuTelemetry> gpu_telemetry = make_gpu_telemetry(options, fleet, console);
  GpuPowerSeriesWriter gpu_power_series(gpu_power_series_path(state_dir));
  if (gpu_telemetry) {
    gpu_telemetry->record_power_to(&gpu_power_series);
    gpu_telemetry->attach(scheduler.host_ops());
    reporter.set_gpu_telemetry(gpu_telemetry.get());
    // Each job's GPU figures, once read, in a job_gpu record beside its job_end.
    gpu_telemetry->report_figures_to([&](const JobGpuFigures& job) {
      run_log.record_gpu_figures(job.job, job.attempt, job.figures);
      reporter.gpu_figures_read(job);
    });
  }

  EventLoop loop;
  for (Executor* executor : scheduler.executors()) loop.add(executor);
  for (HostOps* ops : scheduler.host_ops()) loop.add(ops);
  Result<RunWatchers> watchers =
      watch_run(options, state_dir, queue, scheduler, status_line.get(), console);
  if (!watchers) return end_unstarted(journal, console, watchers.status());
  loop.add(watchers->queue.get());
  loop.add(watchers->stop_requests.get());
  loop.add(watchers->signals.get());
  loop.add(&scheduler);
  if (gpu_telemetry) loop.add(gpu_telemetry.get());
  if (status_line) loop.add(status_line.get());

  auto started = Clock::now();
  scheduler.start();
  while (!scheduler.finished()) {
    console.flush();
    reporter.flush_logs();
    fatal_unless(loop.run_once());
  }
  // The last jobs' GPU figures, once read (GpuTelemetry bounds the wait).
  while (gpu_telemetry && gpu_telemetry->awaiting_figures()) fatal_unless(loop.run_once());
  if (gpu_telemetry) gpu_telemetry->finish();
  console.flush();
  reporter.flush_logs();
  if (status_line) status_line->finish();
  shut_down(loop, scheduler.executors());
  return finish_run(scheduler, reporter, journal, console, Clock::now() - started);
}

namespace {

void add_run_flags(CLI::App& app, RunOptions& o, IgnoredOptions& ignored) {
  app.add_option("-H,--hosts-file", o.hosts_file, "The fleet (default: hosts.yaml)")
      ->envname(k_hosts_file_env);
  app.add_option("-Q,--queue-file", o.queue_file, "The queue (default: queue.yaml)")
      ->envname(k_queue_file_env);
  ignored.add_option(app, "--editor");
  app.add_option("--state-dir", o.state_dir,
                 "Journal and job logs (default: beside the queue file, queue.runner/)");
  app.add_option("--outputs-dir", o.outputs_dir,
                 "Where the files of jobs' `outputs:` are brought back to, <dir>/<id>/ each "
                 "(default: outputs/ in the state directory); results and report find them there");
  app.add_flag("-d,--daemon", o.daemon, "Keep running and pick up jobs as they are added");
  app.add_flag("-i,--ignore-errors", o.ignore_errors,
               "Broadcast: go on to the next job when one fails");
  // Older Pegasus spelling of the default broadcast behaviour.
  app.add_flag("-e,--error-aborts", o.error_aborts,
               "Broadcast: stop after a failed job (the default; older Pegasus spelling)");
  app.add_option("-p,--print-period", o.print_period,
                 "Print every Nth output line of each job; 0 prints none (default 1)");
  app.add_option("--color", o.color, "Colour slot prefixes: auto, always, never")
      ->transform(
          CLI::CheckedTransformer(std::map<std::string, ColorMode>{{"auto", ColorMode::automatic},
                                                                   {"always", ColorMode::always},
                                                                   {"never", ColorMode::never}},
                                  CLI::ignore_case));
  add_ssh_flags(app, o.ssh);
  app.add_flag("--resume", o.resume,
               "After a crash: check the jobs the last run left running, kill what is left of "
               "them, and run them again first");
  app.add_option("--timeout", o.timeout,
                 "Stop jobs that run longer than this (90s, 45m, 2h, 1h30m) unless they say "
                 "`timeout:` themselves");
  app.add_option("--retries", o.retries,
                 "Run a failed job again up to N times unless it says `retries:` itself")
      ->check(CLI::Range(0, 1000));
  app.add_option("--max-requeue", o.max_requeue,
                 "Put a job lost with its host back in the queue up to N times (default 2)")
      ->check(CLI::Range(0, 1000));
  app.add_flag("--keep-orphans", o.keep_orphans,
               "Do not kill what lost jobs left running when their host comes back");
  app.add_flag("--no-gpu-monitor", o.no_gpu_monitor,
               "Do not read the GPUs' energy, power, utilisation and memory while jobs run");
  app.add_option("--gpu-monitor-period", o.gpu_monitor_period,
                 "How often each GPU is read while jobs run (default 200ms)");
  app.add_flag("-n,--dry-run", o.dry_run,
               "Print every job with the slot it would get and its rendered command; run "
               "nothing, change no file");
  app.add_flag("--quiet", o.quiet,
               "No job output and no status line on the terminal (logs keep everything)");
  app.add_flag("--no-status", o.no_status, "No live status line below the output");
  app.add_flag("--slurm", o.slurm,
               "Inside a Slurm allocation (salloc, sbatch): its nodes are the fleet, one slot "
               "per GPU with the parameter `gpu`; each job runs in a step of its own (srun)");
  app.add_option("--slots-per-node", o.slots_per_node,
                 "With --slurm: this many slots per node instead of one per GPU")
      ->check(CLI::Range(1, 100000));
}

}  // namespace

Subcommand add_run_command(CLI::App& app, Mode mode, const UserDefaults& defaults,
                           IgnoredOptions& ignored) {
  auto options = std::make_shared<RunOptions>();
  options->mode = mode;
  take(defaults.hosts_file, options->hosts_file);
  take(defaults.queue_file, options->queue_file);
  take_ssh(defaults, options->ssh);
  bool queue = mode == Mode::queue;
  auto* command = queue
                      ? app.add_subcommand("queue", "Run each job once, on the next free slot(s)")
                      : app.add_subcommand("broadcast", "Run each job on every slot, in lockstep");
  command->alias(queue ? "q" : "b");
  add_run_flags(*command, *options, ignored);
  set_example(*command,
              queue ? "runner queue --hosts-file hosts.yaml --queue-file queue.yaml --timeout 2h"
                    : "runner broadcast --hosts-file hosts.yaml --queue-file setup-nodes.yaml");
  return {command, [options] { return run_jobs(*options); }};
}

}  // namespace runner
