// Private to the report area: the section of `runner report`'s page that
// lists the files jobs' `outputs:` brought back, each with its size and
// the SHA-256 recorded when it arrived. Pure.
#pragma once

#include <string>
#include <vector>

#include "runner/report/campaign.h"

namespace runner {

// "<h2>Output files …</h2>" and <table id="outputs"> (job, path, size,
// SHA-256), in the order of `jobs`; empty when none of them has any.
std::string html_outputs_section(const std::vector<const CampaignJob*>& jobs);

}  // namespace runner
