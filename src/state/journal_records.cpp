// The journal's records to JSON lines and back: each kind's fields, in one
// place for the writer and every reader.
#include "runner/state/journal_records.h"

#include <algorithm>
#include <type_traits>

#include "journal_record_parse.h"
#include "runner/state/gpu_figures_record.h"
#include "runner/state/journal_text.h"

namespace runner {

namespace {

using Json = nlohmann::ordered_json;
using nlohmann::json;

// --- writing ---------------------------------------------------------------

Json text_or_null(std::string_view text) { return text.empty() ? Json(nullptr) : exact_text(text); }

Json params_json(const Params& params) {
  Json object = Json::object();
  for (const auto& [key, value] : params) object[key] = exact_text(value);
  return object;
}

template <typename Record>
Json header(const Record& record) {
  Json object;
  object["event"] = Record::k_event;
  object["time"] = exact_text(record.time);
  return object;
}

Json to_json(const RunStartRecord& start) {
  Json object = header(start);
  object["run"] = exact_text(start.run);
  object["pid"] = start.pid;
  object["mode"] = exact_text(start.mode);
  object["hosts_file"] = exact_text(start.hosts_file);
  object["queue_file"] = exact_text(start.queue_file);
  if (start.cwd) object["cwd"] = exact_text(*start.cwd);
  if (start.slots) {
    Json slots = Json::array();
    for (const RunSlotRecord& slot : *start.slots) {
      slots.push_back({{"label", exact_text(slot.label)},
                       {"host", exact_text(slot.host)},
                       {"index", slot.index},
                       {"params", params_json(slot.params)}});
    }
    object["slots"] = std::move(slots);
  }
  if (start.queued) object["queued"] = *start.queued;
  return object;
}

// The keys that say how to run a job again, as job_start and
// job_taken_ahead write them.
void write_job_keys(Json& object, const RecordedJobKeys& job) {
  object["params"] = params_json(job.params);
  object["line"] = job.line;
  object["template"] = exact_text(job.template_command);
  object["slots_needed"] = job.slots_needed;
  if (!job.timeout.empty()) object["timeout"] = exact_text(job.timeout);
  if (job.retries) object["retries"] = *job.retries;
  if (!job.cancel.empty()) object["cancel"] = exact_text(job.cancel);
  if (!job.metrics.empty()) object["metrics"] = params_json(job.metrics);
  if (!job.outputs.empty()) object["outputs"] = exact_text(job.outputs);
  if (job.outputs_cleanup) object["outputs_cleanup"] = true;
}

Json to_json(const JobStartRecord& start) {
  Json object = header(start);
  object["job"] = start.job;
  object["run"] = exact_text(start.run);
  object["command"] = exact_text(start.command);
  object["slot"] = exact_text(start.slot);
  object["host"] = exact_text(start.host);
  object["slot_index"] = start.slot_indices.empty() ? 0 : start.slot_indices.front();
  if (start.slot_indices.size() > 1) object["slot_indices"] = start.slot_indices;
  write_job_keys(object, start);
  object["attempt"] = start.attempt;
  object["requeues"] = start.requeues;
  if (!start.service.empty()) object["service"] = exact_text(start.service);
  if (start.nodes) {
    object["nodes"] = *start.nodes;
    Json tasks = Json::array();
    for (const TaskStartRecord& task : start.tasks) {
      tasks.push_back({{"rank", task.rank},
                       {"host", exact_text(task.host)},
                       {"slot", exact_text(task.slot)},
                       {"slot_indices", task.slot_indices},
                       {"command", exact_text(task.command)}});
    }
    object["tasks"] = std::move(tasks);
  }
  return object;
}

Json to_json(const JobTakenAheadRecord& taken) {
  Json object = header(taken);
  object["job"] = taken.job;
  object["run"] = exact_text(taken.run);
  write_job_keys(object, taken);
  if (taken.nodes) object["nodes"] = *taken.nodes;
  return object;
}

Json to_json(const JobPgidRecord& pgid) {
  Json object = header(pgid);
  object["job"] = pgid.job;
  object["pgid"] = pgid.group.id;
  if (!pgid.group.mark.empty()) object["mark"] = exact_text(pgid.group.mark);
  if (pgid.rank) object["rank"] = *pgid.rank;
  return object;
}

Json to_json(const JobEndRecord& end) {
  Json object = header(end);
  object["job"] = end.job;
  object["exit"] = end.exit ? Json(*end.exit) : Json(nullptr);
  object["signal"] = text_or_null(end.signal);
  object["error"] = text_or_null(end.error);
  object["lost"] = end.lost;
  object["timed_out"] = end.timed_out;
  object["cancelled"] = end.cancelled;
  object["rerun"] = end.rerun;
  object["duration_ms"] = end.duration.count();
  if (end.failed_rank) object["failed_rank"] = *end.failed_rank;
  if (end.gpu) object[k_gpu_figures_key] = gpu_figures_record(*end.gpu);
  return object;
}

Json to_json(const JobGpuRecord& gpu) {
  Json object = header(gpu);
  object["job"] = gpu.job;
  object["attempt"] = gpu.attempt;
  if (gpu.gpu) object[k_gpu_figures_key] = gpu_figures_record(*gpu.gpu);
  return object;
}

Json to_json(const ServiceReadyRecord& ready) {
  Json object = header(ready);
  object["job"] = ready.job;
  object["waited_ms"] = ready.waited.count();
  object["variables"] = params_json(ready.variables);
  return object;
}

Json to_json(const OutputsRecord& outputs) {
  Json object = header(outputs);
  object["job"] = outputs.job;
  object["attempt"] = outputs.attempt;
  if (outputs.rank) object["rank"] = *outputs.rank;
  object["dir"] = exact_text(outputs.dir);
  Json files = Json::array();
  for (const OutputFile& file : outputs.files) {
    files.push_back({{"path", exact_text(file.path)},
                     {"size", file.size},
                     {"sha256", text_or_null(file.sha256)}});
  }
  object["files"] = std::move(files);
  object["missing"] = text_or_null(outputs.missing);
  object["error"] = text_or_null(outputs.error);
  return object;
}

Json to_json(const HostFailedRecord& failed) {
  Json object = header(failed);
  object["host"] = exact_text(failed.host);
  object["message"] = exact_text(failed.message);
  return object;
}

Json to_json(const RunEndRecord& end) {
  Json object = header(end);
  object["run"] = exact_text(end.run);
  object["status"] = exact_text(end.status);
  return object;
}

// --- reading ---------------------------------------------------------------

std::string text(const json& object, const char* key) { return journal_text(object, key); }

template <typename Number>
Number number(const json& object, const char* key, Number fallback = Number{}) {
  auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<Number>() : fallback;
}

bool flag(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

// A key that is there and an integer; nullopt otherwise.
std::optional<int> integer(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int>();
}

// A key that is there, as a number or `fallback`; nullopt when it is not.
std::optional<int> present(const json& object, const char* key, int fallback) {
  if (!object.contains(key)) return std::nullopt;
  return number<int>(object, key, fallback);
}

// An object of names and texts; a value that is not text reads as its JSON.
Params params(const json& object, const char* key) {
  Params read;
  auto it = object.find(key);
  if (it == object.end() || !it->is_object()) return read;
  for (const auto& [name, value] : it->items())
    read.emplace_back(name,
                      value.is_string() || value.is_object() ? journal_text(value) : value.dump());
  return read;
}

// "slot_indices", or else "slot_index" alone.
std::vector<int> slot_indices(const json& object) {
  std::vector<int> indices;
  if (auto many = object.find("slot_indices"); many != object.end() && many->is_array()) {
    for (const json& index : *many)
      if (index.is_number()) indices.push_back(index.get<int>());
  }
  if (indices.empty()) indices.push_back(number<int>(object, "slot_index"));
  return indices;
}

// The items of an array that are objects.
template <typename Item, typename Read>
std::vector<Item> objects(const json& object, const char* key, Read read) {
  std::vector<Item> items;
  if (auto list = object.find(key); list != object.end() && list->is_array())
    for (const json& item : *list)
      if (item.is_object()) items.push_back(read(item));
  return items;
}

RunStartRecord run_start_of(const json& object) {
  RunStartRecord start;
  start.time = text(object, "time");
  start.run = text(object, "run");
  start.pid = number<long>(object, "pid");
  start.mode = text(object, "mode");
  start.hosts_file = text(object, "hosts_file");
  start.queue_file = text(object, "queue_file");
  if (object.contains("cwd")) start.cwd = text(object, "cwd");
  if (auto slots = object.find("slots"); slots != object.end() && slots->is_array()) {
    start.slots = objects<RunSlotRecord>(object, "slots", [](const json& slot) {
      return RunSlotRecord{text(slot, "label"), text(slot, "host"), number<int>(slot, "index"),
                           params(slot, "params")};
    });
  }
  if (auto queued = object.find("queued");
      queued != object.end() && queued->is_number_integer() && *queued >= 0)
    start.queued = queued->get<std::size_t>();
  return start;
}

// The keys write_job_keys writes.
void read_job_keys(const json& object, RecordedJobKeys& job) {
  job.params = params(object, "params");
  job.line = number<int>(object, "line");
  job.template_command = text(object, "template");
  job.slots_needed = number<int>(object, "slots_needed", 1);
  job.timeout = text(object, "timeout");
  job.retries = present(object, "retries", 0);
  job.cancel = text(object, "cancel");
  job.metrics = params(object, "metrics");
  job.outputs = text(object, "outputs");
  job.outputs_cleanup = flag(object, "outputs_cleanup");
}

JobStartRecord job_start_of(const json& object) {
  JobStartRecord start;
  start.time = text(object, "time");
  start.job = number<JobId>(object, "job");
  start.run = text(object, "run");
  start.command = text(object, "command");
  start.slot = text(object, "slot");
  start.host = text(object, "host");
  start.slot_indices = slot_indices(object);
  read_job_keys(object, start);
  if (!object.contains("template")) start.template_command = start.command;
  start.attempt = number<int>(object, "attempt", 1);
  start.requeues = number<int>(object, "requeues");
  start.service = text(object, "service");
  start.nodes = present(object, "nodes", 1);
  if (start.nodes) {
    start.tasks = objects<TaskStartRecord>(object, "tasks", [](const json& task) {
      return TaskStartRecord{number<int>(task, "rank"), text(task, "host"), text(task, "slot"),
                             slot_indices(task), text(task, "command")};
    });
  }
  return start;
}

JobTakenAheadRecord job_taken_ahead_of(const json& object) {
  JobTakenAheadRecord taken;
  taken.time = text(object, "time");
  taken.job = number<JobId>(object, "job");
  taken.run = text(object, "run");
  read_job_keys(object, taken);
  taken.nodes = present(object, "nodes", 1);
  return taken;
}

JobPgidRecord job_pgid_of(const json& object) {
  return {text(object, "time"), number<JobId>(object, "job"),
          ProcessGroup{number<long>(object, "pgid"), text(object, "mark")},
          present(object, "rank", 0)};
}

std::optional<GpuFigures> gpu_figures_in(const json& object) {
  auto gpu = object.find(k_gpu_figures_key);
  return gpu == object.end() ? std::nullopt : gpu_figures_of(*gpu);
}

JobEndRecord job_end_of(const json& object) {
  JobEndRecord end;
  end.time = text(object, "time");
  end.job = number<JobId>(object, "job");
  if (auto exit = object.find("exit"); exit != object.end() && exit->is_number())
    end.exit = exit->get<int>();
  end.signal = text(object, "signal");
  end.error = text(object, "error");
  end.lost = flag(object, "lost");
  end.timed_out = flag(object, "timed_out");
  end.cancelled = flag(object, "cancelled");
  end.rerun = flag(object, "rerun");
  end.duration = std::chrono::milliseconds(number<long long>(object, "duration_ms"));
  end.failed_rank = integer(object, "failed_rank");
  end.gpu = gpu_figures_in(object);
  return end;
}

JobGpuRecord job_gpu_of(const json& object) {
  return {text(object, "time"), number<JobId>(object, "job"), number<int>(object, "attempt"),
          gpu_figures_in(object)};
}

ServiceReadyRecord service_ready_of(const json& object) {
  return {text(object, "time"), number<JobId>(object, "job"),
          std::chrono::milliseconds(number<long long>(object, "waited_ms")),
          params(object, "variables")};
}

OutputsRecord outputs_of(const json& object) {
  OutputsRecord outputs;
  outputs.time = text(object, "time");
  outputs.job = number<JobId>(object, "job");
  outputs.attempt = number<int>(object, "attempt");
  outputs.rank = present(object, "rank", 0);
  outputs.dir = text(object, "dir");
  outputs.files = objects<OutputFile>(object, "files", [](const json& file) {
    return OutputFile{text(file, "path"), number<std::uint64_t>(file, "size"),
                      text(file, "sha256")};
  });
  outputs.missing = text(object, "missing");
  outputs.error = text(object, "error");
  return outputs;
}

HostFailedRecord host_failed_of(const json& object) {
  return {text(object, "time"), text(object, "host"), text(object, "message")};
}

RunEndRecord run_end_of(const json& object) {
  return {text(object, "time"), text(object, "run"), text(object, "status")};
}

}  // namespace

bool OutputsRecord::operator==(const OutputsRecord& other) const {
  auto same_file = [](const OutputFile& a, const OutputFile& b) {
    return a.path == b.path && a.size == b.size && a.sha256 == b.sha256;
  };
  return time == other.time && job == other.job && attempt == other.attempt && rank == other.rank &&
         dir == other.dir &&
         std::equal(files.begin(), files.end(), other.files.begin(), other.files.end(),
                    same_file) &&
         missing == other.missing && error == other.error;
}

std::string_view event_name(const JournalRecord& record) {
  return std::visit([](const auto& kind) { return std::decay_t<decltype(kind)>::k_event; }, record);
}

std::optional<JobId> record_job(const JournalRecord& record) {
  return std::visit(
      [](const auto& kind) -> std::optional<JobId> {
        if constexpr (requires { kind.job; })
          return kind.job;
        else
          return std::nullopt;
      },
      record);
}

std::string journal_line(const JournalRecord& record) {
  Json object = std::visit([](const auto& kind) { return to_json(kind); }, record);
  std::string line = object.dump(-1, ' ', false, json::error_handler_t::replace);
  line.push_back('\n');
  return line;
}

Result<JournalRecord> record_from_json(const json& value) {
  if (!value.is_object()) return Status::error("not a journal record: not a JSON object");
  auto event = value.find("event");
  if (event == value.end() || !event->is_string())
    return Status::error("not a journal record: it has no event");
  const std::string& name = event->get_ref<const std::string&>();
  if (name == RunStartRecord::k_event) return JournalRecord(run_start_of(value));
  if (name == JobStartRecord::k_event) return JournalRecord(job_start_of(value));
  if (name == JobTakenAheadRecord::k_event) return JournalRecord(job_taken_ahead_of(value));
  if (name == JobPgidRecord::k_event) return JournalRecord(job_pgid_of(value));
  if (name == JobEndRecord::k_event) return JournalRecord(job_end_of(value));
  if (name == JobGpuRecord::k_event) return JournalRecord(job_gpu_of(value));
  if (name == ServiceReadyRecord::k_event) return JournalRecord(service_ready_of(value));
  if (name == OutputsRecord::k_event) return JournalRecord(outputs_of(value));
  if (name == HostFailedRecord::k_event) return JournalRecord(host_failed_of(value));
  if (name == RunEndRecord::k_event) return JournalRecord(run_end_of(value));
  return Status::error("not a journal record: unknown event '" + name + "'");
}

Result<JournalRecord> read_record(std::string_view line) {
  return record_from_json(parse_journal_record(line));
}

}  // namespace runner
