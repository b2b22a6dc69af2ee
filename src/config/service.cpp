#include "runner/config/service.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>

#include "runner/config/duration.h"

namespace runner {

namespace {

constexpr std::array<std::string_view, 7> k_keys = {
    "service", "ready", "ready_port", "ready_log", "ready_timeout", "after", "restart"};

bool is_name(std::string_view text) {
  if (text.empty() || !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_'))
    return false;
  for (char c : text)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  return true;
}

bool is_template(const std::string& text) {
  return text.find("<<") != std::string::npos || text.find("{{") != std::string::npos;
}

}  // namespace

std::optional<int> parse_port(std::string_view text) {
  int port = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (error != std::errc() || end != text.data() + text.size() || port < 1 || port > 65535)
    return std::nullopt;
  return port;
}

std::span<const std::string_view> service_keys() { return k_keys; }

bool is_service_key(std::string_view key) {
  for (std::string_view known : k_keys)
    if (key == known) return true;
  return false;
}

Status check_service_value(std::string_view key, const std::string& value) {
  if (key == "service" && value != "true" && value != "false" && !is_name(value))
    return Status::error(
        fmt::format("`service` is true, false or the service's name (letters, digits, _ and "
                    "-, as in `service: dht`), not `{}`",
                    value));
  if (key == "ready_port" && !parse_port(value) && !is_template(value))
    return Status::error(
        fmt::format("`ready_port` must be a TCP port (1 to 65535) or a template like "
                    "<<port>>, not `{}`",
                    value));
  if (key == "ready_timeout" && !parse_duration(value))
    return Status::error(
        fmt::format("`ready_timeout` must be a duration like 90s, 10m or 1h, not `{}`", value));
  if (key == "restart" && value != "on-failure" && value != "no")
    return Status::error(fmt::format("`restart` is on-failure or no, not `{}`", value));
  if (key == "ready_log")
    if (Result<Pattern> pattern = compile_ready_pattern(value); !pattern) return pattern.status();
  return Status();
}

void set_service_key(std::optional<ServiceSpec>& service, std::string_view key,
                     const std::string& value) {
  if (key == "service") {
    if (value == "false") return;
    if (!service) service.emplace();
    service->name = value == "true" ? "" : value;
    return;
  }
  if (!service) service.emplace();
  if (key == "ready")
    service->ready = value;
  else if (key == "ready_port")
    service->ready_port = value;
  else if (key == "ready_log")
    service->ready_log = value;
  else if (key == "ready_timeout") {
    service->ready_timeout = parse_duration(value).value_or(k_default_ready_timeout);
    service->ready_timeout_text = value;
  } else if (key == "after")
    service->after = value;
  else if (key == "restart")
    service->restart_on_failure = value == "on-failure";
}

std::vector<std::pair<std::string, std::string>> service_keys(const ServiceSpec& service) {
  std::vector<std::pair<std::string, std::string>> keys;
  keys.emplace_back("service", service.name.empty() ? "true" : service.name);
  if (!service.ready.empty()) keys.emplace_back("ready", service.ready);
  if (!service.ready_port.empty()) keys.emplace_back("ready_port", service.ready_port);
  if (!service.ready_log.empty()) keys.emplace_back("ready_log", service.ready_log);
  if (!service.ready_timeout_text.empty())
    keys.emplace_back("ready_timeout", service.ready_timeout_text);
  if (!service.after.empty()) keys.emplace_back("after", service.after);
  if (service.restart_on_failure) keys.emplace_back("restart", "on-failure");
  return keys;
}

Result<Pattern> compile_ready_pattern(const std::string& text) {
  Result<Pattern> pattern = Pattern::compile(text);
  if (!pattern)
    return Status::error(fmt::format("`ready_log` is not a regular expression ({}): `{}`",
                                     pattern.status().message(), text));
  return pattern;
}

Params ready_variables(const std::string& service, const Pattern& pattern,
                       const PatternMatch& match) {
  Params variables;
  const std::vector<std::string>& names = pattern.group_names();
  for (std::size_t i = 0; i < names.size() && i < match.groups.size(); ++i)
    if (match.groups[i]) variables.emplace_back(service + "." + names[i], *match.groups[i]);
  return variables;
}

}  // namespace runner
