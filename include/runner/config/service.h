// A service: a queue or broadcast entry with `service: NAME` (or `service:
// true`) whose command keeps running, holding its slots, until the run
// ends; the step that starts it is done once it is ready. Its keys, their
// checks and the readiness pattern. Pure logic.
//
//   service: dht                 # its name: `<<dht.GROUP>>` in later jobs
//   ready: curl -sf localhost:8080/health   # run on its host until it exits 0
//   ready_port: 31337            # ... or until the port is open on its host
//                                # (a template too: <<port>> from hosts.yaml)
//   ready_log: 'Started at (?<addr>\S+)'    # ... or a line of its output
//   ready_timeout: 10m           # not ready by then: it fails (default 10m)
//   after: tc qdisc del dev eth0 root       # run on its slots once it stopped
//   restart: on-failure          # run again when it ends before the run does
//
// Every readiness check given must pass; with none, a service is ready
// once its process started. A capture group of `ready_log` becomes the
// variable NAME.GROUP for the jobs after it: named (`(?<addr>...)`) or
// numbered from 1.
#pragma once

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runner/config/params.h"
#include "runner/config/pattern.h"
#include "runner/core/result.h"

namespace runner {

inline constexpr std::chrono::minutes k_default_ready_timeout{10};

struct ServiceSpec {
  std::string name;  // `service: NAME`; empty for `service: true`
  std::string ready;  // command template
  std::string ready_port;  // a port, or a template that renders to one; empty: none
  std::string ready_log;  // regex, as written
  std::chrono::milliseconds ready_timeout = k_default_ready_timeout;
  std::string ready_timeout_text;  // as written; empty: the default
  std::string after;               // command template
  bool restart_on_failure = false;
};

// `service`, `ready`, `ready_port`, `ready_log`, `ready_timeout`, `after`,
// `restart`.
std::span<const std::string_view> service_keys();
bool is_service_key(std::string_view key);

// Whether `value` is a value `key` (a service key) can take, and if not why.
Status check_service_value(std::string_view key, const std::string& value);

// Sets `key` (a service key, its value checked) of `service`. `service:
// false` leaves it unset.
void set_service_key(std::optional<ServiceSpec>& service, std::string_view key,
                     const std::string& value);

// `text` as a TCP port (1 to 65535).
std::optional<int> parse_port(std::string_view text);

// The keys and values that give `service` back, as consumed.yaml writes them.
std::vector<std::pair<std::string, std::string>> service_keys(const ServiceSpec& service);

// A `ready_log` pattern, compiled (`(?<name>...)` is a capture group named
// `name`), or why it is not one.
Result<Pattern> compile_ready_pattern(const std::string& text);

// The variables a match gives the jobs after the service: NAME.GROUP, a
// group being named by its name, or its number.
Params ready_variables(const std::string& service, const Pattern& pattern,
                       const PatternMatch& match);

}  // namespace runner
