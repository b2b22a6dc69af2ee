"""The fleet scenario of bench/bench.py: one `sleep` job in every slot of
many hosts (64 x 8 and 128 x 8 slots at full size), started by runner and by
a ControlMaster loop (one `ssh HOST 'sleep N' &` per slot over warm masters),
each in turn on the same fleet. Every job first appends a byte to a file of
its run, so "every slot runs" is seen the same way for both: when the file
holds a byte per slot.

Figures per size: the time until every slot runs (runner connects afresh, the
loop's masters are open), runner's peak RSS, runner's CPU per started job
(against the loop's ssh clients and masters), and runner's CPU while every job
sleeps. The details add, for both, the CPU the fleet's side spent (sshd, its
sessions' shells and the jobs) and the machine's busy time meanwhile: what
bounds the start-up on a loopback fleet, whose sshds share this machine's
cores."""

import json
import os
import subprocess
import time

from journal_records import read_journal

TICK = os.sysconf("SC_CLK_TCK")
POLL = 0.005


def proc_stat(pid):
    """(ppid, own CPU seconds, reaped children's CPU seconds) of one process.
    Its own CPU is the scheduler's nanoseconds summed over its threads: the
    clock ticks of /proc/PID/stat round a short process's few milliseconds
    down to nothing."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    own = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/schedstat") as f:
            own += int(f.read().split()[0])
    return int(fields[1]), own / 1e9, (int(fields[13]) + int(fields[14])) / TICK


def cpu_of_trees(roots, also=lambda pid: False):
    """CPU seconds of the processes `roots` and their descendants (their own
    and what they reaped), and of every process for which `also(pid)` holds."""
    table = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                table[int(name)] = proc_stat(int(name))
            except (OSError, ValueError, IndexError):
                pass
    children = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    seen, todo = set(), [pid for pid in roots if pid in table]
    todo += [pid for pid in table if also(pid)]
    while todo:
        pid = todo.pop()
        if pid not in seen:
            seen.add(pid)
            todo += children.get(pid, [])
    return sum(table[pid][1] + table[pid][2] for pid in seen)


def machine_busy():
    """CPU seconds all cores spent busy since boot (/proc/stat)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / TICK


def command_line_has(text):
    needle = text.encode()

    def has(pid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                return needle in f.read()
        except OSError:
            return False
    return has


class CpuMeter:
    """CPU of the client side (`client()`: seconds) and of the fleet's side,
    and the machine's busy time, from now to `stop()`."""

    def __init__(self, fleet, client):
        self.fleet_pids = [proc.pid for proc in fleet.procs]
        self.client = client
        self.start = (client(), cpu_of_trees(self.fleet_pids), machine_busy())

    def stop(self):
        end = (self.client(), cpu_of_trees(self.fleet_pids), machine_busy())
        return [b - a for a, b in zip(self.start, end)]


def wait_for_bytes(path, count, proc, error, give_up_after=180):
    """Waits until `path` holds `count` bytes; the times (time.time()) the
    first and the last byte were seen. `proc` must not end meanwhile."""
    first = None
    give_up = time.monotonic() + give_up_after
    while True:
        size = os.path.getsize(path) if os.path.exists(path) else 0
        now = time.time()
        if size and first is None:
            first = now
        if size >= count:
            return first, now
        if proc.poll() is not None or time.monotonic() > give_up:
            raise error(f"{size} of {count} jobs started before "
                        + ("the run ended" if proc.poll() is not None else "giving up"))
        time.sleep(POLL)


def peak_rss_until_exit(proc):
    """runner's peak RSS in MiB, from the kernel's high-water mark (wait4's
    ru_maxrss would count the pages this script had before the exec); waits
    for it to end."""
    peak_kib = 0
    while True:
        try:
            with open(f"/proc/{proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        peak_kib = max(peak_kib, int(line.split()[1]))
        except OSError:
            pass
        pid, status = os.waitpid(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return peak_kib / 1024
        time.sleep(0.05)


def failed_jobs(journal_dir):
    return sum(1 for record in read_journal(journal_dir)
               if record.get("event") == "job_end" and record.get("exit") != 0)


class FleetSize:
    """One size of the scenario: `hosts` x `slots` jobs of `sleep seconds`."""

    def __init__(self, bench, error, hosts, slots, seconds):
        self.bench, self.error = bench, error
        self.fleet = bench.fleet
        self.hosts, self.slots, self.seconds = hosts, slots, seconds
        self.n = hosts * slots
        self.figures = {"all_running": {}, "first_running": {}, "client_cpu_ms": {},
                        "fleet_cpu_ms": {}, "machine_busy_s": {}}
        self.rss, self.idle_cpu, self.failures = [], [], []

    def command(self, started):
        return f"echo >> {started}; sleep {self.seconds}"

    def note(self, tool, spawned, first, last, cpu):
        client, fleet_side, busy = cpu
        for name, value in (("all_running", last - spawned), ("first_running", first - spawned),
                            ("client_cpu_ms", client / self.n * 1000),
                            ("fleet_cpu_ms", fleet_side / self.n * 1000),
                            ("machine_busy_s", busy)):
            self.figures[name].setdefault(tool, []).append(value)

    def runner(self):
        d = self.bench.fresh_dir(f"fleet-{self.hosts}x{self.slots}")
        started = os.path.join(d, "started")
        self.bench.write_hosts(d, self.hosts, self.slots)
        with open(os.path.join(d, "queue.yaml"), "w") as f:
            f.write(f"- {json.dumps(self.command(started))}\n" * self.n)
        out = open(os.path.join(d, "runner.out"), "w")
        proc = None
        meter = CpuMeter(self.fleet, lambda: proc_stat(proc.pid)[1] if proc else 0.0)
        spawned = time.time()
        proc = subprocess.Popen(self.bench.runner_args("queue", d), stdout=out,
                                stderr=subprocess.STDOUT, env=os.environ | {"NO_COLOR": "1"})
        self.bench.children.append(proc)
        try:
            first, last = wait_for_bytes(started, self.n, proc, self.error)
        except self.error as problem:
            raise self.error(f"runner in {d}: {problem}:\n"
                             + open(os.path.join(d, "runner.out")).read()[-2000:])
        self.note("runner", spawned, first, last, meter.stop())
        # CPU while everything sleeps: from just after the last start to just
        # before the first job can end.
        time.sleep(0.3)
        window_start, cpu_start = time.time(), proc_stat(proc.pid)[1]
        time.sleep(max(0.0, first + self.seconds - 0.3 - time.time()))
        span = time.time() - window_start
        if span > 0.2:
            self.idle_cpu.append(100.0 * (proc_stat(proc.pid)[1] - cpu_start) / span)
        self.rss.append(peak_rss_until_exit(proc))
        if proc.returncode not in (0, 1):
            raise self.error(f"the fleet run exited {proc.returncode}:\n"
                             + open(os.path.join(d, "runner.out")).read()[-2000:])
        self.failures.append(failed_jobs(os.path.join(d, "queue.runner")))
        return last - spawned

    def controlmaster_loop(self):
        d = self.bench.fresh_dir(f"fleet-cm-{self.hosts}x{self.slots}")
        started = os.path.join(d, "started")
        script = os.path.join(d, "loop.sh")
        quoted = "'" + self.command(started) + "'"
        with open(script, "w") as f:
            for slot in range(self.slots):
                for host in range(self.hosts):
                    f.write(f"ssh -F {self.fleet.ssh_config} h{host} {quoted} &\n")
            f.write("wait\n")
        proc = None
        masters = command_line_has(os.path.join(self.fleet.dir, "cm") + "/")
        meter = CpuMeter(self.fleet,
                          lambda: cpu_of_trees([proc.pid] if proc else [], also=masters))
        spawned = time.time()
        errors = os.path.join(d, "loop.err")
        proc = subprocess.Popen(["sh", script], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=open(errors, "w"))
        self.bench.children.append(proc)
        try:
            first, last = wait_for_bytes(started, self.n, proc, self.error)
        except self.error as problem:
            raise self.error(f"the ControlMaster loop in {d}: {problem}:\n"
                             + open(errors).read()[-2000:])
        self.note("ssh_controlmaster", spawned, first, last, meter.stop())
        # The script's `wait` says nothing of the clients: their errors do.
        proc.wait()
        if os.path.getsize(errors):
            raise self.error("the ControlMaster loop failed: " + open(errors).read()[-2000:])
        return last - spawned

    def measure(self, reps):
        self.fleet.warm_masters(self.hosts)
        self.bench.interleave(reps, [("runner", self.runner),
                                     ("ssh_controlmaster", self.controlmaster_loop)])

    def record(self, key):
        size = f"{self.hosts} hosts x {self.slots} slots"
        common = {"samples_note": f"{self.n} `sleep {self.seconds}` jobs on {size}",
                  "failed_jobs": self.failures}
        details = {name: values for name, values in self.figures.items()
                   if name not in ("all_running", "client_cpu_ms")}
        self.bench.record(f"{key}_all_running", {
            "what": f"{size}: time until every slot's job runs", "measure": "s",
            "higher_is_better": False, "samples": self.figures["all_running"], **common,
            "targets": {"ssh_controlmaster": {"ratio_at_most": 1.1}},
            "peer_commands": {"ssh_controlmaster": "ssh -F CONFIG hN 'echo >> F; sleep S' & "
                                                   "once per slot, masters open"},
            "details": details,
            "note": "from spawning the tool to the last job's byte in the file every job "
                    "appends to first; runner connects and authenticates in that time, the "
                    "loop's masters were opened before. details: first_running (s), "
                    "fleet_cpu_ms (sshd, the sessions and the jobs, per job), machine_busy_s "
                    "(CPU seconds of the whole machine over that time)",
        })
        self.bench.record(f"{key}_cpu_per_job", {
            "what": f"{size}: CPU per started job until every slot runs",
            "measure": "ms/job", "higher_is_better": False,
            "samples": self.figures["client_cpu_ms"], **common,
            "targets": {"ssh_controlmaster": {"reference": True}},
            "peer_commands": {"ssh_controlmaster": "the loop's ssh clients and its masters"},
            "note": "runner: utime+stime of the runner process (/proc/PID/stat)",
        })
        self.bench.record(f"{key}_peak_rss", {
            "what": f"{size}: runner's peak RSS", "measure": "MiB", "higher_is_better": False,
            "samples": {"runner": self.rss}, **common,
            "targets": {"runner": {"value_at_most": 64.0}},
        })
        self.bench.record(f"{key}_idle_cpu", {
            "what": f"{size}: runner's CPU while every job sleeps",
            "measure": "% of one core", "higher_is_better": False,
            "samples": {"runner": self.idle_cpu}, **common,
            "targets": {"runner": {"value_at_most": 2.0}},
        })


def hosts_needed(sizes):
    return max(hosts for hosts, _ in sizes["fleet_sizes"].values())


def run(bench, error):
    """Every size in bench.sizes["fleet_sizes"] ({key: [hosts, slots]}) on
    bench.fleet, which has at least hosts_needed(sizes) hosts."""
    for key, (hosts, slots) in bench.sizes["fleet_sizes"].items():
        size = FleetSize(bench, error, hosts, slots, bench.sizes["fleet_sleep"])
        size.measure(bench.sizes["fleet_reps"])
        size.record(key)
