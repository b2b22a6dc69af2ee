// with_last_resort: what an uncaught exception becomes (see last_resort.h).
#include "runner/cli/last_resort.h"

#include <fmt/format.h>

#include <exception>

namespace runner {

int with_last_resort(const std::function<int()>& body, std::FILE* err) {
  try {
    return body();
  } catch (const std::exception& e) {
    fmt::print(err, "runner: error: unexpected failure: {}\n", e.what());
  } catch (...) {
    fmt::print(err, "runner: error: unexpected failure: an exception of unknown type\n");
  }
  return 2;
}

}  // namespace runner
