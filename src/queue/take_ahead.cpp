// The jobs a take of a long queue removes from its front. Pure.
#include "runner/queue/take_ahead.h"

namespace runner {

std::size_t jobs_per_take(std::size_t text_bytes) {
  if (text_bytes < k_take_ahead_threshold) return 1;
  return (text_bytes + k_take_ahead_bytes - 1) / k_take_ahead_bytes;
}

}  // namespace runner
