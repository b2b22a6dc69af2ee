#include "runner/cli/run_cli.h"

int main(int argc, char** argv) { return runner::run_cli(argc, argv); }
