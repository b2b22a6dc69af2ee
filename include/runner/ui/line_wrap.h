// A job line cut into pieces that each fit the terminal beside the slot
// prefix, as Pegasus does, so that every piece carries the prefix. Pure.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace runner {

// How many columns `text` takes: a character (UTF-8 code point) one, a tab
// up to the next multiple of eight, an escape sequence (ESC [ ... final
// byte) none.
std::size_t display_columns(std::string_view text);

// `text` and as many spaces after it as make it `width` columns wide (as
// display_columns counts them); text as wide or wider is left as it is.
std::string pad_to_columns(std::string_view text, std::size_t width);

// `line` cut into pieces of at most `columns` columns each (as
// display_columns counts them, from the start of the piece), never inside a
// character or an escape sequence; the whole line when `columns` is 0 or it
// fits.
std::vector<std::string_view> wrap_line(std::string_view line, std::size_t columns);

}  // namespace runner
