"""The journal scenario of bench/bench.py: what reading a big campaign's
state directory costs. It writes a synthetic state directory (one run of
many jobs on 128 hosts x 8 slots, in the journal format runner writes, about
1% failures, a few jobs run twice, logs for the failures and a few others),
then times `runner status`, `runner status --json`, `runner log N` and
`runner report`, and the report page's load in headless Chromium. No sshd:
nothing runs a job.

The journal is sealed in segments as runner seals it. Each command is timed
with no checkpoint beside the journal (it reads the whole journal), with
the checkpoint a run leaves at worst (a MiB of journal written after it),
and after a reading.
"""

import heapq
import json
import os
import random
import re
import subprocess
import tempfile
import time
from datetime import datetime, timezone

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc).timestamp()
MODELS = ["resnet50", "vit-b16", "bert-base", "gpt2-small", "llama-7b-lora"]
LOG_LINES = 200


def stamp(seconds):
    """A journal time: UTC with milliseconds, as runner writes it."""
    whole = int(seconds)
    ms = int(round((seconds - whole) * 1000))
    if ms == 1000:
        whole, ms = whole + 1, 0
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{ms:03d}Z"


def job_params(job):
    return {"model": MODELS[job % len(MODELS)], "lr": ["0.001", "0.0003", "0.0001"][job // 5 % 3],
            "batch": str(32 << (job // 15 % 4)), "seed": str(job)}


TEMPLATE = "python train.py --model <<model>> --lr <<lr>> --batch <<batch>> --seed <<seed>>"


def rendered(params):
    command = TEMPLATE
    for name, value in params.items():
        command = command.replace(f"<<{name}>>", value)
    return command


def write_log(logs, job, attempts, lines, failed):
    with open(os.path.join(logs, f"{job}.log"), "w") as f:
        for attempt, slot in attempts:
            if attempt > 1:
                f.write(f"--- runner: attempt {attempt} of #{job}, on {slot} ---\n")
            for step in range(lines):
                f.write(f"step {step:5d} loss {2.5 / (step + 1) + job % 7 * 0.01:.4f} "
                        f"throughput {900 + job % 300} img/s\n")
        if failed:
            f.write("Traceback (most recent call last):\n  File \"train.py\", line 88\n"
                    "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n")


METRICS = '"metrics":{"throughput":"throughput ([0-9.]+)","loss":"loss ([0-9.]+)"},'


def write_outputs(state, job, attempt):
    """What `outputs:` brings back of a job: a result JSON in the folder of
    its attempt; the folder, as its `outputs` record names it."""
    name = str(job) if attempt == 1 else f"{job}.attempt-{attempt}"
    folder = os.path.join(state, "outputs", name)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "result.json"), "w") as f:
        f.write(f'{{"throughput": {900 + job % 300}, "energy_j": {job % 1000 * 1.5}}}\n')
    return folder


def generate(directory, jobs, hosts, slots_per_host, seed=1, outputs=False):
    """The state directory `directory`/queue.runner of one finished run of
    `jobs` jobs; the id of a job in the middle, whose log `runner log` reads.
    With `outputs`, every job has `metrics:` patterns and a result JSON that
    `outputs:` brought back, as a campaign that `runner results` reads."""
    rng = random.Random(seed)
    state = os.path.join(directory, "queue.runner")
    logs = os.path.join(state, "logs")
    os.makedirs(logs, exist_ok=True)
    slots = [(f"node{h:03d}", i) for h in range(hosts) for i in range(slots_per_host)]
    labels = [f"{host} #{i}" for host, i in slots]
    run = "5eed%04x" % seed
    records = []  # (time, order, line)

    def add(at, line):
        records.append((at, len(records), line))

    slot_list = ",".join(
        f'{{"label":"{label}","host":"{host}","index":{i},"params":{{}}}}'
        for label, (host, i) in zip(labels, slots))
    # The run has ended (run_end), so its pid is never looked at.
    add(T0, f'{{"event":"run_start","time":"{stamp(T0)}","run":"{run}","pid":4194000,'
            f'"mode":"queue","hosts_file":"hosts.yaml","queue_file":"queue.yaml",'
            f'"cwd":{json.dumps(directory)},"slots":[{slot_list}],"queued":{jobs}}}')
    free = [(T0 + 0.05 + s * 0.002, s) for s in range(len(slots))]  # when each slot is free
    heapq.heapify(free)
    pgid = 100000
    middle = jobs // 2
    for job in range(1, jobs + 1):
        params = job_params(job)
        command = json.dumps(rendered(params))
        param_text = json.dumps(params, separators=(",", ":"))
        retried = rng.random() < 0.003
        failed = rng.random() < 0.01
        retries = '"retries":1,' if retried else ""
        attempts = []
        ended = 0.0  # the previous attempt's end: the next one starts after it
        for attempt in (1, 2) if retried else (1,):
            start, s = heapq.heappop(free)
            start = max(start, ended + 0.1)
            duration = rng.lognormvariate(4.4, 0.5)  # about 80 s, from 20 s to minutes
            if failed or (retried and attempt == 1):
                duration *= rng.random()
            end = start + duration
            last = attempt == 2 or not retried
            exit_status = 1 if (failed and last) or not last else 0
            pgid += 1
            add(start, f'{{"event":"job_start","time":"{stamp(start)}","job":{job},"run":"{run}",'
                       f'"command":{command},"slot":"{labels[s]}","host":"{slots[s][0]}",'
                       f'"slot_index":{slots[s][1]},"params":{param_text},"line":1,'
                       f'"template":"{TEMPLATE}","slots_needed":1,{retries}'
                       f'{METRICS if outputs else ""}"attempt":{attempt},"requeues":0}}')
            add(start + 0.004, f'{{"event":"job_pgid","time":"{stamp(start + 0.004)}",'
                               f'"job":{job},"pgid":{pgid}}}')
            add(end, f'{{"event":"job_end","time":"{stamp(end)}","job":{job},'
                     f'"exit":{exit_status},"signal":null,"error":null,"lost":false,'
                     f'"timed_out":false,"cancelled":false,"rerun":{"false" if last else "true"},'
                     f'"duration_ms":{int(round((end - start - 0.004) * 1000))}}}')
            if outputs:
                folder = json.dumps(write_outputs(state, job, attempt))
                add(end + 0.001, f'{{"event":"outputs","time":"{stamp(end + 0.001)}",'
                                 f'"job":{job},"attempt":{attempt},"dir":{folder},"files":'
                                 f'[{{"path":"result.json","size":40,"sha256":null}}],'
                                 f'"missing":null,"error":null}}')
            attempts.append((attempt, labels[s]))
            ended = end
            heapq.heappush(free, (end + rng.uniform(0.02, 0.2), s))
        if failed or retried or job == middle or job % 97 == 0:
            write_log(logs, job, attempts, LOG_LINES, failed)
        elif outputs:  # a job whose metrics are read has a log
            write_log(logs, job, attempts, 3, failed)
    last_end = max(at for at, _, _ in records)
    add(last_end + 0.01, f'{{"event":"run_end","time":"{stamp(last_end + 0.01)}","run":"{run}",'
                         f'"status":"failed"}}')
    records.sort()
    write_journal(state, [line for _, _, line in records])
    return middle


SEGMENT_BYTES = 4 << 20  # runner's k_journal_segment_bytes
JOB_ID = re.compile(r'"job":(\d+)')


def write_journal(state, lines):
    """The journal as runner writes it: sealed in journal/000001.jsonl, ...
    past SEGMENT_BYTES, each with its index (the job ids it holds, as ranges,
    and whether it holds a run's start or end), then the live journal.jsonl."""
    sealed = os.path.join(state, "journal")
    os.makedirs(sealed, exist_ok=True)
    number, segment, size, jobs, runs = 0, [], 0, set(), False

    def write(path):
        with open(path, "w") as f:
            f.writelines(line + "\n" for line in segment)

    for line in lines:
        segment.append(line)
        size += len(line) + 1
        found = JOB_ID.search(line, 0, 120)
        if found:
            jobs.add(int(found.group(1)))
        runs = runs or line.startswith('{"event":"run_')
        if size < SEGMENT_BYTES:
            continue
        number += 1
        ranges = []
        for job in sorted(jobs):
            if ranges and job == ranges[-1][1] + 1:
                ranges[-1][1] = job
            else:
                ranges.append([job, job])
        with open(os.path.join(sealed, f"{number:06d}.index"), "w") as f:
            f.write(json.dumps({"jobs": ranges, "runs": runs}, separators=(",", ":")) + "\n")
        write(os.path.join(sealed, f"{number:06d}.jsonl"))
        segment, size, jobs, runs = [], 0, set(), False
    write(os.path.join(state, "journal.jsonl"))


def journal_bytes(state):
    """The journal's size: its sealed segments and the live file."""
    sealed = os.path.join(state, "journal")
    return os.path.getsize(os.path.join(state, "journal.jsonl")) + sum(
        os.path.getsize(os.path.join(sealed, name)) for name in os.listdir(sealed)
        if name.endswith(".jsonl"))


def forget_checkpoint(state):
    checkpoint = os.path.join(state, "journal.checkpoint")
    if os.path.exists(checkpoint):
        os.remove(checkpoint)


CHECKPOINT_EVERY_BYTES = 1 << 20  # runner's k_checkpoint_every_bytes


def leave_checkpoint_as_a_run_does(runner, state):
    """The checkpoint a run leaves at worst: its child read the journal up
    to CHECKPOINT_EVERY_BYTES before its end (or the live file's start)."""
    forget_checkpoint(state)
    live = os.path.join(state, "journal.jsonl")
    with open(live, "rb") as f:
        text = f.read()
    cut = text.rfind(b"\n", 0, max(0, len(text) - CHECKPOINT_EVERY_BYTES)) + 1
    os.rename(live, live + ".whole")
    try:
        with open(live, "wb") as f:
            f.write(text[:cut])
        subprocess.run([runner, "status", "--state-dir", state], check=True,
                       stdout=subprocess.DEVNULL)
    finally:
        os.replace(live + ".whole", live)


def timed(args, what):
    """The wall time of `args` in ms."""
    started = time.perf_counter()
    result = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    elapsed = (time.perf_counter() - started) * 1000
    if result.returncode != 0:
        raise RuntimeError(f"{what} failed ({result.returncode}): {result.stderr[-2000:]}")
    return elapsed


# The report page, in an iframe of a page of our own: the time from giving
# the iframe its address to its load event (the report's own scripts have
# run by then: they are inline), written into the wrapper's title, which
# --dump-dom prints. Nothing is injected into the report.
WRAPPER = """<!doctype html><html><head><title>pending</title></head><body>
<iframe id="report" style="width:1400px;height:1000px"></iframe>
<script>
const frame = document.getElementById('report');
let started = 0;
frame.addEventListener('load', () => {
  document.title = 'loaded ' + (performance.now() - started).toFixed(1);
});
started = performance.now();
frame.src = %s;
</script></body></html>
"""


def page_load_ms(chromium, page, work):
    wrapper = os.path.join(work, "load-report.html")
    with open(wrapper, "w") as f:
        f.write(WRAPPER % json.dumps("file://" + os.path.abspath(page)))
    with tempfile.TemporaryDirectory(dir=work) as profile:
        result = subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-sync", "--disable-background-networking", "--disable-component-update",
             "--user-data-dir=" + profile, "--dump-dom", "file://" + wrapper],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    marker = "<title>loaded "
    at = result.stdout.find(marker)
    if result.returncode != 0 or at < 0:
        raise RuntimeError(f"chromium did not load the report: {result.stderr[-2000:]}")
    return float(result.stdout[at + len(marker):result.stdout.find("<", at + len(marker))])


def find_chromium():
    for candidate in ("/usr/bin/chromium", "/usr/bin/chromium-browser"):
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def run(bench, log):
    sizes = bench.sizes
    jobs, hosts, slots = sizes["journal_jobs"], sizes["journal_hosts"], sizes["journal_slots"]
    reps = max(3, sizes["reps"])
    directory = bench.fresh_dir("journal")
    started = time.perf_counter()
    middle = generate(directory, jobs, hosts, slots, outputs=True)
    state = os.path.join(directory, "queue.runner")
    journal_mib = journal_bytes(state) / (1 << 20)
    log(f"journal: {jobs} jobs, {journal_mib:.1f} MiB, written in "
        f"{time.perf_counter() - started:.1f} s")
    page = os.path.join(directory, "report.html")
    # A run over an empty queue: what a run's start (and --resume) reads of
    # the journal before its first job. Last: it adds a run to the journal.
    hosts_file = os.path.join(directory, "hosts.yaml")
    queue_file = os.path.join(directory, "queue.yaml")
    with open(hosts_file, "w") as f:
        f.write("- hostname: localhost\n  gpu: [0]\n")
    with open(queue_file, "w") as f:
        f.write("[]\n")
    commands = {  # name: (its arguments, its target in ms)
        "status": (["status"], 100.0),
        "status_json": (["status", "--json"], 100.0),
        "log": (["log", str(middle)], 50.0),
        "report": (["report", "-o", page], 3000.0),
        "results": (["results"], 3000.0),
        "run_start": (["queue", "--resume", "-H", hosts_file, "-Q", queue_file], 1000.0),
    }
    what = f"{jobs} jobs on {hosts} hosts x {slots} slots ({journal_mib:.0f} MiB journal)"
    for name, (args, limit) in commands.items():
        shown = " ".join(args[:2] if name != "report" else args[:1])
        command = [bench.runner, *args, "--state-dir", state]
        # Cold: no checkpoint, the whole journal is read (a journal of an
        # older runner, or a deleted checkpoint).
        forget_checkpoint(state)
        cold = timed(command, "runner " + shown)
        # First: the checkpoint as a run leaves it at worst, a MiB of journal
        # written after it. Later: after a reading.
        leave_checkpoint_as_a_run_does(bench.runner, state)
        samples = [timed(command, "runner " + shown) for _ in range(reps)]
        extra = {"page_mib": [os.path.getsize(page) / (1 << 20)]} if name == "report" else {}
        # The targets are for a campaign's journal as runner keeps it, with
        # its checkpoint; the cold reading happens once (it writes one).
        kept = {"value_at_most": limit}
        for suffix, values, when, target in (
                ("_cold", [cold], "no checkpoint", {"reference": True}),
                ("_first", samples[:1], "a MiB past the run's checkpoint", kept),
                ("", samples[1:], "later calls", kept)):
            bench.record(f"journal_{name}{suffix}", {
                "what": f"runner {shown}, {when}: {what}", "measure": "ms",
                "higher_is_better": False, "samples": {"runner": values},
                "targets": {"runner": target}, **extra,
            })
    page_mib = os.path.getsize(page) / (1 << 20)
    log(f"report page: {page_mib:.1f} MiB")
    chromium = find_chromium()
    if not chromium:
        log("no chromium: the report page's load time is not measured")
        return
    loads = [page_load_ms(chromium, page, directory) for _ in range(reps)]
    bench.record("journal_page_load", {
        "what": f"the report page of {jobs} jobs ({page_mib:.1f} MiB) in headless Chromium",
        "measure": "ms", "higher_is_better": False, "samples": {"runner": loads},
        "targets": {"runner": {"value_at_most": 3000.0}},
        "note": "from setting an iframe's src to the report's file:// address to its load "
                "event, in a wrapper page printed by --dump-dom; a fresh Chromium each time",
    })
