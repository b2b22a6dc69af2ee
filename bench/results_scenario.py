"""The results scenario of bench/bench.py: `runner results`, `runner report`
and `runner status` on the state directory of a campaign whose every job
brought a result file back (`outputs:`) and printed a metric (`metrics:`).

The state directory is made by the real binary, then grown: `runner queue`
runs `results_real_jobs` jobs on four local slots (each writes a small JSON
file named in its `outputs:` and prints `throughput N`), and its journal
records, logs and collected outputs are then replicated under new job ids
(ids, times, output folders and job marks shifted, nothing else changed)
until there are `results_jobs` jobs. A real run of 100,000 such jobs takes
about 20 minutes on a 2-core machine (each job's outputs come back through
a tar stream of its own); the replicas are what that run would have
written, byte for byte but for the shifted fields. The journal is sealed in
segments as runner seals it, and the checkpoint is the one a run leaves at
worst (a MiB of journal written after it; none for a smoke run's journal
of less). No sshd: the jobs run locally.
"""

import json
import os
import shutil
import subprocess
import time
from datetime import datetime, timezone

import journal_scenario
from journal_records import read_journal

COMMAND = ("mkdir -p out && printf '{\"loss\": 0.%s, \"step\": <<seed>>}\\n' <<seed>> "
           "> out/<<seed>>.json && echo throughput <<seed>>.5")


def write_campaign(directory, jobs):
    """hosts.yaml of four local slots and a queue of `jobs` jobs, one entry."""
    with open(os.path.join(directory, "hosts.yaml"), "w") as f:
        f.write("- hostname: localhost\n  slot: [0, 1, 2, 3]\n")
    seeds = ", ".join(str(seed) for seed in range(1, jobs + 1))
    with open(os.path.join(directory, "queue.yaml"), "w") as f:
        f.write(f"- command: {json.dumps(COMMAND)}\n  outputs: out/<<seed>>.json\n"
                f"  metrics: {{throughput: 'throughput ([0-9.]+)'}}\n  seed: [{seeds}]\n")


def real_run(runner, directory, jobs, env):
    write_campaign(directory, jobs)
    ran = subprocess.run([runner, "queue", "-H", "hosts.yaml", "-Q", "queue.yaml",
                          "--color", "never"], cwd=directory, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if ran.returncode != 0:
        raise RuntimeError(f"runner queue exited {ran.returncode}: {ran.stderr[-2000:]}")


def parse_time(text):
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=timezone.utc).timestamp()


def line(record):
    """A record as runner writes it: compact, keys in their order."""
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False)


def replicated_records(state, records, real_jobs, copies):
    """The journal's lines with the job records of the real run repeated
    `copies` times, the k-th copy's ids shifted by k * real_jobs and its
    times by k * the run's span; the run's start and end around them all.
    Each copy's output folders and logs are written beside the journal."""
    start, end = records[0], records[-1]
    if start["event"] != "run_start" or end["event"] != "run_end":
        raise RuntimeError("the real run's journal does not begin and end with its run")
    job_records = records[1:-1]
    span = parse_time(end["time"]) - parse_time(start["time"])
    start["queued"] = real_jobs * copies
    lines = [line(start)]
    outputs = os.path.join(state, "outputs")
    logs = os.path.join(state, "logs")
    for copy in range(copies):
        shift_ids, shift_s = copy * real_jobs, copy * span
        for record in job_records:
            record = dict(record)
            job = record["job"]
            record["job"] = job + shift_ids
            record["time"] = journal_scenario.stamp(parse_time(record["time"]) + shift_s)
            if "mark" in record:
                record["mark"] = record["mark"].rsplit("-", 1)[0] + f"-{job + shift_ids}"
            if record["event"] == "outputs":
                record["dir"] = record["dir"].rsplit("/", 1)[0] + f"/{job + shift_ids}"
            lines.append(line(record))
        for job in range(1, real_jobs + 1) if copy > 0 else ():
            shutil.copytree(os.path.join(outputs, str(job)),
                            os.path.join(outputs, str(job + shift_ids)))
            shutil.copyfile(os.path.join(logs, f"{job}.log"),
                            os.path.join(logs, f"{job + shift_ids}.log"))
    end["time"] = journal_scenario.stamp(parse_time(end["time"]) + (copies - 1) * span)
    lines.append(line(end))
    return lines


def build_state(runner, directory, jobs, real_jobs, env, log):
    """The campaign's directory; its state directory is queue.runner."""
    started = time.perf_counter()
    real_jobs = min(real_jobs, jobs)
    real_run(runner, directory, real_jobs, env)
    state = os.path.join(directory, "queue.runner")
    records = read_journal(state)
    log(f"results: {real_jobs} jobs run for real in {time.perf_counter() - started:.1f} s")
    copies = -(-jobs // real_jobs)
    lines = replicated_records(state, records, real_jobs, copies)
    shutil.rmtree(os.path.join(state, "journal"), ignore_errors=True)
    journal_scenario.write_journal(state, lines)
    journal_scenario.forget_checkpoint(state)
    if journal_scenario.journal_bytes(state) > 2 * journal_scenario.CHECKPOINT_EVERY_BYTES:
        journal_scenario.leave_checkpoint_as_a_run_does(runner, state)
    log(f"results: {real_jobs * copies} jobs with outputs, "
        f"{journal_scenario.journal_bytes(state) / (1 << 20):.0f} MiB of journal, "
        f"ready in {time.perf_counter() - started:.1f} s")
    return state, real_jobs * copies


def run(bench, env, log):
    sizes = bench.sizes
    directory = bench.fresh_dir("results")
    state, jobs = build_state(bench.runner, directory, sizes["results_jobs"],
                              sizes["results_real_jobs"], env, log)
    page = os.path.join(directory, "report.html")
    commands = {  # name: (its arguments, its target in ms, or None: a reference)
        "results": (["results"], 3000.0),
        "report": (["report", "-o", page], 3000.0),
        "status": (["status"], None),
    }
    for name, (args, limit) in commands.items():
        command = [bench.runner, *args, "--state-dir", "queue.runner"]
        samples = []
        for _ in range(max(3, sizes["reps"])):
            os.sync()
            started = time.perf_counter()
            ran = subprocess.run(command, cwd=directory, env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
            samples.append((time.perf_counter() - started) * 1000)
            if ran.returncode != 0:
                raise RuntimeError(f"runner {name} exited {ran.returncode}: {ran.stderr[-2000:]}")
        bench.record(f"results_{name}", {
            "what": f"runner {name} of {jobs} finished jobs, each with a result file brought "
                    f"back and a metric in its log", "measure": "ms",
            "higher_is_better": False, "samples": {"runner": samples},
            "targets": {"runner": {"value_at_most": limit} if limit else {"reference": True}},
        })
