#!/usr/bin/env bash
# Configures and builds runner and its tests in build/; with arguments, only
# those targets (`scripts/build.sh runner`: the binary alone). On a terminal
# ninja shows its progress as one line that advances.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
targets=()
[ $# -eq 0 ] || targets=(--target "$@")
cmake --build build -j"$(nproc)" "${targets[@]}"
