// A job's GPU figures as the journal's job_gpu holds them, and job_end in
// journals of earlier versions ("gpu": {energy_j, power_mean_w, power_max_w,
// util_mean, memory_max_mib, seconds, gpus}), written and read back by this
// one definition.
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "runner/config/gpu_energy.h"

namespace runner {

// The key of job_gpu (and of an earlier version's job_end) that holds them.
inline constexpr const char* k_gpu_figures_key = "gpu";

nlohmann::ordered_json gpu_figures_record(const GpuFigures& figures);

// What gpu_figures_record wrote; nullopt for anything else.
std::optional<GpuFigures> gpu_figures_of(const nlohmann::json& record);

}  // namespace runner
