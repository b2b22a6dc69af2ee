#!/usr/bin/env bash
# `cmake --install` into a fresh DESTDIR puts every file in its place under
# /usr, and the installed binary runs.
# Usage: install_test.sh BUILD_DIR
set -uo pipefail
build=$1
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
failures=0
DESTDIR=$root cmake --install "$build" --prefix /usr >/dev/null || { echo "FAILED: cmake --install"; exit 1; }
source "$(dirname "$0")/installed_files.sh"
check_installed_files "$root"
[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
