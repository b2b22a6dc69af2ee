// Small text helpers for assertions on what programs printed.
#pragma once

#include <string>

namespace runner::testing {

// How many times `needle` occurs in `text`, overlapping occurrences included.
int count(const std::string& text, const std::string& needle);

}  // namespace runner::testing
