#!/usr/bin/env bash
# `cpack -G DEB` builds a .deb whose Depends name the Debian packages of
# runner's shared libraries, which holds every installed file (unpacked
# into a temporary directory, never installed on this machine) with its man
# pages where man finds them, and of which lintian finds no error.
# Usage: deb_package_test.sh BUILD_DIR
set -uo pipefail
build=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
(cd "$work" && cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work/out" >/dev/null) ||
  { echo "FAILED: cpack -G DEB"; exit 1; }
deb=$(ls "$work"/out/runner_*.deb) || { echo "FAILED: no runner_*.deb"; exit 1; }
echo "built $(basename "$deb")"

depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for package in libssh2-1 libyaml-cpp0.7 libfmt9 libc6 libstdc++6; do
  [[ ", $depends," == *", $package "* || ", $depends," == *", $package,"* ]] ||
    { echo "FAILED: Depends lacks $package"; failures=$((failures + 1)); }
done

# lintian's errors (E:); its warnings and notes are shown, not failed on.
if command -v lintian >/dev/null; then
  lintian --display-info "$deb" >"$work/lintian.txt" 2>&1
  cat "$work/lintian.txt"
  if grep -q '^E:' "$work/lintian.txt"; then
    echo "FAILED: lintian reports errors"; failures=$((failures + 1))
  else
    echo "ok: lintian reports no error"
  fi
else
  echo "FAILED: no lintian (scripts/setup.sh --tests installs it)"; failures=$((failures + 1))
fi

dpkg-deb -x "$deb" "$work/root"
source "$(dirname "$0")/installed_files.sh"
check_installed_files "$work/root"
[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
