#!/usr/bin/env bash
# The bench at tiny sizes (ctest's bench_smoke): every scenario must run with
# runner and every installed peer, and the JSON must hold all of them. It
# checks that the bench works, never how fast anything is.
#   bench/smoke.sh RUNNER_BINARY JSON_OUT
set -euo pipefail
runner=$1
json=$2
here=$(cd "$(dirname "$0")" && pwd)
python3 "$here/bench.py" --smoke --runner "$runner" --json "$json"
python3 - "$json" <<'PY'
import json, os, sys
document = json.load(open(sys.argv[1]))
expected = {"queue_true_jobs", "serial_true_jobs", "serial_behind_jump", "broadcast_true_steps",
            "add_latency",
            "product_flatness",
            *(f"{size}_{figure}" for size in ("fleet", "fleet_large")
              for figure in ("all_running", "cpu_per_job", "peak_rss", "idle_cpu")),
            "stream_throughput", "push_throughput", "push_unchanged",
            "results_results", "results_report", "results_status"}
expected |= {f"journal_{name}{when}" for name in ("status", "status_json", "log", "report", "run_start")
             for when in ("", "_first", "_cold")}
if any(os.access(c, os.X_OK) for c in ("/usr/bin/chromium", "/usr/bin/chromium-browser")):
    expected.add("journal_page_load")
scenarios = document["scenarios"]
missing = sorted(expected - set(scenarios))
empty = sorted(name for name, entry in scenarios.items()
               if not entry["samples"].get("runner"))
peers = {"queue_true_jobs": ["ssh_controlmaster", "gnu_parallel"],
         "serial_true_jobs": ["ssh_controlmaster"], "serial_behind_jump": ["ssh_controlmaster"],
         "broadcast_true_steps": ["pdsh"],
         "fleet_all_running": ["ssh_controlmaster"], "fleet_large_all_running": ["ssh_controlmaster"],
         "stream_throughput": ["ssh_controlmaster"],
         "push_throughput": ["scp", "rsync"], "push_unchanged": ["scp", "rsync"]}
no_peer = sorted(f"{name}/{peer}" for name, wanted in peers.items() if name in scenarios
                 for peer in wanted if not scenarios[name]["samples"].get(peer))
problems = []
if missing: problems.append(f"missing scenarios: {', '.join(missing)}")
if empty: problems.append(f"no runner figures: {', '.join(empty)}")
if no_peer: problems.append(f"no peer figures: {', '.join(no_peer)}")
if document["failed"]: problems.append(f"failed: {', '.join(document['failed'])}")
if problems:
    sys.exit("bench smoke: " + "; ".join(problems))
print(f"bench smoke: {len(scenarios)} figures from every scenario and peer")
PY
# compare.py against the same figures, with runner made twice as fast.
python3 - "$here" "$json" <<'PY'
import copy, sys
sys.path.insert(0, sys.argv[1])
import compare
before = compare.load(sys.argv[2])
after = copy.deepcopy(before)
for entry in after["scenarios"].values():
    median = entry["median"]
    median["runner"] *= 2 if entry["higher_is_better"] else 0.5
text = compare.comparison(before, after)
rows = {line.split("|")[1].strip(): line for line in text.splitlines() if line.startswith("| ")}
for name in ("queue_true_jobs", "serial_true_jobs", "stream_throughput"):
    cells = [cell.strip() for cell in rows.get(name, "").split("|")]
    if len(cells) < 6 or cells[5] != "2.00":
        sys.exit(f"bench smoke: compare.py does not show {name} twice as fast:\n{text}")
print("bench smoke: compare.py reads the figures and tells better from worse")
PY
