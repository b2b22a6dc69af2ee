#!/usr/bin/env bash
# Sets up, builds, and runs every test (unit and integration: the integration
# tests start their own sshd on 127.0.0.1), then every area's unit tests
# again under AddressSanitizer and UndefinedBehaviorSanitizer, then each
# fuzzer for 10 seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
scripts/build.sh
ctest --test-dir build --output-on-failure -j2 --timeout 300
scripts/sanitize.sh
scripts/fuzz.sh 10
