#include "runner/state/gpu_figures_record.h"

#include <cmath>

namespace runner {

namespace {

// Each field's name and member, for the writer and the reader alike.
constexpr std::pair<const char*, double GpuFigures::*> k_fields[] = {
    {"energy_j", &GpuFigures::energy_j},
    {"power_mean_w", &GpuFigures::power_mean_w},
    {"power_max_w", &GpuFigures::power_max_w},
    {"util_mean", &GpuFigures::util_mean},
    {"memory_max_mib", &GpuFigures::memory_max_mib},
    {"seconds", &GpuFigures::seconds},
};

// Three decimals: a millijoule, a milliwatt; no more than the readings have.
double rounded(double value) { return std::round(value * 1000) / 1000; }

}  // namespace

nlohmann::ordered_json gpu_figures_record(const GpuFigures& figures) {
  nlohmann::ordered_json record = nlohmann::ordered_json::object();
  for (const auto& [name, field] : k_fields) record[name] = rounded(figures.*field);
  record["gpus"] = figures.gpus;
  return record;
}

std::optional<GpuFigures> gpu_figures_of(const nlohmann::json& record) {
  if (!record.is_object()) return std::nullopt;
  GpuFigures figures;
  for (const auto& [name, field] : k_fields) {
    auto value = record.find(name);
    if (value == record.end() || !value->is_number()) return std::nullopt;
    figures.*field = value->get<double>();
  }
  auto gpus = record.find("gpus");
  if (gpus == record.end() || !gpus->is_number_integer()) return std::nullopt;
  figures.gpus = gpus->get<int>();
  return figures;
}

}  // namespace runner
