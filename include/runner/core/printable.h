// What a host said, made safe to print on a terminal and to write into a
// file on one line (a YAML comment, a scalar): every control character
// (C0, DEL, C1), the Unicode line and paragraph separators and the
// bidirectional overrides that would reorder or hide text, and every byte
// that is not UTF-8, are written as escapes (\r, \n, \t, \x1b, \u2028).
// Every area may include it.
#pragma once

#include <string>
#include <string_view>

namespace runner {

// `said` with what could move the cursor, end a line, recolour or reorder
// text escaped; the rest (printable ASCII, other UTF-8) as it is. A
// backslash stays one: printable(printable(x)) == printable(x).
std::string printable(std::string_view said);

}  // namespace runner
