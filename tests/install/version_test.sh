#!/usr/bin/env bash
# `runner --version` names the version it was configured with and the git
# commit of its source tree; cmake/source_commit.cmake finds no commit in a
# tree without git of its own (an unpacked release, even inside another
# checkout), which the binary then says instead of failing.
# Usage: version_test.sh RUNNER_BINARY VERSION SOURCE_DIR
set -uo pipefail
runner=$1
version=$2
source_dir=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

first_line=$("$runner" --version | head -n 1)
echo "runner --version: $first_line"
commit=$(git -C "$source_dir" rev-parse --short HEAD)
case $first_line in
  "runner $version (commit "*"$commit"*")") echo "ok: it names version $version and commit $commit" ;;
  *) echo "FAILED: expected runner $version (commit ...$commit...)"; failures=$((failures + 1)) ;;
esac

mkdir -p "$work/checkout/release"
git -C "$work/checkout" init -q
found=$(cmake -DSOURCE_DIR="$work/checkout/release" -P "$source_dir/cmake/source_commit.cmake" 2>&1)
if [ "$found" = none ]; then
  echo "ok: a tree without git of its own has no commit"
else
  echo "FAILED: a tree without git of its own has commit '$found'"; failures=$((failures + 1))
fi
# What a binary configured without a commit says (build_info.cpp.in as
# cmake writes it, compiled alone).
sed -e "s|@CMAKE_SOURCE_DIR@|$source_dir|" -e 's/@RUNNER_VERSION@/9.9/' -e 's/@RUNNER_COMMIT@//' \
  "$source_dir/src/cli/build_info.cpp.in" >"$work/build_info.cpp"
printf '#include <cstdio>\n#include "%s/src/cli/build_info.h"\nint main() { std::puts(runner::build_description().c_str()); }\n' \
  "$source_dir" >"$work/main.cpp"
if c++ -std=c++20 -o "$work/describe" "$work/build_info.cpp" "$work/main.cpp"; then
  described=$("$work/describe")
  echo "without a commit: $described"
  [ "$described" = "runner 9.9 (commit unknown: not built from a git checkout)" ] ||
    { echo "FAILED: it does not say the commit is unknown"; failures=$((failures + 1)); }
else
  echo "FAILED: build_info.cpp.in does not compile without a commit"; failures=$((failures + 1))
fi
[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
