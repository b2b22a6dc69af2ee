#!/usr/bin/env bash
# Sets up, builds, and drains the quickstart queue on two local slots (no SSH
# needed). The queue is copied first, since running consumes it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh >/dev/null
work=$(mktemp -d)
cp examples/quickstart/hosts.yaml examples/quickstart/queue.yaml "$work/"
echo "demo: running build/runner queue in $work" >&2
build/runner queue --hosts-file "$work/hosts.yaml" --queue-file "$work/queue.yaml"
echo "demo: the queue is drained; consumed jobs are in $work/consumed.yaml, logs and journal in $work/queue.runner/" >&2
