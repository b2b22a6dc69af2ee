// Jobs as text for assertions (see job_text.h).
#include "support/job_text.h"

namespace runner::testing {

std::string describe(const JobSpec& job) {
  std::string out = job.command;
  for (const auto& [name, value] : job.params) out += " " + name + "=" + value;
  if (job.slots != 1) out += " slots=" + std::to_string(job.slots);
  return out;
}

std::vector<std::string> describe(const std::vector<JobSpec>& jobs) {
  std::vector<std::string> out;
  for (const auto& job : jobs) out.push_back(describe(job));
  return out;
}

}  // namespace runner::testing
