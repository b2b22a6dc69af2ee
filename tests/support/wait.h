// Waiting in a test for something that happens elsewhere (another process,
// a remote host): polls a condition until it holds or a time limit passes.
#pragma once

#include <chrono>
#include <functional>

namespace runner::testing {

// Polls `condition` every 20 ms until it holds or `limit` passes; returns
// whether it held.
bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds limit);

}  // namespace runner::testing
