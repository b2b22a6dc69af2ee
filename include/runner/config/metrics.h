// The `metrics:` key of a queue entry: metric names and the regular
// expressions (config/pattern.h) that find each metric's value in a job's
// log, by their first capture group. Pure logic.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "runner/config/params.h"
#include "runner/config/pattern.h"
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

// What last_metric_match found.
struct MetricMatch {
  std::optional<std::string> value;  // nullopt: no line matches
  // Ok, or why a line was passed over: its match ran into the pattern's
  // limits (the value is then an earlier line's).
  Status passed_over;
};

// The first capture group of the last match of `pattern` in `text`, matched
// line by line ('\r' ends a line as '\n' does): the value a job printed
// last.
MetricMatch last_metric_match(const Pattern& pattern, std::string_view text);

}  // namespace runner
