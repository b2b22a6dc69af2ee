#!/usr/bin/env python3
"""How the bench figures changed between two results files (what
bench/run.sh writes to build-bench/bench-results.json): runner's median
before and after, and runner's ratio to each peer before and after, per
scenario. The ratios are the fairer comparison: each was measured within one
run, while the machine's speed drifts between runs.

    bench/compare.py BEFORE.json AFTER.json
"""

import json
import sys

from table import fmt, markdown_table


def load(path):
    try:
        with open(path) as f:
            document = json.load(f)
    except (OSError, ValueError) as error:
        sys.exit(f"compare: cannot read {path}: {error}")
    if not isinstance(document.get("scenarios"), dict):
        sys.exit(f"compare: {path} holds no bench figures (no \"scenarios\")")
    return document


def gain(before, after, higher_is_better):
    """How many times better `after` is: above 1 is better, below 1 worse."""
    if not before or not after:
        return None
    return after / before if higher_is_better else before / after


def comparison(before, after):
    rows = [("scenario", "measure", "runner before", "runner after", "gain",
             "vs peer", "ratio before", "ratio after", "gain")]
    for name, entry in after["scenarios"].items():
        old = before["scenarios"].get(name)
        if not old:
            continue
        higher = entry.get("higher_is_better", True)
        runner_before = old.get("median", {}).get("runner")
        runner_after = entry.get("median", {}).get("runner")
        runner_cells = (fmt(runner_before), fmt(runner_after),
                        fmt(gain(runner_before, runner_after, higher)))
        peers = [peer for peer, result in entry.get("results", {}).items()
                 if peer != "runner" and "ratio" in result]
        if not peers:
            rows.append((name, entry["measure"], *runner_cells, "", "", "", ""))
        for peer in peers:
            ratio_before = old.get("results", {}).get(peer, {}).get("ratio")
            ratio_after = entry["results"][peer]["ratio"]
            rows.append((name, entry["measure"], *runner_cells, peer, fmt(ratio_before),
                         fmt(ratio_after), fmt(gain(ratio_before, ratio_after, higher))))
    if len(rows) == 1:
        return "compare: the two files share no scenario"
    heading = (f"since {before.get('commit') or 'an unknown commit'} ({before.get('date', '?')})"
               f" to {after.get('commit') or 'an unknown commit'} ({after.get('date', '?')});"
               " gain above 1 is better")
    return heading + "\n" + markdown_table(rows)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: bench/compare.py BEFORE.json AFTER.json")
    print(comparison(load(sys.argv[1]), load(sys.argv[2])))


if __name__ == "__main__":
    main()
