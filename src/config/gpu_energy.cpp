#include "runner/config/gpu_energy.h"

#include <fmt/format.h>

#include <algorithm>

namespace runner {

namespace {

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Whether the counter says what the GPU took from `a` to `b`: both have
// it, and it did not go back.
bool counted(const GpuSample& a, const GpuSample& b) {
  return a.energy_mj && b.energy_mj && *b.energy_mj >= *a.energy_mj && b.at > a.at;
}

// The mean power the counter says from `a` to `b`, where it does.
std::optional<double> counted_power(const GpuSample& a, const GpuSample& b) {
  if (!counted(a, b)) return std::nullopt;
  return (*b.energy_mj - *a.energy_mj) / 1000 / seconds_between(a.at, b.at);
}

// A stretch of time over which readings go linearly from `first`'s to
// `last`'s (the same sample: they hold), clipped to [lo, hi]. A reading
// held beside a stretch the counter measured holds its power as the
// counter says it (`counted_w`), not as the power reading does.
struct Piece {
  const GpuSample* first;
  const GpuSample* last;
  Clock::time_point lo;
  Clock::time_point hi;
  std::optional<double> counted_w;
};

// The reading `field` at `at`, on the line from `piece.first` to `piece.last`.
double reading_at(const Piece& piece, double GpuSample::*field, Clock::time_point at) {
  double a = piece.first->*field;
  double b = piece.last->*field;
  double span = seconds_between(piece.first->at, piece.last->at);
  if (span <= 0) return a;
  return a + (b - a) * seconds_between(piece.first->at, at) / span;
}

// The integral of `field` over the piece (trapezoid).
double integral_of(const Piece& piece, double GpuSample::*field) {
  return (reading_at(piece, field, piece.lo) + reading_at(piece, field, piece.hi)) / 2 *
         seconds_between(piece.lo, piece.hi);
}

double peak_of(const Piece& piece, double GpuSample::*field) {
  return std::max(reading_at(piece, field, piece.lo), reading_at(piece, field, piece.hi));
}

// The piece's energy in joules: its share of the counter's advance, or
// the integral of power.
double energy_of(const Piece& piece) {
  if (piece.counted_w) return *piece.counted_w * seconds_between(piece.lo, piece.hi);
  const GpuSample& a = *piece.first;
  const GpuSample& b = *piece.last;
  if (&a != &b && counted(a, b))
    return (*b.energy_mj - *a.energy_mj) / 1000 * seconds_between(piece.lo, piece.hi) /
           seconds_between(a.at, b.at);
  return integral_of(piece, &GpuSample::power_w);
}

// Adds the piece of [lo, hi] that lies in [from, to], if any.
void add_piece(std::vector<Piece>& pieces, const GpuSample& first, const GpuSample& last,
               Clock::time_point lo, Clock::time_point hi, Clock::time_point from,
               Clock::time_point to, std::optional<double> counted_w = std::nullopt) {
  lo = std::max(lo, from);
  hi = std::min(hi, to);
  if (lo < hi) pieces.push_back({&first, &last, lo, hi, counted_w});
}

// The pieces the samples cover in [from, to].
std::vector<Piece> covered_pieces(const std::vector<GpuSample>& samples, Clock::time_point from,
                                  Clock::time_point to, Clock::duration reach) {
  std::vector<Piece> pieces;
  if (samples.empty()) return pieces;
  std::size_t n = samples.size();
  add_piece(pieces, samples.front(), samples.front(), samples.front().at - reach,
            samples.front().at, from, to,
            n > 1 ? counted_power(samples[0], samples[1]) : std::nullopt);
  for (std::size_t i = 0; i + 1 < n; ++i) {
    const GpuSample& a = samples[i];
    const GpuSample& b = samples[i + 1];
    if (counted(a, b) || b.at - a.at <= 2 * reach) {
      add_piece(pieces, a, b, a.at, b.at, from, to);
    } else {
      add_piece(pieces, a, a, a.at, a.at + reach, from, to);
      add_piece(pieces, b, b, b.at - reach, b.at, from, to);
    }
  }
  add_piece(pieces, samples.back(), samples.back(), samples.back().at,
            samples.back().at + reach, from, to,
            n > 1 ? counted_power(samples[n - 2], samples[n - 1]) : std::nullopt);
  return pieces;
}

}  // namespace

std::optional<GpuFigures> figures_between(const std::vector<GpuSample>& samples,
                                          Clock::time_point from, Clock::time_point to,
                                          Clock::duration reach) {
  std::vector<Piece> pieces = covered_pieces(samples, from, to, reach);
  if (pieces.empty()) return std::nullopt;
  GpuFigures figures;
  figures.gpus = 1;
  double util_integral = 0;
  for (const Piece& piece : pieces) {
    figures.seconds += seconds_between(piece.lo, piece.hi);
    figures.energy_j += energy_of(piece);
    util_integral += integral_of(piece, &GpuSample::util_percent);
    figures.power_max_w = std::max(figures.power_max_w, peak_of(piece, &GpuSample::power_w));
    figures.memory_max_mib =
        std::max(figures.memory_max_mib, peak_of(piece, &GpuSample::memory_mib));
  }
  figures.power_mean_w = figures.energy_j / figures.seconds;
  figures.util_mean = util_integral / figures.seconds;
  return figures;
}

std::string counter_refusal(const GpuSample& before, const GpuSample& after) {
  if (!before.energy_mj || !after.energy_mj) return "";
  if (*after.energy_mj < *before.energy_mj)
    return fmt::format("its energy counter went back from {} to {} mJ", *before.energy_mj,
                       *after.energy_mj);
  double joules = (*after.energy_mj - *before.energy_mj) / 1000;
  double seconds = seconds_between(before.at, after.at);
  if (joules > k_max_gpu_power_w * seconds)
    return fmt::format("its energy counter advanced {} J in {:.3f} s ({:.0f} W, above {} W)",
                       joules, seconds, seconds > 0 ? joules / seconds : joules, k_max_gpu_power_w);
  return "";
}

GpuFigures combined(const std::vector<GpuFigures>& each) {
  GpuFigures sum;
  for (const GpuFigures& gpu : each) {
    sum.energy_j += gpu.energy_j;
    sum.power_mean_w += gpu.power_mean_w;
    sum.power_max_w += gpu.power_max_w;
    sum.util_mean += gpu.util_mean * gpu.gpus;
    sum.memory_max_mib += gpu.memory_max_mib;
    sum.seconds = std::max(sum.seconds, gpu.seconds);
    sum.gpus += gpu.gpus;
  }
  if (sum.gpus > 0) sum.util_mean /= sum.gpus;
  return sum;
}

}  // namespace runner
