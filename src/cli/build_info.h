// What the binary was built from: the version it carries and the git commit
// of its source tree, both fixed when the build was configured
// (cmake/install.cmake writes build_info.cpp from build_info.cpp.in).
#pragma once

#include <string>
#include <string_view>

namespace runner {

// The version, e.g. "0.1.0" (-DRUNNER_VERSION=... when configuring).
std::string_view build_version();

// `git describe --always --dirty` of the source tree, e.g. "497f146" or
// "497f146-dirty"; empty when it was not a git checkout.
std::string_view build_commit();

// "runner 0.1.0 (commit 497f146)", or, from a source tree without git,
// "runner 0.1.0 (commit unknown: not built from a git checkout)".
std::string build_description();

}  // namespace runner
