// The `metrics:` key of a queue entry: metric names and the regular
// expressions (ECMAScript) that find each metric's value in a job's log, by
// their one capture group. Pure logic.
#pragma once

#include <optional>
#include <regex>
#include <string>
#include <string_view>

#include "runner/config/params.h"
#include "runner/core/status.h"

namespace runner {

// Whether `pattern` can be a metric's regex, and if not why ("does not
// compile: …", "has no capture group …").
Status check_metric_pattern(const std::string& pattern);

// The metrics as a YAML flow mapping, `{throughput: 'throughput: ([0-9.]+)'}`:
// how a queue entry holds and writes back its `metrics:` value.
std::string metrics_to_yaml(const Params& metrics);

// The metrics of metrics_to_yaml's text, in its order; empty for text that
// is not such a mapping.
Params metrics_from_yaml(const std::string& text);

// The first capture group of the last match of `pattern` in `text`, matched
// line by line ('\r' ends a line as '\n' does): the value a job printed
// last. nullopt when no line matches.
std::optional<std::string> last_metric_match(const std::regex& pattern, std::string_view text);

}  // namespace runner
