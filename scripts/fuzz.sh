#!/usr/bin/env bash
# Builds the libFuzzer harnesses of fuzz/ (scripts/sanitized_build.sh, in
# build-fuzz/) and runs each for SECONDS (default 20) over a copy of its
# seeds, fuzz/corpus/<name>/. Any crash, sanitizer finding, leak or hang
# fails the run; the input that caused it is left in build-fuzz/findings/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
scripts/sanitized_build.sh fuzzers
rm -rf build-fuzz/findings build-fuzz/fuzz-corpus
mkdir -p build-fuzz/findings
failed=()
for seeds in fuzz/corpus/*/; do
  name=$(basename "$seeds")
  corpus=build-fuzz/fuzz-corpus/$name
  mkdir -p "$corpus"
  cp "$seeds"* "$corpus"/
  echo "fuzz: $name for ${seconds}s" >&2
  # 4 KiB inputs: longer ones only repeat what short ones reach, slower;
  # a tar stream needs a few blocks of 512 bytes.
  max_len=4096
  case $name in output_archive) max_len=16384 ;; esac
  build-fuzz/fuzz/"${name}"_fuzzer "$corpus" -max_total_time="$seconds" -max_len="$max_len" \
    -timeout=10 -rss_limit_mb=2048 -artifact_prefix=build-fuzz/findings/"$name"- \
    -print_final_stats=0 >build-fuzz/findings/"$name".log 2>&1 ||
    { failed+=("$name"); tail -n 40 build-fuzz/findings/"$name".log >&2; }
done
[ ${#failed[@]} -eq 0 ] || { echo "fuzz: failed: ${failed[*]}" >&2; exit 1; }
