// How a job ended, in words (see runner/ui/exit_text.h).
#include "runner/ui/exit_text.h"

#include <fmt/format.h>

namespace runner {

std::string describe_exit(const JobExit& exit) {
  if (exit.lost()) return exit.error().empty() ? "lost" : "lost: " + exit.error();
  std::string how = !exit.error().empty()    ? exit.error()
                    : !exit.signal().empty() ? "killed by " + exit.signal()
                                             : fmt::format("exit {}", exit.code());
  if (exit.timed_out) return "timed out (" + how + ")";
  if (exit.cancelled) return "cancelled (" + how + ")";
  return how;
}

}  // namespace runner
