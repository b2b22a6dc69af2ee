#include "runner/state/gpu_power_series.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

namespace runner {

namespace {

using Milliseconds = std::chrono::milliseconds;

long long ms_since_epoch(std::chrono::system_clock::time_point at) {
  return std::chrono::duration_cast<Milliseconds>(at.time_since_epoch()).count();
}

std::chrono::system_clock::time_point at_ms(long long ms) {
  return std::chrono::system_clock::time_point(Milliseconds(ms));
}

}  // namespace

std::optional<GpuPowerPoint> gpu_power_point(std::string_view line) {
  nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
  if (!record.is_object()) return std::nullopt;
  auto host = record.find("host");
  auto gpu = record.find("gpu");
  auto from = record.find("from_ms");
  auto to = record.find("to_ms");
  auto watts = record.find("w");
  if (host == record.end() || !host->is_string() || gpu == record.end() || !gpu->is_string() ||
      from == record.end() || !from->is_number_integer() || to == record.end() ||
      !to->is_number_integer() || watts == record.end() || !watts->is_number())
    return std::nullopt;
  // No GPU draws 100 kW: more is a hostile or broken reading.
  constexpr double k_most_watts = 100'000;
  double w = watts->get<double>();
  if (!std::isfinite(w) || w < 0 || w > k_most_watts) return std::nullopt;
  // Times a run can have written: from 1970 to 2096 (beyond, a time point
  // in nanoseconds overflows), and a stretch that does not end before it
  // begins.
  constexpr long long k_latest_ms = 4'000'000'000'000;
  long long from_ms = from->get<long long>();
  long long to_ms = to->get<long long>();
  if (from_ms < 0 || to_ms > k_latest_ms || to_ms < from_ms) return std::nullopt;
  return GpuPowerPoint{host->get<std::string>(), gpu->get<std::string>(), at_ms(from_ms),
                       at_ms(to_ms), w};
}

std::string gpu_power_line(const GpuPowerPoint& point) {
  nlohmann::ordered_json record{{"host", point.host},
                                {"gpu", point.gpu},
                                {"from_ms", ms_since_epoch(point.from)},
                                {"to_ms", ms_since_epoch(point.to)},
                                {"w", std::round(point.watts * 100) / 100}};
  // A name that is not UTF-8 (a host's hostile answer) is written with
  // replacement characters rather than refused.
  return record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string gpu_power_series_path(const std::string& state_dir) {
  return state_dir + "/gpu_power.jsonl";
}

GpuPowerSeriesWriter::GpuPowerSeriesWriter(std::string path, std::uintmax_t limit)
    : m_path(std::move(path)), m_limit(limit) {}

Status GpuPowerSeriesWriter::open() {
  FileSystem& files = real_file_system();
  m_file = files.open(m_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  struct stat info {};
  if (!m_file.valid() || files.fstat(m_file.get(), &info) != 0)
    return Status::error(fmt::format("cannot open {}: {}", m_path, std::strerror(errno)));
  m_size = static_cast<std::uintmax_t>(info.st_size);
  return Status::ok_status();
}

Status GpuPowerSeriesWriter::append(const GpuPowerPoint& point) {
  if (!m_file.valid())
    if (Status opened = open(); !opened.ok()) return opened;
  std::string line = gpu_power_line(point);
  if (m_size + line.size() > m_limit) {
    m_size = m_limit;  // nor any later one
    return Status::error(fmt::format("{} reached its limit of {} bytes", m_path, m_limit));
  }
  ssize_t written = real_file_system().write(m_file.get(), line.data(), line.size());
  if (written != static_cast<ssize_t>(line.size()))
    return Status::error(fmt::format("cannot write {}: {}", m_path,
                                     written < 0 ? std::strerror(errno) : "a short write"));
  m_size += line.size();
  return Status::ok_status();
}

std::vector<GpuPowerPoint> read_gpu_power_series(const std::string& path) {
  std::vector<GpuPowerPoint> points;
  std::optional<std::string> text =
      read_whole_file(real_file_system(), path, k_gpu_power_series_bytes);
  if (!text) return points;
  std::string_view rest = *text;
  for (std::size_t end; (end = rest.find('\n')) != std::string_view::npos;
       rest.remove_prefix(end + 1))
    if (std::optional<GpuPowerPoint> point = gpu_power_point(rest.substr(0, end)))
      points.push_back(std::move(*point));
  return points;
}

}  // namespace runner
