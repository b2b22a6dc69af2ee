// The SHA-256 of a local file (OpenSSL's libcrypto). Threading: none;
// reads the file through.
#pragma once

#include <string>

#include "runner/core/result.h"

namespace runner {

// Lowercase hex, 64 characters; or why the file could not be read.
Result<std::string> file_sha256(const std::string& path);

}  // namespace runner
