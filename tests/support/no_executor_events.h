// Events of executors that a test does not look at: what an executor made
// only to be asked something (its address, a command's answer) reports to.
#pragma once

#include <string>
#include <string_view>

#include "runner/exec/executor.h"

namespace runner::testing {

class NoExecutorEvents final : public ExecutorEvents {
 public:
  void host_ready(int) override {}
  void host_failed(int, const Status&) override {}
  void task_started(TaskId, long) override {}
  void task_output(TaskId, OutputStream, std::string_view) override {}
  void task_exited(TaskId, const JobExit&) override {}
  void signal_failed(TaskId, int, const std::string&) override {}
};

}  // namespace runner::testing
