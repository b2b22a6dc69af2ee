#include "runner/sched/job.h"

namespace runner {

std::string Job::label() const {
  std::string label;
  for (const Task& task : tasks) label += (label.empty() ? "" : "; ") + task.label;
  return label;
}

std::optional<int> Job::failed_rank() const {
  if (const Running* running = std::get_if<Running>(&state)) return running->failed_rank;
  if (const Done* done = std::get_if<Done>(&state)) return done->failed_rank;
  return std::nullopt;
}

std::vector<int> Job::slots() const {
  std::vector<int> slots;
  for (const Task& task : tasks) slots.insert(slots.end(), task.slots.begin(), task.slots.end());
  return slots;
}

}  // namespace runner
