#!/usr/bin/env bash
# Builds the unit tests of every area with AddressSanitizer and
# UndefinedBehaviorSanitizer (scripts/sanitized_build.sh, in build-fuzz/) and
# runs them; any finding fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
areas=(core config queue probe exec state ui sched report cli)
scripts/sanitized_build.sh "${areas[@]/%/_tests}"
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
failed=()
for area in "${areas[@]}"; do
  echo "sanitize: ${area}_tests" >&2
  build-fuzz/"${area}"_tests --gtest_brief=1 || failed+=("${area}_tests")
done
[ ${#failed[@]} -eq 0 ] || { echo "sanitize: failed: ${failed[*]}" >&2; exit 1; }
