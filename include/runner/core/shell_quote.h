// A text as one POSIX shell word, for every area that writes a command a
// shell reads. Pure.
#pragma once

#include <string>
#include <string_view>

namespace runner {

// `text` as one POSIX shell word: single-quoted, each ' written as '\''.
std::string shell_quote(std::string_view text);

}  // namespace runner
