// One command run on every host of a fleet, as a run would reach it, with
// what each answered: for the commands that look at hosts (`runner check`,
// `runner hosts --detect`). Threading: none; one event loop drives every
// executor.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runner/config/detected_hosts.h"
#include "runner/config/hosts.h"
#include "runner/core/clock.h"
#include "runner/core/job_exit.h"
#include "runner/exec/ssh/ssh_executor.h"

namespace runner {

class SshContext;

// What one host answered.
struct HostProbe {
  bool answered = false;  // connected, and the command ended
  std::string failure;    // why it did not answer: the connection's error, or the time out
  JobExit exit;           // when it answered
  std::string out;
  std::string err;
  std::optional<SshHostInfo> ssh;  // how it was reached; nullopt for a local host
};

// What a host's answer to k_list_gpus (`nvidia-smi -L`) says.
struct GpuAnswer {
  enum class Kind {
    unreachable,    // no answer: `why`
    cannot_run,     // connected, but its command did not run: `why`
    no_nvidia_smi,  // there is none
    failed,         // nvidia-smi failed: `why` ("exit 9: what it said")
    listed,         // `gpus` (perhaps none)
  } kind = Kind::unreachable;
  std::vector<DetectedGpu> gpus;
  std::string why;
};
GpuAnswer read_gpu_answer(const HostProbe& probe);

// Runs `command` on every host of `fleet` at once and returns each host's
// answer in the fleet's order. `done(host, probe)` is called as each host's
// answer is known. A host that has not connected within `connect_timeout`
// × 3, or whose command has not ended `command_timeout` after that, fails.
std::vector<HostProbe> probe_hosts(const Fleet& fleet, std::shared_ptr<SshContext> ssh,
                                   const std::string& command, Clock::duration connect_timeout,
                                   Clock::duration command_timeout,
                                   const std::function<void(int host, const HostProbe&)>& done);

}  // namespace runner
