// `runner push SRC... [--to DIR]`: local files and folders copied to every
// host of the fleet over runner's own connections, all hosts at once in
// one event loop; only what a host lacks or has with another size, time or
// mode is sent. One line per host as it finishes, then a summary; exit 1
// when a host failed. Threading: none.
#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <memory>

#include "fatal.h"
#include "runner/cli/host_round.h"
#include "runner/cli/options.h"
#include "runner/config/config_error.h"
#include "runner/config/hosts.h"
#include "runner/exec/host_ops.h"
#include "runner/ui/console.h"
#include "subcommand.h"

namespace runner {

namespace {

// The hosts of `fleet` that `names` names (all when empty), with their slots.
Fleet only_hosts(const Fleet& fleet, const std::vector<std::string>& names,
                 const std::string& hosts_file) {
  if (names.empty()) return fleet;
  Fleet chosen;
  for (const std::string& name : names) {
    auto host = std::find_if(fleet.hosts.begin(), fleet.hosts.end(),
                             [&](const Host& h) { return h.name == name; });
    if (host == fleet.hosts.end())
      throw ConfigError(fmt::format("--hosts: {} is not a host of {}", name, hosts_file));
    Host copy = *host;
    copy.slots.clear();
    for (int slot : host->slots) {
      Slot moved = fleet.slots[slot];
      moved.host = static_cast<int>(chosen.hosts.size());
      copy.slots.push_back(static_cast<int>(chosen.slots.size()));
      chosen.slots.push_back(std::move(moved));
    }
    chosen.hosts.push_back(std::move(copy));
  }
  return chosen;
}

// Each host's push: begun once it is connected, done when put_files
// answers or the host fails.
class Pusher final : public HostRound {
 public:
  Pusher(const Fleet& fleet, const std::vector<PushFile>& files, std::string to)
      : HostRound("the copy"),
        m_fleet(fleet),
        m_files(files),
        m_to(std::move(to)),
        m_results(fleet.hosts.size()) {}

  const std::vector<PutResult>& results() const { return m_results; }

 private:
  void begin(int host, Executor&) override {
    host_ops(host).put_files(m_files, m_to,
                             [this, host](const PutResult& result) { finish(host, result); });
  }

  void failed(int host, const std::string& why) override {
    PutResult failed;
    failed.error = why;
    failed.lost = true;
    finish(host, failed);
  }

  void finish(int host, const PutResult& result) {
    if (!done(host)) return;
    m_results[host] = result;
    ++m_finished;
    const std::string& name = m_fleet.hosts[host].name;
    std::string progress = fmt::format("[{}/{}]", m_finished, m_results.size());
    if (!result.error.empty()) {
      fmt::print(stderr, "{} {}: FAILED: {}\n", progress, name, result.error);
      return;
    }
    fmt::print(stdout, "{} {}: {}\n", progress, name, put_summary(result));
    std::fflush(stdout);
  }

  const Fleet& m_fleet;
  const std::vector<PushFile>& m_files;
  std::string m_to;
  std::vector<PutResult> m_results;
  std::size_t m_finished = 0;
};

}  // namespace

int push_files(const PushOptions& options) {
  signal(SIGPIPE, SIG_IGN);
  Console console(stdout, stderr, ColorMode::never, 1);
  Result<std::vector<PushFile>> files = local_push_files(options.sources);
  if (!files) {
    console.error(files.status().message());
    return 2;
  }
  Fleet fleet =
      only_hosts(value_or_fatal(load_hosts(options.hosts_file)), options.hosts, options.hosts_file);
  std::shared_ptr<SshContext> context =
      prepare_ssh(fleet, options.ssh, [&](const std::string& note) { console.warn(note); });
  fmt::print(stdout, "pushing {} file{} to {} host{} into {}\n", files->size(),
             files->size() == 1 ? "" : "s", fleet.hosts.size(), fleet.hosts.size() == 1 ? "" : "s",
             options.to);
  std::fflush(stdout);

  Pusher pusher(fleet, *files, options.to);
  pusher.run(fleet, context);

  std::vector<std::string> failed;
  PutResult total;
  for (std::size_t host = 0; host < fleet.hosts.size(); ++host) {
    const PutResult& result = pusher.results()[host];
    if (!result.error.empty()) failed.push_back(fleet.hosts[host].name);
    total.sent += result.sent;
    total.bytes += result.bytes;
    total.skipped += result.skipped;
  }
  std::string summary =
      fmt::format("pushed to {} of {} hosts: {}", fleet.hosts.size() - failed.size(),
                  fleet.hosts.size(), put_summary(total));
  if (failed.empty()) {
    fmt::print(stdout, "{}\n", summary);
    return 0;
  }
  console.error(fmt::format("{}; failed: {}", summary, fmt::join(failed, ", ")));
  return 1;
}

Subcommand add_push_command(CLI::App& app, const UserDefaults& defaults) {
  auto options = std::make_shared<PushOptions>();
  take(defaults.hosts_file, options->hosts_file);
  take_ssh(defaults, options->ssh);
  auto* push = app.add_subcommand(
      "push",
      "Copy local files and folders to every host, sending only what a host lacks or "
      "has with another size, time or mode");
  push->add_option("sources", options->sources, "Files and folders to copy")->required();
  push->add_option("--to", options->to,
                   "The folder on each host to copy them into, from the login directory "
                   "(default: the login directory itself)");
  push->add_option("--hosts", options->hosts, "Only these hosts of the fleet")->delimiter(',');
  push->add_option("-H,--hosts-file", options->hosts_file, "The fleet (default: hosts.yaml)")
      ->envname(k_hosts_file_env);
  add_ssh_flags(*push, options->ssh);
  set_example(*push,
              "runner push data/ model.bin --to work\n  runner push data --hosts node01,node02");
  return {push, [options] { return push_files(*options); }};
}

}  // namespace runner
