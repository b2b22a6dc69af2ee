#!/usr/bin/env python3
"""runner against GNU parallel, an OpenSSH ControlMaster loop and pdsh, on a
loopback fleet: one throwaway sshd listening on many 127.0.0.1 ports (each
port is a host), a throwaway key, and an ssh config file (ControlMaster on)
for the peers. Every scenario runs each tool in the same run, interleaved,
several times; the medians go to a table on stdout and to a JSON file.

Not a test: nothing here fails on a slow figure (see --strict). Every process
it starts is stopped before it exits. Run it through bench/run.sh, which
installs the peers and builds runner first.
"""

import argparse
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone

import compare
import file_ops
import fleet_scenario
import gpu_monitor_scenario
import journal_scenario
from journal_records import read_journal
import push_scenario
import results_ops
import results_scenario
from work_file_system import work_file_system
from table import fmt, markdown_table

MIB = 1024 * 1024

# Full-size runs: the scenarios of the performance table in README.md (and docs/performance.md).
FULL = {
    "reps": 3,
    "queue_jobs": 1000, "queue_hosts": 8, "queue_slots": 4,
    "serial_jobs": 300, "busy_host_processes": 1000, "file_ops_jobs": [40, 240],
    "broadcast_steps": 100, "broadcast_hosts": 8,
    "add_samples": 25,
    "product_jobs": 10000, "product_window": 1000, "product_reps": 2,
    "fleet_sizes": {"fleet": [64, 8], "fleet_large": [128, 8]}, "fleet_sleep": 30,
    "fleet_reps": 3,
    "stream_mib": 256,
    "push_hosts": 4, "push_files": 1000, "push_big_mib": 100,
    "journal_jobs": 100000, "journal_hosts": 128, "journal_slots": 8,
    "results_jobs": 100000, "results_real_jobs": 1000,
    "gpu_monitor_gpus": 8, "gpu_monitor_seconds": 20,
}
# Tiny sizes that only prove the bench still works (CI).
SMOKE = {
    "reps": 1,
    "queue_jobs": 40, "queue_hosts": 2, "queue_slots": 2,
    "serial_jobs": 10, "busy_host_processes": 20, "file_ops_jobs": [5, 25],
    "broadcast_steps": 5, "broadcast_hosts": 2,
    "add_samples": 3,
    "product_jobs": 300, "product_window": 100, "product_reps": 1,
    "fleet_sizes": {"fleet": [2, 2], "fleet_large": [4, 2]}, "fleet_sleep": 3, "fleet_reps": 1,
    "stream_mib": 4,
    "push_hosts": 2, "push_files": 20, "push_big_mib": 2,
    "journal_jobs": 2000, "journal_hosts": 128, "journal_slots": 8,
    "results_jobs": 200, "results_real_jobs": 20,
    "gpu_monitor_gpus": 2, "gpu_monitor_seconds": 2,
}

MARKER = "RUNNER_BENCH_SSHD"


def log(message):
    print(f"bench: {message}", file=sys.stderr, flush=True)


class BenchError(RuntimeError):
    """A scenario that could not be measured; the scenario modules raise
    RuntimeError itself."""


# ---------------------------------------------------------------------------
# The loopback fleet


def free_ports(count):
    sockets, ports = [], []
    try:
        while len(ports) < count:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in sockets:
            s.close()
    return ports


def accepts(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def process_table():
    """pid -> (ppid, environ bytes, cmdline bytes) of every process we may read."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
            ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
        except (OSError, ValueError, IndexError):
            continue
        table[pid] = (ppid, environ, cmdline)
    return table


class Fleet:
    """One sshd on `count` ports of 127.0.0.1, and what clients need to use it."""

    def __init__(self, work, count, clean_shell, name="fleet", homes=False):
        """`homes`: each port's sessions start in a folder of its own,
        home(i), as on machines of their own (one per port, so up to 16)."""
        self.work = work
        self.dir = os.path.join(work, name)
        self.homes = homes
        os.makedirs(os.path.join(self.dir, "cm"))
        self.user = os.environ.get("USER") or subprocess.run(
            ["id", "-un"], capture_output=True, text=True).stdout.strip()
        self.key = os.path.join(self.dir, "client_ed25519")
        self.host_key = os.path.join(self.dir, "host_ed25519")
        self.known_hosts = os.path.join(self.dir, "known_hosts")
        self.ssh_config = os.path.join(self.dir, "ssh_config")
        self.behind_jump = "j0"
        self.procs = []
        self.warm = set()
        for path in (self.key, self.host_key):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "runner-bench",
                            "-f", path], check=True)
        shutil.copy(self.key + ".pub", os.path.join(self.dir, "authorized_keys"))
        if os.geteuid() == 0:
            os.makedirs("/run/sshd", exist_ok=True)
        self.ports = self._start(count, clean_shell)
        host_key = open(self.host_key + ".pub").read().split()
        with open(self.known_hosts, "w") as f:
            for port in self.ports:
                f.write(f"[127.0.0.1]:{port} {host_key[0]} {host_key[1]}\n")
        with open(self.ssh_config, "w") as f:
            for i, port in enumerate(self.ports):
                f.write(f"Host h{i}\n  Port {port}\n")
            # h0 again, reached through h1 as a jump host.
            f.write(f"Host {self.behind_jump}\n  Port {self.ports[0]}\n  ProxyJump h1\n")
            f.write(f"""Host *
  HostName 127.0.0.1
  User {self.user}
  IdentityFile {self.key}
  IdentitiesOnly yes
  IdentityAgent none
  UserKnownHostsFile {self.known_hosts}
  StrictHostKeyChecking yes
  BatchMode yes
  ControlMaster auto
  ControlPath {self.dir}/cm/%C
  ControlPersist yes
  LogLevel ERROR
""")

    def _start(self, count, clean_shell):
        """Starts one sshd per 16 ports (sshd's limit of listening sockets)."""
        ports = []
        for first in range(0, count, 16):
            ports += self._start_one(len(self.procs), min(16, count - first), clean_shell)
        return ports

    def _start_one(self, index, count, clean_shell):
        config = os.path.join(self.dir, f"sshd_config.{index}")
        log_path = os.path.join(self.dir, f"sshd.{index}.log")
        for attempt in range(5):
            ports = free_ports(count)
            lines = ["ListenAddress 127.0.0.1"] + [f"Port {p}" for p in ports] + [
                f"HostKey {self.host_key}",
                f"AuthorizedKeysFile {self.dir}/authorized_keys",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "UsePAM no",
                "StrictModes no",
                "PermitRootLogin prohibit-password",
                f"PidFile {self.dir}/sshd.{index}.pid",
                "PrintMotd no",
                "LogLevel ERROR",
                # Each port stands for a host with its own sshd: one listener
                # must not drop the fleet's simultaneous handshakes.
                "MaxStartups 1000:30:1000",
                # The marker finds every session process at clean-up. SHLVL=1
                # keeps bash (the login shell that sshd runs each command
                # with) from sourcing ~/.bashrc, as it does for ssh commands.
                f"SetEnv {MARKER}={self.dir}" + (" SHLVL=1" if clean_shell else ""),
            ]
            for i, port in enumerate(ports if self.homes else []):
                os.makedirs(self.home(i), exist_ok=True)
                lines += [f"Match LocalPort {port}",
                          f"  ForceCommand cd {self.home(i)} && eval \"$SSH_ORIGINAL_COMMAND\""]
            with open(config, "w") as f:
                f.write("\n".join(lines) + "\n")
            proc = subprocess.Popen(
                ["/usr/sbin/sshd", "-D", "-e", "-f", config], stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=open(log_path, "w"), start_new_session=True)
            give_up = time.monotonic() + 10
            while time.monotonic() < give_up and proc.poll() is None:
                if all(accepts(p) for p in ports):
                    self.procs.append(proc)
                    return ports
                time.sleep(0.02)
            proc.kill()
            proc.wait()
            text = open(log_path).read()
            if "Address already in use" not in text:
                raise BenchError("sshd did not start:\n" + text)
        raise BenchError("sshd found no free ports")

    def host(self, i):
        return f"127.0.0.1:{self.ports[i]}"

    def home(self, i):
        return os.path.join(self.dir, f"home{i}")

    def alias(self, i):
        return f"h{i}"

    def warm_masters(self, count):
        """Opens the ControlMaster of hosts h0..h{count-1}, untimed."""
        for i in range(count):
            if i in self.warm:
                continue
            run_checked(["ssh", "-F", self.ssh_config, self.alias(i), "true"], "warming a master")
            self.warm.add(i)

    def stop(self):
        for i in sorted(self.warm):
            subprocess.run(["ssh", "-F", self.ssh_config, "-O", "exit", self.alias(i)],
                           capture_output=True)
        self.warm.clear()
        if not self.procs:
            return
        # sshd's sessions run in sessions of their own: find them by the
        # marker, and the masters by their control path, and stop each.
        marker = f"{MARKER}={self.dir}".encode()
        listeners = {proc.pid for proc in self.procs}
        for pid, (ppid, environ, cmdline) in process_table().items():
            if pid == os.getpid() or pid in listeners:
                continue
            if marker in environ.split(b"\0") or self.dir.encode() in cmdline:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        for proc in self.procs:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.procs = []


# ---------------------------------------------------------------------------
# Running things


def clean_environment():
    env = dict(os.environ)
    for name in ("SSH_AUTH_SOCK", "SSH_AGENT_PID"):
        env.pop(name, None)
    env["NO_COLOR"] = "1"
    return env


ENV = clean_environment()


def run_checked(args, what, env=None, **kwargs):
    kwargs.setdefault("stdout", subprocess.PIPE)
    result = subprocess.run(args, stderr=subprocess.PIPE, text=True, env=env or ENV, **kwargs)
    if result.returncode != 0:
        raise BenchError(f"{what} failed ({result.returncode}): {' '.join(args)}\n"
                         f"{(result.stdout or '')[-2000:]}{result.stderr[-2000:]}")
    return result


def timed(args, what, **kwargs):
    start = time.perf_counter()
    run_checked(args, what, **kwargs)
    return time.perf_counter() - start


def utc_seconds(text):
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=timezone.utc).timestamp()


class Bench:
    def __init__(self, args, sizes):
        self.args = args
        self.sizes = sizes
        self.runner = os.path.abspath(args.runner)
        self.work = tempfile.mkdtemp(prefix="runner-bench.", dir=args.work_dir)
        self.file_system = work_file_system(self.work)
        if self.file_system and self.file_system.get("journal") is False:
            log(f"the work directory is on ext4 without a journal ({self.file_system['source']}): "
                "a file created there skips the inodes freed in the last minutes, so runner's "
                "per-job files cost more after deletions (bench/README.md)")
        self.fleet = None
        self.children = []
        self.results = {}
        self.counter = 0
        self.peers = {name: shutil.which(name) is not None for name in ("parallel", "pdsh")}
        for name, present in self.peers.items():
            if not present:
                log(f"{name} is not installed: its columns stay empty (bench/run.sh installs it)")

    # -- helpers ------------------------------------------------------------

    def fresh_dir(self, name):
        self.counter += 1
        path = os.path.join(self.work, f"{self.counter:03d}-{name}")
        os.makedirs(path)
        return path

    def runner_args(self, mode, directory, extra=()):
        return [self.runner, mode, "--hosts-file", os.path.join(directory, "hosts.yaml"),
                "--queue-file", os.path.join(directory, "queue.yaml"),
                "--identity", self.fleet.key, "--known-hosts", self.fleet.known_hosts,
                "--no-agent", "-p", "0", "--color", "never", *extra]

    def write_hosts(self, directory, hosts, slots):
        names = ", ".join(self.fleet.host(i) for i in range(hosts))
        with open(os.path.join(directory, "hosts.yaml"), "w") as f:
            f.write(f"- hostname: [{names}]\n  slots: {slots}\n")

    def run_runner(self, mode, directory, expect_jobs, failures=None, extra=()):
        """Runs runner to the end; its wall time in seconds. Failed jobs are an
        error, unless `failures` (a list) is given: then their count is added
        to it and a warning printed. `extra`: more arguments."""
        out = open(os.path.join(directory, "runner.out"), "w")
        start = time.perf_counter()
        result = subprocess.run(self.runner_args(mode, directory, extra), stdout=out,
                                stderr=subprocess.STDOUT, env=ENV)
        wall = time.perf_counter() - start
        output = open(os.path.join(directory, "runner.out")).read()
        ends = [r for r in read_journal(os.path.join(directory, "queue.runner"))
                if r.get("event") == "job_end" and not r.get("rerun")]
        failed = sum(1 for r in ends if r.get("exit") != 0)
        if failures is not None and result.returncode in (0, 1) and len(ends) == expect_jobs:
            if failed:
                log(f"warning: {failed} of {expect_jobs} jobs failed in {directory}:\n" +
                    "\n".join(line for line in output.splitlines()
                              if "error" in line or "lost" in line)[-2000:])
            failures.append(failed)
            return wall
        if result.returncode != 0:
            raise BenchError(f"runner exited {result.returncode} in {directory}:\n" +
                             output[-3000:])
        if len(ends) != expect_jobs or failed:
            raise BenchError(f"runner ran {len(ends)} jobs ({failed} failed), not {expect_jobs}, "
                             f"in {directory}")
        return wall

    def record(self, name, entry):
        self.results[name] = entry
        self.print_entry(name, entry)

    def interleave(self, reps, tools):
        """Runs each (name, thunk) once per repetition, rotating the order.
        Each starts with nothing left to write back: runner syncs its journal
        and queue file, and what the machine (a build, an earlier sample)
        left dirty would otherwise slow its syncs."""
        samples = {name: [] for name, _ in tools}
        for rep in range(reps):
            order = tools[rep % len(tools):] + tools[:rep % len(tools)]
            for name, thunk in order:
                os.sync()
                samples[name].append(thunk())
        return samples

    def floor_binary(self):
        """bench/floor.c compiled into the work directory, or None without a compiler."""
        if hasattr(self, "_floor"):
            return self._floor
        self._floor = None
        source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "floor.c")
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libssh2"],
                               capture_output=True, text=True)
        if shutil.which("cc") and flags.returncode == 0:
            binary = os.path.join(self.work, "floor")
            built = subprocess.run(["cc", "-O2", source, "-o", binary, *flags.stdout.split()],
                                   capture_output=True, text=True)
            if built.returncode == 0:
                self._floor = binary
            else:
                log(f"bench/floor.c did not compile; no floor figure:\n{built.stderr}")
        return self._floor

    # -- scenarios ----------------------------------------------------------

    def scenario_queue(self):
        s = self.sizes
        n, hosts, slots = s["queue_jobs"], s["queue_hosts"], s["queue_slots"]
        concurrency = hosts * slots
        failures = []
        self.fleet.warm_masters(hosts)
        host_list = os.path.join(self.work, "queue-hosts.txt")
        with open(host_list, "w") as f:
            f.writelines(f"h{i % hosts}\n" for i in range(n))

        def runner():
            d = self.fresh_dir("queue")
            self.write_hosts(d, hosts, slots)
            with open(os.path.join(d, "queue.yaml"), "w") as f:
                f.write("- 'true'\n" * n)
            return n / self.run_runner("queue", d, n, failures)

        def cm_loop():
            return n / timed(["xargs", "-a", host_list, "-P", str(concurrency), "-I{}", "ssh",
                              "-F", self.fleet.ssh_config, "{}", "true"], "ControlMaster loop")

        def parallel():
            logins = ",".join(f"{slots}/h{i}" for i in range(hosts))
            return n / timed(["parallel", "--will-cite", "-N0", "-j", str(slots), "--ssh",
                              f"ssh -F {self.fleet.ssh_config}", "-S", logins, "true", ":::",
                              *map(str, range(n))], "GNU parallel",
                             env={**ENV, "PARALLEL_HOME": os.path.join(self.work, "parallel")})

        tools = [("runner", runner), ("ssh_controlmaster", cm_loop)]
        if self.peers["parallel"]:
            tools.append(("gnu_parallel", parallel))
        samples = self.interleave(s["reps"], tools)
        self.record("queue_true_jobs", {
            "what": f"{n} `true` jobs, {hosts} hosts x {slots} slots, queue mode",
            "measure": "jobs/s", "higher_is_better": True, "samples": samples,
            "failed_jobs": failures,
            "targets": {"ssh_controlmaster": {"ratio_at_least": 2.5},
                        "gnu_parallel": {"ratio_at_least": 8.0}},
            "peer_commands": {
                "ssh_controlmaster": f"xargs -P {concurrency} ssh -F CONFIG hN true",
                "gnu_parallel": f"parallel -N0 -S {slots}/h0,... true"},
        })

    def serial_tools(self, tag, alias, write_hosts, extra=()):
        """The tools of a serial scenario: runner and a ControlMaster loop, each
        running `serial_jobs` `true` jobs one after another on host `alias`,
        in ms per job; and the list that counts runner's failed jobs.
        `write_hosts(dir)` writes runner's hosts.yaml; `extra`: more runner
        arguments."""
        n = self.sizes["serial_jobs"]
        failures = []
        host_list = os.path.join(self.work, f"{tag}-hosts.txt")
        with open(host_list, "w") as f:
            f.write(f"{alias}\n" * n)

        def runner():
            d = self.fresh_dir(tag)
            write_hosts(d)
            with open(os.path.join(d, "queue.yaml"), "w") as f:
                f.write("- 'true'\n" * n)
            return self.run_runner("queue", d, n, failures, extra) / n * 1000

        def cm_loop():
            return timed(["xargs", "-a", host_list, "-P", "1", "-I{}", "ssh", "-F",
                          self.fleet.ssh_config, "{}", "true"], "ControlMaster loop") / n * 1000

        return [("runner", runner), ("ssh_controlmaster", cm_loop)], failures

    def scenario_serial(self):
        n = self.sizes["serial_jobs"]
        self.fleet.warm_masters(1)
        tools, failures = self.serial_tools("serial", self.fleet.alias(0),
                                            lambda d: self.write_hosts(d, 1, 1))
        floor = self.floor_binary()
        if floor:
            def libssh2_floor():
                result = run_checked([floor, "127.0.0.1", str(self.fleet.ports[0]),
                                      self.fleet.user, self.fleet.key, str(n), "true"],
                                     "the libssh2 floor")
                return float(result.stdout.strip())
            tools.append(("libssh2_floor", libssh2_floor))
        samples = self.interleave(self.sizes["reps"], tools)
        self.record("serial_true_jobs", {
            "what": f"{n} `true` jobs, 1 host x 1 slot", "measure": "ms/job",
            "higher_is_better": False, "samples": samples, "failed_jobs": failures,
            "targets": {"ssh_controlmaster": {"ratio_at_most": 0.4},
                        "libssh2_floor": {"reference": True}},
            "peer_commands": {"ssh_controlmaster": "ssh -F CONFIG h0 true, one after another",
                              "libssh2_floor": "bench/floor.c: one blocking libssh2 session, "
                                               "channel after channel running `true`"},
        })

    def scenario_busy_host(self):
        """The serial scenario's runner on a host that also runs
        `busy_host_processes` idle processes (a GPU node runs hundreds to
        thousands), against the same runner on the idle host: what runner does
        per job on a host must not grow with the processes the host runs."""
        self.fleet.warm_masters(1)
        tools, failures = self.serial_tools("busy", self.fleet.alias(0),
                                            lambda d: self.write_hosts(d, 1, 1))
        idle_runner = tools[0][1]
        count = self.sizes["busy_host_processes"]

        def busy_runner():
            sleepers = [subprocess.Popen(["sleep", "3600"], stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, start_new_session=True)
                        for _ in range(count)]
            try:
                return idle_runner()
            finally:
                for sleeper in sleepers:
                    sleeper.kill()
                for sleeper in sleepers:
                    sleeper.wait()

        samples = self.interleave(self.sizes["reps"],
                                  [("runner", busy_runner), ("runner_idle_host", idle_runner)])
        self.record("serial_busy_host", {
            "what": f"{self.sizes['serial_jobs']} `true` jobs, 1 host x 1 slot, "
                    f"{count} idle processes on the host",
            "measure": "ms/job", "higher_is_better": False, "samples": samples,
            "failed_jobs": failures,
            "targets": {"runner_idle_host": {"ratio_at_most": 1.1}},
            "peer_commands": {"runner_idle_host": "the same runner, the host without them"},
        })

    def scenario_jump(self):
        n = self.sizes["serial_jobs"]
        alias = self.fleet.behind_jump
        run_checked(["ssh", "-F", self.fleet.ssh_config, alias, "true"], "warming a master")

        def write_hosts(d):
            with open(os.path.join(d, "hosts.yaml"), "w") as f:
                f.write(f"- {alias}\n")

        tools, failures = self.serial_tools("jump", alias, write_hosts,
                                            ("--ssh-config", self.fleet.ssh_config))
        samples = self.interleave(self.sizes["reps"], tools)
        self.record("serial_behind_jump", {
            "what": f"{n} `true` jobs, 1 host x 1 slot behind a ProxyJump host",
            "measure": "ms/job", "higher_is_better": False, "samples": samples,
            "failed_jobs": failures,
            "targets": {"ssh_controlmaster": {"reference": True}},
            "peer_commands": {"ssh_controlmaster": f"ssh -F CONFIG {alias} true, one after "
                                                   "another (ProxyJump h1, its own master)"},
        })

    def scenario_broadcast(self):
        steps, hosts = self.sizes["broadcast_steps"], self.sizes["broadcast_hosts"]
        failures = []
        self.fleet.warm_masters(hosts)

        def runner():
            d = self.fresh_dir("broadcast")
            self.write_hosts(d, hosts, 1)
            with open(os.path.join(d, "queue.yaml"), "w") as f:
                f.write("- 'true'\n" * steps)
            return steps / self.run_runner("broadcast", d, steps * hosts, failures)

        def pdsh():
            targets = ",".join(f"h{i}" for i in range(hosts))
            script = f'for i in $(seq {steps}); do pdsh -R ssh -w {targets} true || exit 1; done'
            env = {**ENV, "PDSH_SSH_ARGS_APPEND": f"-F {self.fleet.ssh_config}"}
            return steps / timed(["bash", "-c", script], "pdsh", env=env)

        tools = [("runner", runner)]
        if self.peers["pdsh"]:
            tools.append(("pdsh", pdsh))
        samples = self.interleave(self.sizes["reps"], tools)
        self.record("broadcast_true_steps", {
            "what": f"{steps} broadcast steps of `true` on {hosts} hosts", "measure": "steps/s",
            "higher_is_better": True, "samples": samples, "failed_jobs": failures,
            "targets": {"pdsh": {"ratio_at_least": 3.0}},
            "peer_commands": {"pdsh": f"pdsh -R ssh -w h0,...,h{hosts - 1} true, once per step"},
        })

    def scenario_add(self):
        count = self.sizes["add_samples"]
        d = self.fresh_dir("add")
        self.write_hosts(d, 1, 1)
        queue = os.path.join(d, "queue.yaml")
        open(queue, "w").close()
        marker = os.path.join(d, "started.txt")
        journal_dir = os.path.join(d, "queue.runner")
        out = open(os.path.join(d, "runner.out"), "w")
        daemon = subprocess.Popen(self.runner_args("queue", d, ["--daemon"]), stdout=out,
                                  stderr=subprocess.STDOUT, env=ENV)
        self.children.append(daemon)
        samples = []
        try:
            def add_and_wait(command, expect_lines):
                start_ns = time.time_ns()
                run_checked([self.runner, "add", "--queue-file", queue, command], "runner add")
                give_up = time.monotonic() + 30
                while time.monotonic() < give_up:
                    if daemon.poll() is not None:
                        raise BenchError("the --daemon runner exited:\n" +
                                         open(os.path.join(d, "runner.out")).read()[-2000:])
                    if os.path.exists(marker):
                        lines = open(marker).read().split()
                        if len(lines) >= expect_lines:
                            return (int(lines[expect_lines - 1]) - start_ns) / 1e6
                    time.sleep(0.0005)
                raise BenchError("a job added to the --daemon runner did not start within 30 s")

            command = f"date +%s%N >> {marker}"
            add_and_wait(command, 1)  # connects; not counted
            for i in range(count):
                # Wait for the previous job to end, then let the runner idle.
                give_up = time.monotonic() + 30
                while sum(1 for r in read_journal(journal_dir) if r.get("event") == "job_end") \
                        < i + 1 and time.monotonic() < give_up:
                    time.sleep(0.005)
                time.sleep(0.1 + 0.1 * (i % 3))
                samples.append(add_and_wait(command, i + 2))
        finally:
            daemon.send_signal(signal.SIGTERM)
            try:
                daemon.wait(10)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()
        self.record("add_latency", {
            "what": "`runner add` of one job into an idle --daemon runner (1 host)",
            "measure": "ms until it starts", "higher_is_better": False,
            "samples": {"runner": samples},
            "targets": {"runner": {"value_at_most": 100.0}},
            "note": "from just before `runner add` is spawned to the job's first command on the "
                    "host; Pegasus polls the queue every 3 s",
        })

    def scenario_product(self):
        s = self.sizes
        n, window = s["product_jobs"], s["product_window"]
        hosts, slots = s["queue_hosts"], s["queue_slots"]
        side = int(round(n ** 0.5))
        while n % side:
            side -= 1
        first_values = ", ".join(str(i) for i in range(side))
        second_values = ", ".join(str(i) for i in range(n // side))
        samples = {"runner": []}
        details = []
        failures = []
        for rep in range(s["product_reps"]):
            d = self.fresh_dir("product")
            self.write_hosts(d, hosts, slots)
            with open(os.path.join(d, "queue.yaml"), "w") as f:
                f.write(f"- command: 'true <<a>> <<b>>'\n  a: [{first_values}]\n"
                        f"  b: [{second_values}]\n")
            wall = self.run_runner("queue", d, n, failures)
            starts = sorted(utc_seconds(r["time"])
                            for r in read_journal(os.path.join(d, "queue.runner"))
                            if r.get("event") == "job_start")
            fill = hosts * slots  # the first jobs only fill empty slots
            first = starts[fill + window - 1] - starts[fill - 1]
            last = starts[-1] - starts[-1 - window]
            samples["runner"].append(last / first)
            details.append({"wall_s": wall, "jobs_per_s": n / wall,
                            "first_window_ms_per_job": first / window * 1000,
                            "last_window_ms_per_job": last / window * 1000,
                            "failed_jobs": failures[-1]})
        self.record("product_flatness", {
            "what": f"a {n}-job product entry, {hosts} hosts x {slots} slots",
            "measure": f"cost/job, last {window} / first {window}", "higher_is_better": False,
            "samples": samples, "details": details,
            "targets": {"runner": {"value_at_most": 1.2}},
            "note": "job start times from the journal; the first window starts once every slot "
                    "got its first job",
        })

        # The same number of jobs from one list: each take drops a value of
        # a list of up to n values, against 2 sqrt(n) above.
        list_samples = []
        for rep in range(s["product_reps"]):
            d = self.fresh_dir("list")
            self.write_hosts(d, hosts, slots)
            with open(os.path.join(d, "queue.yaml"), "w") as f:
                f.write(f"- command: 'true <<i>>'\n  i: [{', '.join(str(i) for i in range(n))}]\n")
            list_samples.append(n / self.run_runner("queue", d, n, failures))
        self.record("list_drain", {
            "what": f"one list of {n} values, {hosts} hosts x {slots} slots",
            "measure": "jobs/s", "higher_is_better": True,
            "samples": {"runner": list_samples,
                        "product": [detail["jobs_per_s"] for detail in details]},
            "targets": {"product": {"reference": True}},
            "peer_commands": {"product": f"the {side} x {n // side} product above"},
        })

    def scenario_fleet(self):
        fleet_scenario.run(self, BenchError)

    def scenario_push(self):
        push_scenario.run(self, Fleet)

    def scenario_file_ops(self):
        """The file-system calls of one local `true` job (bench/file_ops.py),
        and of `runner results` and `report` per job with outputs
        (bench/results_ops.py): counts, the same under any load."""
        if not shutil.which("strace"):
            log("no strace: the file-system calls per job are not counted")
            return
        costs = file_ops.per_job(self.runner, self.fresh_dir("file_ops"),
                                 *self.sizes["file_ops_jobs"])
        for call in ("openat", "close", "syncs", "rename", "unlink", "newfstatat", "write"):
            self.record(f"file_ops_{call}", {
                "what": f"`{call}` calls of runner per local `true` job"
                        + (" (fsync and fdatasync)" if call == "syncs" else ""),
                "measure": "calls/job", "higher_is_better": False,
                "samples": {"runner": [costs[call]]},
                "targets": {"runner": {"value_at_most": float(file_ops.BUDGET[call])}},
            })
        # And what `runner results` and `report` cost per job with outputs
        # (bench/results_ops.py).
        read_costs = results_ops.per_job(self.runner, self.fresh_dir("results_ops"))
        for command, calls in read_costs.items():
            for call, limit in results_ops.BUDGET.items():
                self.record(f"results_ops_{command}_{call}", {
                    "what": f"`{call}` calls of `runner {command}` per job with outputs",
                    "measure": "calls/job", "higher_is_better": False,
                    "samples": {"runner": [calls[call]]},
                    "targets": {"runner": {"value_at_most": float(limit)}},
                })

    def scenario_journal(self):
        journal_scenario.run(self, log)

    def scenario_results(self):
        results_scenario.run(self, ENV, log)

    def scenario_gpu_monitor(self):
        gpu_monitor_scenario.run(self, BenchError, log)

    def scenario_stream(self):
        mib = self.sizes["stream_mib"]
        big = os.path.join(self.work, "big.txt")
        if not os.path.exists(big):
            line = (b"0123456789abcdefghijklmnopqrstuvwxyz" * 3)[:99] + b"\n"
            block = line * (MIB // len(line) + 1)
            with open(big, "wb") as f:
                left = mib * MIB
                while left:
                    chunk = block[:min(left, len(block))]
                    f.write(chunk)
                    left -= len(chunk)
        self.fleet.warm_masters(1)

        def runner():
            d = self.fresh_dir("stream")
            self.write_hosts(d, 1, 1)
            with open(os.path.join(d, "queue.yaml"), "w") as f:
                f.write(f"- cat {big}\n")
            self.run_runner("queue", d, 1)
            end = [r for r in read_journal(os.path.join(d, "queue.runner"))
                   if r.get("event") == "job_end"][0]
            logged = os.path.getsize(os.path.join(d, "queue.runner", "logs", "1.log"))
            if logged != mib * MIB:
                raise BenchError(f"the job log holds {logged} bytes, not {mib * MIB}")
            return mib / (end["duration_ms"] / 1000)

        def cm_cat():
            with open(os.devnull, "w") as null:
                return mib / timed(["ssh", "-F", self.fleet.ssh_config, "h0", "cat", big],
                                   "ssh cat", stdout=null)

        tools = [("runner", runner), ("ssh_controlmaster", cm_cat)]
        floor = self.floor_binary()
        if floor:
            def floor_run(*output):
                result = run_checked([floor, "127.0.0.1", str(self.fleet.ports[0]),
                                      self.fleet.user, self.fleet.key, "1", f"cat {big}",
                                      *output], "the libssh2 floor")
                return mib / (float(result.stdout.strip()) / 1000)

            def floor_to_file():
                kept = os.path.join(self.fresh_dir("stream-floor"), "output")
                speed = floor_run(kept)
                if os.path.getsize(kept) != mib * MIB:
                    raise BenchError(f"the floor's file holds {os.path.getsize(kept)} bytes, "
                                     f"not {mib * MIB}")
                os.unlink(kept)
                return speed
            tools += [("libssh2_floor", floor_run), ("libssh2_floor_to_file", floor_to_file)]
        samples = self.interleave(self.sizes["reps"], tools)
        self.record("stream_throughput", {
            "what": f"one job writing {mib} MiB to stdout", "measure": "MiB/s",
            "higher_is_better": True, "samples": samples,
            # The limit is what libssh2 1.10 itself reaches (it decrypts one
            # AES block per call); OpenSSH's `ssh cat` is a reference.
            "targets": {"libssh2_floor": {"ratio_at_least": 0.95},
                        "libssh2_floor_to_file": {"reference": True},
                        "ssh_controlmaster": {"reference": True}},
            "peer_commands": {"ssh_controlmaster": "ssh -F CONFIG h0 cat FILE > /dev/null",
                              "libssh2_floor": "bench/floor.c: one blocking libssh2 channel "
                                               "running `cat FILE`, output discarded",
                              "libssh2_floor_to_file": "the same, writing the output to a "
                                                       "new file as it arrives"},
            "note": "runner: bytes in the job's log over the job's duration in the journal",
        })

    # -- output -------------------------------------------------------------

    @staticmethod
    def summarize(entry):
        medians = {tool: statistics.median(v) for tool, v in entry["samples"].items() if v}
        entry["median"] = medians
        results = {}
        runner = medians.get("runner")
        for peer, target in entry["targets"].items():
            if peer == "runner" and target.get("reference"):
                results["runner"] = {"value": runner, "target": "reference", "met": None}
                continue
            if peer == "runner":
                limit = target.get("value_at_most")
                met = runner is not None and runner <= limit
                results["runner"] = {"value": runner, "target": f"<= {limit:g}", "met": met}
                continue
            other = medians.get(peer)
            if target.get("reference"):
                ratio = runner / other if runner is not None and other else None
                results[peer] = {"ratio": ratio, "target": "reference", "met": None}
                continue
            if runner is None or other is None or other == 0:
                results[peer] = {"ratio": None, "met": None, "target": "not measured"}
                continue
            ratio = runner / other
            if "ratio_at_least" in target:
                results[peer] = {"ratio": ratio, "target": f">= {target['ratio_at_least']:g}x",
                                 "met": ratio >= target["ratio_at_least"]}
            else:
                results[peer] = {"ratio": ratio, "target": f"<= {target['ratio_at_most']:g}x",
                                 "met": ratio <= target["ratio_at_most"]}
        entry["results"] = results
        return entry

    def print_entry(self, name, entry):
        self.summarize(entry)
        med = entry["median"]
        runner = med.get("runner")
        for peer, result in entry["results"].items():
            status = {True: "ok", False: "MISSED", None: "-"}[result["met"]]
            if peer == "runner":
                log(f"{name}: runner {fmt(runner)} {entry['measure']} "
                    f"(target {result['target']}): {status}")
            else:
                log(f"{name}: runner {fmt(runner)} vs {peer} {fmt(med.get(peer))} "
                    f"{entry['measure']}, ratio {fmt(result['ratio'])} "
                    f"(target {result['target']}): {status}")

    def table(self):
        rows = [("scenario", "measure", "runner", "peer", "peer value", "runner/peer", "target",
                 "met")]
        for name, entry in self.results.items():
            med = entry["median"]
            for peer, result in entry["results"].items():
                status = {True: "yes", False: "NO", None: "-"}[result["met"]]
                if peer == "runner":
                    rows.append((name, entry["measure"], fmt(med.get("runner")), "", "", "",
                                 result["target"], status))
                else:
                    rows.append((name, entry["measure"], fmt(med.get("runner")), peer,
                                 fmt(med.get(peer)), fmt(result["ratio"]), result["target"],
                                 status))
        return markdown_table(rows)


def machine_info():
    def first(cmd):
        try:
            r = subprocess.run(cmd, capture_output=True, text=True)
            return (r.stdout or r.stderr).strip().splitlines()[0]
        except (OSError, IndexError):
            return None

    cpu = None
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = None
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                memory = f"{int(line.split()[1]) / MIB:.1f} GiB"
    except OSError:
        pass
    return {
        "cpu": cpu, "cores": os.cpu_count(), "memory": memory,
        "kernel": platform.release(), "os": first(["sh", "-c", ". /etc/os-release; echo $PRETTY_NAME"]),
        "openssh": first(["ssh", "-V"]),
        "libssh2": first(["dpkg-query", "-W", "-f=${Version}", "libssh2-1"]),
        "gnu_parallel": first(["parallel", "--version"]) if shutil.which("parallel") else None,
        "pdsh": first(["pdsh", "-V"]) if shutil.which("pdsh") else None,
        "load_average_at_start": os.getloadavg(),
    }


def git_commit(root):
    try:
        r = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"],
                           capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return r.stdout.strip() + ("+dirty" if dirty else "") if r.returncode == 0 else None
    except OSError:
        return None


SCENARIOS = ["queue", "serial", "busy_host", "file_ops", "jump", "broadcast", "add", "product", "fleet", "stream", "push",
             "journal", "results", "gpu_monitor"]
WITHOUT_FLEET = {"file_ops", "journal", "results", "gpu_monitor"}  # scenarios that need no sshd (local slots or none)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runner", required=True, help="the runner binary to measure")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: only proves it works")
    parser.add_argument("--reps", type=int, help="repetitions per tool (default 3, smoke 1)")
    parser.add_argument("--only", help=f"comma-separated scenarios: {','.join(SCENARIOS)}")
    parser.add_argument("--json", help="where to write the figures (default: "
                                       "build-bench/bench-results.json in the source tree)")
    parser.add_argument("--work-dir", help="where the throwaway directory goes (default $TMPDIR)")
    parser.add_argument("--keep", action="store_true", help="keep the throwaway directory")
    parser.add_argument("--keep-shell-rc", action="store_true",
                        help="let the remote login shell source ~/.bashrc as plain sshd does")
    parser.add_argument("--strict", action="store_true", help="exit 3 when a target is missed")
    parser.add_argument("--compare", metavar="BEFORE_JSON",
                        help="also print how the figures changed since an earlier results file")
    args = parser.parse_args()
    sizes = dict(SMOKE if args.smoke else FULL)
    # Read now: the new figures may be written over it.
    before = compare.load(args.compare) if args.compare else None
    if args.reps:
        sizes["reps"] = args.reps
    chosen = args.only.split(",") if args.only else SCENARIOS
    for name in chosen:
        if name not in SCENARIOS:
            parser.error(f"unknown scenario {name}; choose from {','.join(SCENARIOS)}")
    if not os.access(args.runner, os.X_OK):
        parser.error(f"{args.runner} is not an executable runner binary")
    need_fleet = any(name not in WITHOUT_FLEET for name in chosen)
    for tool in ("ssh", "ssh-keygen", "xargs") if need_fleet else ():
        if not shutil.which(tool):
            parser.error(f"{tool} is missing (bench/run.sh installs it)")
    if need_fleet and not os.access("/usr/sbin/sshd", os.X_OK):
        parser.error("/usr/sbin/sshd is missing (install openssh-server, or use bench/run.sh)")

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if not args.json:
        os.makedirs(os.path.join(root, "build-bench"), exist_ok=True)
        args.json = os.path.join(root, "build-bench", "bench-results.json")
    bench = Bench(args, sizes)

    def interrupted(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)
    started = time.time()
    info = machine_info()
    info["work_file_system"] = bench.file_system
    failed = []
    try:
        hosts = max(fleet_scenario.hosts_needed(sizes) if "fleet" in chosen else 0,
                    sizes["queue_hosts"], sizes["broadcast_hosts"])
        if need_fleet:
            bench.fleet = Fleet(bench.work, hosts, clean_shell=not args.keep_shell_rc)
            log(f"fleet: sshd on {hosts} ports of 127.0.0.1; work in {bench.work}")
        for name in chosen:
            log(f"scenario {name} ...")
            try:
                getattr(bench, f"scenario_{name}")()
            except (RuntimeError, OSError, subprocess.SubprocessError) as error:
                log(f"scenario {name} failed: {error}")
                failed.append(name)
    except KeyboardInterrupt:
        log("interrupted; cleaning up")
        failed.append("interrupted")
    finally:
        for child in bench.children:
            if child.poll() is None:
                child.kill()
                child.wait()
        if bench.fleet:
            bench.fleet.stop()
        if not args.keep:
            shutil.rmtree(bench.work, ignore_errors=True)

    info["load_average_at_end"] = os.getloadavg()
    document = {
        "commit": git_commit(root),
        "date": datetime.now().astimezone().isoformat(timespec="seconds"),
        "smoke": args.smoke, "sizes": sizes, "clean_shell": not args.keep_shell_rc,
        "machine": info, "duration_s": round(time.time() - started, 1),
        "failed": failed, "scenarios": bench.results,
    }
    with open(args.json, "w") as f:
        json.dump(document, f, indent=2)
        f.write("\n")
    print(bench.table())
    for name, entry in bench.results.items():
        lost = sum(entry.get("failed_jobs") or [])
        if lost:
            print(f"note: {lost} job(s) failed during {name}; see the warnings above")
    print(f"\n{info['cpu']}, {info['cores']} cores, {info['memory']}; load average "
          f"{info['load_average_at_start'][0]:.2f} at start, "
          f"{info['load_average_at_end'][0]:.2f} at end; {document['duration_s']} s")
    if before:
        print("\n" + compare.comparison(before, document))
    log(f"figures written to {args.json}")
    if failed:
        log(f"failed: {', '.join(failed)}")
        return 1
    missed = [n for n, e in bench.results.items() if any(r["met"] is False
                                                         for r in e["results"].values())]
    if args.strict and missed:
        log(f"targets missed: {', '.join(missed)}")
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
