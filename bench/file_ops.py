"""How many file-system calls runner makes per job: `runner queue` of local
`true` jobs under strace (runner's own process, not its jobs'), at two queue
lengths; the difference over the extra jobs is what one job costs. Counts,
not times: the same on a busy machine as on an idle one, and each call a
round trip where the state directory sits on NFS.

    python3 bench/file_ops.py RUNNER [--check]

Prints a JSON object, system call -> calls per job, plus "syncs" (fsync and
fdatasync). With --check, exits 1 when a count is over its budget (BUDGET)
or the syncs are fewer than one per job (a job is in the journal before it
starts): tests/integration/file_ops_test.cpp runs that."""

import json
import os
import subprocess
import sys
import tempfile

CALLS = ["openat", "close", "fsync", "fdatasync", "rename", "unlink", "mkdir",
         "newfstatat", "write", "pread64", "read"]
# What one job may cost at most; lower a budget when a change earns it.
BUDGET = {"openat": 4, "close": 11, "syncs": 2, "rename": 1, "unlink": 1, "mkdir": 0,
          "newfstatat": 4, "write": 7, "pread64": 4}


def counts(runner, directory, jobs):
    """{call: count} of one `runner queue` of `jobs` local `true` jobs."""
    work = tempfile.mkdtemp(prefix=f"jobs{jobs}-", dir=directory)
    with open(os.path.join(work, "hosts.yaml"), "w") as f:
        f.write("- hostname: localhost\n")
    with open(os.path.join(work, "queue.yaml"), "w") as f:
        f.write("- true\n" * jobs)
    # Not in the queue's folder, which runner watches: each line strace
    # writes there would wake it.
    trace = os.path.join(directory, f"strace-{jobs}.txt")
    return strace_counts([runner, "queue", "-H", "hosts.yaml", "-Q", "queue.yaml",
                          "--color", "never"], work, trace, CALLS)


def strace_counts(command, cwd, trace, calls, threads=False):
    """{call: count} of the system calls `calls` that `command`, run in
    `cwd`, makes itself (not its children; with `threads`, its threads' too,
    for a command that starts no process), strace's summary kept at `trace`."""
    follow = ["-f"] if threads else []
    ran = subprocess.run(["strace", "-qq", "-c", "-U", "name,calls", *follow, "-o", trace,
                          "-e", "trace=" + ",".join(calls), *command],
                         cwd=cwd, capture_output=True, text=True)
    if ran.returncode != 0:
        raise RuntimeError(f"runner under strace exited {ran.returncode}:\n{ran.stderr[-2000:]}")
    found = {}
    with open(trace) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2 and parts[1].isdigit():
                found[parts[0]] = int(parts[1])
    return found


def per_job(runner, directory, few_jobs=40, many_jobs=240):
    few, many = counts(runner, directory, few_jobs), counts(runner, directory, many_jobs)
    costs = {call: round((many.get(call, 0) - few.get(call, 0)) / (many_jobs - few_jobs), 2)
             for call in CALLS}
    costs["syncs"] = round(costs["fsync"] + costs["fdatasync"], 2)
    return costs


def over_budget(costs):
    """What breaks the budget, one line each."""
    said = [f"{call}: {costs[call]} per job, more than {limit}"
            for call, limit in BUDGET.items() if costs[call] > limit]
    if costs["syncs"] < 1:
        said.append(f"syncs: {costs['syncs']} per job: a job must be in the journal, synced, "
                    "before it starts")
    return said


def print_and_check(costs, over_budget):
    """Prints `costs` as JSON; with --check, exits 1 when `over_budget`
    finds what breaks the budget, said on stderr."""
    print(json.dumps(costs, indent=1))
    if "--check" in sys.argv[2:]:
        said = over_budget(costs)
        for line in said:
            print(line, file=sys.stderr)
        sys.exit(1 if said else 0)


def main():
    runner = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as directory:
        costs = per_job(runner, directory)
    print_and_check(costs, over_budget)


if __name__ == "__main__":
    main()
