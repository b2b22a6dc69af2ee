// The program: what main() calls.
#pragma once

namespace runner {

// The whole command line: parses, dispatches, maps errors to exit codes.
int run_cli(int argc, char** argv);

}  // namespace runner
