// `metrics:`: a pattern (the input's first line) checked by
// check_metric_pattern and, when it is one, matched against a log (the
// rest) by last_metric_match; and the input read as a `metrics:` value by
// metrics_from_yaml.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "runner/config/metrics.h"
#include "runner/config/pattern.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  runner::metrics_from_yaml(text);
  std::size_t end = text.find('\n');
  if (end == std::string::npos) return 0;
  std::string pattern = text.substr(0, end);
  if (!runner::check_metric_pattern(pattern).ok()) return 0;
  runner::Result<runner::Pattern> compiled = runner::Pattern::compile(pattern);
  if (!compiled) return 0;
  runner::last_metric_match(*compiled, std::string_view(text).substr(end + 1));
  return 0;
}
