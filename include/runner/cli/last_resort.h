// The program's last resort: an exception that nothing below caught (a bug,
// or a failure no area turned into a Status) ends the command with a
// message naming it and exit status 2, never with std::terminate.
#pragma once

#include <cstdio>
#include <functional>

namespace runner {

// `body`'s exit status; or, when an exception leaves it, 2 after
// "runner: error: unexpected failure: <what>" on `err`.
int with_last_resort(const std::function<int()>& body, std::FILE* err = stderr);

}  // namespace runner
