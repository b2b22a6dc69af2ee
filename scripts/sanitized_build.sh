#!/usr/bin/env bash
# Configures build-fuzz/ (clang, -O1, AddressSanitizer and
# UndefinedBehaviorSanitizer with any finding fatal, libFuzzer's coverage,
# the harnesses of fuzz/) and builds the targets given. scripts/sanitize.sh
# and scripts/fuzz.sh share it, so the libraries are compiled once.
set -euo pipefail
cd "$(dirname "$0")/.."
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DRUNNER_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -gline-tables-only" \
  "${launcher[@]}" >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target "$@"
