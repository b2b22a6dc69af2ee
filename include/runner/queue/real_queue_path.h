// The file a queue path really names: symbolic links followed (also when the
// last one dangles, so a queue that does not exist yet still resolves), made
// absolute. Watching, locking and rewriting all go by this one path, so a
// queue reached through a link and through its target is one queue.
#pragma once

#include <string>

namespace runner {

// `path` with every symbolic link resolved, absolute and normalised. A link
// whose target does not exist resolves to that target. Never throws: what
// cannot be resolved (a link loop, an unreadable folder) is kept as far as
// it was resolved.
std::string real_queue_path(const std::string& path);

}  // namespace runner
