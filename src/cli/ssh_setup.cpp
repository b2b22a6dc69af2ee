// The SSH side of a command: one SshContext for the run, with the ssh
// configuration of every host resolved before anything connects, so that a
// broken configuration stops the command (exit 2) instead of failing hosts.
#include <fmt/format.h>

#include "runner/cli/options.h"
#include "runner/config/config_error.h"

namespace runner {

std::shared_ptr<SshContext> prepare_ssh(const Fleet& fleet, const SshOptions& options,
                                        const std::function<void(const std::string&)>& warn) {
  std::shared_ptr<SshContext> context = make_ssh_context(options);
  std::vector<HostAddress> addresses;
  for (const Host& host : fleet.hosts) {
    if (!host.address.local) addresses.push_back(host.address);
  }
  if (addresses.empty()) return context;
  std::vector<Status> problems = resolve_ssh_config(*context, addresses);
  if (std::string note = ssh_config_note(*context); !note.empty() && warn) warn(note);
  if (problems.empty()) return context;
  const Status& first = problems.front();
  std::string more = problems.size() > 1
                         ? fmt::format(" (and {} more problems)", problems.size() - 1)
                         : std::string();
  std::string fix = options.config_file.empty()
                        ? "fix the ssh configuration (~/.ssh/config), or name another with "
                          "--ssh-config FILE"
                        : "fix the ssh configuration";
  throw ConfigError(first.file(), first.line(), 0,
                    fmt::format("{}{}; {}", first.message(), more, fix));
}

}  // namespace runner
