#include "runner/sched/job_records.h"

#include "runner/config/job_render.h"

namespace runner {

namespace {

std::vector<int> slot_indices(const Fleet& fleet, const std::vector<int>& slots) {
  std::vector<int> indices;
  for (int slot : slots) indices.push_back(fleet.slots[slot].index);
  return indices;
}

// What job_start and job_taken_ahead record to run the job again.
template <typename Record>
void record_spec(Record& record, const JobSpec& spec) {
  record.params = spec.params;
  record.line = spec.line;
  record.template_command = spec.command;
  record.slots_needed = spec.slots;
  record.timeout = spec.timeout_text;
  record.retries = spec.retries;
  record.cancel = spec.cancel;
  record.metrics = spec.metrics;
  record.outputs = spec.outputs;
  record.outputs_cleanup = spec.outputs_cleanup;
}

}  // namespace

JobTakenAheadRecord job_taken_ahead_record(const Job& job) {
  JobTakenAheadRecord record;
  record.job = job.id;
  record_spec(record, job.spec);
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
  record_spec(record, job.spec);
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
