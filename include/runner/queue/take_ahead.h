// How many jobs a take of a long queue removes from its front: each
// rewrite of the file is paid by at least one job per k_take_ahead_bytes of
// it, so draining a long queue costs about its size once per
// k_take_ahead_bytes of jobs, not once per job. Pure.
#pragma once

#include <cstddef>

namespace runner {

// Below this size a take removes only the jobs it places.
inline constexpr std::size_t k_take_ahead_threshold = 256 * 1024;
// From the threshold on, a take removes a job per this many bytes of file.
inline constexpr std::size_t k_take_ahead_bytes = 64 * 1024;

// The jobs a take of a queue whose text is `text_bytes` long removes in
// all, the ones it places and the ones taken ahead of need: 1 below
// k_take_ahead_threshold (no job is taken ahead), else
// ceil(text_bytes / k_take_ahead_bytes).
std::size_t jobs_per_take(std::size_t text_bytes);

}  // namespace runner
