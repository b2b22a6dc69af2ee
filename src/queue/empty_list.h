// Private to the queue area: a drained queue is written as an empty list,
// `[]`, as Pegasus writes it and the only empty queue Pegasus can read; and
// jobs appended after that line with `>>` are read as the queue's entries.
#pragma once

#include <optional>
#include <string>

namespace runner::empty_list {

// `text` with its first content line, when that line is `[]`, turned into
// spaces (lines and columns unchanged), so that the block list appended
// after it parses; nullopt when there is no such line.
std::optional<std::string> blanked(const std::string& text);

// `text`, which holds no entries, with a `[]` line after its comments when
// it has no content at all; otherwise `text` itself.
std::string marked(const std::string& text);

}  // namespace runner::empty_list
