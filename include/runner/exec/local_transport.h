// HostTransport for `localhost`: jobs are child processes (sh -c) in their
// own process groups; no SSH.
#pragma once

#include <memory>

#include "runner/exec/transport.h"

namespace runner {

std::unique_ptr<HostTransport> make_local_transport(int host, TransportEvents& events);

}  // namespace runner
