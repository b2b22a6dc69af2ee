// Executor for `localhost`: jobs are child processes (sh -c) in their
// own process groups; no SSH.
#pragma once

#include <memory>

#include "runner/exec/executor.h"

namespace runner {

std::unique_ptr<Executor> make_local_executor(int host, ExecutorEvents& events);

}  // namespace runner
