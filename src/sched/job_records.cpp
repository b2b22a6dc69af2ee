#include "runner/sched/job_records.h"

#include "runner/config/duration.h"
#include "runner/config/job_render.h"

namespace runner {

namespace {

std::vector<int> slot_indices(const Fleet& fleet, const std::vector<int>& slots) {
  std::vector<int> indices;
  for (int slot : slots) indices.push_back(fleet.slots[slot].index);
  return indices;
}

}  // namespace

RecordedJobKeys recorded_keys(const JobSpec& spec) {
  RecordedJobKeys keys;
  keys.params = spec.params;
  keys.line = spec.line;
  keys.template_command = spec.command;
  keys.slots_needed = spec.slots;
  keys.timeout = spec.timeout_text;
  keys.retries = spec.retries;
  keys.cancel = spec.cancel;
  keys.metrics = spec.metrics;
  keys.outputs = spec.outputs;
  keys.outputs_cleanup = spec.outputs_cleanup;
  return keys;
}

JobSpec spec_from(const RecordedJobKeys& keys) {
  JobSpec spec;
  spec.command = keys.template_command;
  spec.slots = keys.slots_needed;
  spec.line = keys.line;
  spec.timeout_text = keys.timeout;
  if (!spec.timeout_text.empty()) spec.timeout = parse_duration(spec.timeout_text);
  spec.retries = keys.retries;
  spec.cancel = keys.cancel;
  spec.params = keys.params;
  spec.metrics = keys.metrics;
  spec.outputs = keys.outputs;
  spec.outputs_cleanup = keys.outputs_cleanup;
  return spec;
}

JobTakenAheadRecord job_taken_ahead_record(const Job& job) {
  JobTakenAheadRecord record;
  record.job = job.id;
  static_cast<RecordedJobKeys&>(record) = recorded_keys(job.spec);
  record.nodes = job.spec.nodes;
  return record;
}

JobStartRecord job_start_record(const Fleet& fleet, const Job& job) {
  const Task& task = job.tasks.front();
  JobStartRecord record;
  record.job = job.id;
  record.command = task.command;
  record.slot = slots_label(fleet, task.slots);
  record.host = fleet.hosts[task.host].name;
  record.slot_indices = slot_indices(fleet, task.slots);
  static_cast<RecordedJobKeys&>(record) = recorded_keys(job.spec);
  record.attempt = job.attempt;
  record.requeues = job.requeues;
  if (job.spec.service)
    record.service = job.spec.service->name.empty() ? "true" : job.spec.service->name;
  if (job.layout) {
    record.nodes = static_cast<int>(job.tasks.size());
    for (const Task& each : job.tasks)
      record.tasks.push_back(TaskStartRecord{each.rank, fleet.hosts[each.host].name,
                                             slots_label(fleet, each.slots),
                                             slot_indices(fleet, each.slots), each.command});
  }
  return record;
}

std::optional<int> recorded_rank(const Job& job, const Task& task) {
  return job.layout ? std::optional<int>(task.rank) : std::nullopt;
}

std::string outputs_problem(const FetchedFiles& fetched) {
  std::string problem = fetched.error;
  for (const auto* notes : {&fetched.unwritten, &fetched.refused})
    for (const std::string& note : *notes) problem += (problem.empty() ? "" : "; ") + note;
  return problem;
}

}  // namespace runner
