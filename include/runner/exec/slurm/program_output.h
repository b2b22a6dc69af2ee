// Running a program to read what it prints (scontrol, sbatch).
// Threading: none; blocks until the program ends.
#pragma once

#include <string>
#include <vector>

#include "runner/core/result.h"

namespace runner {

// What `argv` (argv[0] looked up on PATH) prints on stdout, once it exits
// with status 0; its stderr goes to runner's. Otherwise why not.
Result<std::string> program_output(const std::vector<std::string>& argv);

}  // namespace runner
