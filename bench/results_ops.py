"""How many file-system calls `runner results` and `runner report` make per
job of a campaign whose every job brought a result file back and printed a
metric: each under strace (its reading threads too) on two state directories (bench/results_scenario.py
makes them: a real run, replicated), the difference over the extra jobs is
what one job costs. Counts, not times: the same on a busy machine as on an
idle one, and each call a round trip where the state directory sits on NFS.

    python3 bench/results_ops.py RUNNER [--check]

Prints a JSON object, command -> system call -> calls per job. With --check,
exits 1 when a count is over its budget (BUDGET):
tests/integration/results_ops_test.cpp runs that."""

import os
import sys
import tempfile

import file_ops
import results_scenario

CALLS = ["openat", "close", "newfstatat", "getdents64", "fcntl", "read", "pread64"]
# What one job may cost at most, for each command. A job's result file and
# its log must be read (an open, a read and a close each), and its folder
# listed (the files a job brought back may have been joined by others).
BUDGET = {"openat": 4, "close": 4, "newfstatat": 1, "getdents64": 4, "fcntl": 0,
          "read": 1, "pread64": 1}
COMMANDS = {"results": ["results"], "report": ["report", "-o", "report.html"]}


def counts(runner, directory, args):
    """{call: count} of one `runner ARGS` in the campaign `directory`."""
    return file_ops.strace_counts([runner, *args, "--state-dir", "queue.runner"], directory,
                                  os.path.join(directory, "strace.txt"), CALLS, threads=True)


def per_job(runner, directory, real_jobs=20, few_jobs=40, many_jobs=240):
    """{command: {call: calls per job}}."""
    campaigns = {}
    for jobs in (few_jobs, many_jobs):
        campaign = os.path.join(directory, f"jobs{jobs}")
        os.makedirs(campaign)
        results_scenario.build_state(runner, campaign, jobs, real_jobs, None, lambda _: None)
        campaigns[jobs] = campaign
    costs = {}
    for name, args in COMMANDS.items():
        few = counts(runner, campaigns[few_jobs], args)
        many = counts(runner, campaigns[many_jobs], args)
        costs[name] = {call: round((many.get(call, 0) - few.get(call, 0)) /
                                   (many_jobs - few_jobs), 2) for call in CALLS}
    return costs


def over_budget(costs):
    """What breaks the budget, one line each."""
    return [f"runner {name}: {call}: {calls[call]} per job, more than {limit}"
            for name, calls in costs.items() for call, limit in BUDGET.items()
            if calls[call] > limit]


def main():
    runner = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as directory:
        costs = per_job(runner, directory)
    file_ops.print_and_check(costs, over_budget)


if __name__ == "__main__":
    main()
