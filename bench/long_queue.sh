#!/usr/bin/env bash
# How fast a long queue drains when every job is an entry of its own, against
# the same jobs written as one product. Fills a queue with ENTRIES `echo`
# jobs, runs them on 4 local slots, and prints the jobs per second from the
# first job's output (the first read of the file is behind it) to the end of
# the run or 20 s later, whichever comes first: a short queue is measured
# whole, a long one over its first 20 s of jobs.
#   bench/long_queue.sh RUNNER_BINARY [ENTRIES] [entries|product]
# (product: four lists whose product is about ENTRIES jobs)
set -euo pipefail
runner=$(realpath "$1")
entries=${2:-200000}
shape=${3:-entries}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
printf -- '- hostname: localhost\n  slots: 4\n' > hosts.yaml
python3 - "$entries" "$shape" <<'PY'
import sys
entries, shape = int(sys.argv[1]), sys.argv[2]
with open("queue.yaml", "w") as f:
    if shape == "product":
        # Four lists whose product is about ENTRIES jobs.
        side = max(1, round(entries ** 0.25))
        last = max(1, entries // side ** 3)
        f.write("- command: echo job{{a}}-{{b}}-{{c}}-{{d}} " + "x" * 45 + "\n")
        for name, length in (("a", side), ("b", side), ("c", side), ("d", last)):
            f.write("  %s: [%s]\n" % (name, ", ".join(str(i) for i in range(length))))
    else:
        for i in range(entries):
            f.write("- echo job%06d %s\n" % (i, "x" * 45))
PY
size=$(wc -c < queue.yaml)
"$runner" queue --no-status > out.txt 2> err.txt &
pid=$!
count() { grep -c '] job' out.txt || true; }
now() { date +%s.%N; }
running() { kill -0 "$pid" 2>/dev/null; }
first=0
while running && [ "$first" -eq 0 ]; do sleep 0.05; first=$(count); done
begin=$(now)
while running && [ "$(echo "$(now) - $begin < 20" | bc)" -eq 1 ]; do sleep 0.05; done
end=$(now)
last=$(count)
kill -INT "$pid" 2>/dev/null || true; kill -INT "$pid" 2>/dev/null || true; wait "$pid" || true
seconds=$(echo "$end - $begin" | bc)
echo "$shape: $entries jobs in a $size-byte queue: $((last - first)) jobs in ${seconds} s" \
  "after the first, $(echo "($last - $first) / $seconds" | bc) jobs/s"
