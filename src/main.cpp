#include "runner/cli/options.h"

int main(int argc, char** argv) { return runner::run_cli(argc, argv); }
