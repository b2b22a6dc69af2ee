#!/usr/bin/env bash
# Sets up, builds the runner binary (not the tests), and drains the
# quickstart queue on two local slots (no SSH needed). The queue is copied
# first, since running consumes it.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
scripts/setup.sh
set_up=$SECONDS
echo "demo: building build/runner" >&2
scripts/build.sh runner >&2
built=$SECONDS
echo "demo: set-up took $((set_up - started)) s, the build $((built - set_up)) s" >&2
work=$(mktemp -d)
cp examples/quickstart/hosts.yaml examples/quickstart/queue.yaml "$work/"
echo "demo: running build/runner queue in $work" >&2
build/runner queue --hosts-file "$work/hosts.yaml" --queue-file "$work/queue.yaml"
echo "demo: the queue is drained; consumed jobs are in $work/consumed.yaml, logs and journal in $work/queue.runner/" >&2
