// Private to the report area: the GPU power section of `runner report`'s
// page, under the timeline. Pure.
#pragma once

#include <string>

#include "html_report_model.h"

namespace runner {

// "<h2>GPU power</h2>" and <svg id="gpu-power">: a lane per slot whose
// jobs' GPUs were read, over the timeline's span, each job a bar as high
// as its mean power per GPU (the highest bar fills its lane), with its
// figures in its title. Empty when no job's GPUs were read.
std::string html_gpu_power_section(const HtmlReportModel& model);

}  // namespace runner
