// Polling for a condition in tests (see wait.h).
#include "support/wait.h"

#include <unistd.h>

namespace runner::testing {

bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds limit) {
  auto give_up = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= give_up) return false;
    usleep(20'000);
  }
  return true;
}

}  // namespace runner::testing
