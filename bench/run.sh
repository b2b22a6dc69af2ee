#!/usr/bin/env bash
# The benchmark suite in one command: installs what it needs (runner's build
# dependencies, sshd, GNU parallel, pdsh, rsync), builds runner with optimizations
# in build-bench/, and runs bench/bench.py against a loopback fleet. Every
# argument goes to bench.py (--smoke, --only, --reps, --json, --keep, ...);
# --runner PATH measures an existing binary instead of building one.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(openssh-server openssh-client parallel pdsh python3 rsync)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "bench: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

runner_given=no
for arg in "$@"; do
  case "$arg" in --runner | --runner=*) runner_given=yes ;; esac
done

if [ "$runner_given" = no ]; then
  scripts/setup.sh
  cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build-bench --target runner -j"$(nproc)" >&2
  set -- --runner build-bench/runner "$@"
fi
exec /usr/bin/python3 bench/bench.py "$@"
