// Jobs as one line of text each, "command name=value ... slots=N", so that
// tests can compare the jobs of entries and queue files with EXPECT_EQ.
#pragma once

#include <string>
#include <vector>

#include "runner/config/queue_entry.h"

namespace runner::testing {

// The job's command, then every parameter, then slots= when not 1.
std::string describe(const JobSpec& job);
std::vector<std::string> describe(const std::vector<JobSpec>& jobs);

}  // namespace runner::testing
