"""The push scenario of bench/bench.py: `runner push` of a tree (many small
files and one big one) to several hosts at once, against `scp -r` and
`rsync -a` to the same hosts (one process per host, all at once, through
warm ControlMaster connections). Each host is a port of a throwaway sshd
whose sessions start in a folder of their own. Two figures: the first copy
(MiB/s over all hosts), and a second push of the same unchanged tree
(seconds; scp has no such thing and copies it all again)."""

import os
import shutil
import subprocess
import time

MIB = 1024 * 1024


def make_tree(root, files, big_mib):
    """`files` small files in folders of 100, and one `big_mib` MiB file."""
    if os.path.exists(root):
        return
    for i in range(files):
        folder = os.path.join(root, f"part{i // 100}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"f{i}.txt"), "w") as f:
            f.write(f"file {i}\n" * (1 + i % 50))
    block = bytes(range(256)) * (MIB // 256)
    with open(os.path.join(root, "big.bin"), "wb") as f:
        for m in range(big_mib):
            f.write(block[m % 256:] + block[:m % 256])


def tree_bytes(root):
    return sum(os.path.getsize(os.path.join(d, name))
               for d, _, names in os.walk(root) for name in names)


def run(bench, fleet_class):
    sizes = bench.sizes
    hosts = sizes["push_hosts"]
    source = os.path.join(bench.work, "push-data")
    make_tree(source, sizes["push_files"], sizes["push_big_mib"])
    mib = tree_bytes(source) / MIB * hosts
    fleet = fleet_class(bench.work, hosts, clean_shell=True, name="push-fleet", homes=True)
    try:
        fleet.warm_masters(hosts)
        directory = bench.fresh_dir("push")
        with open(os.path.join(directory, "hosts.yaml"), "w") as f:
            f.write("".join(f"- {fleet.host(i)}\n" for i in range(hosts)))
        ssh = f"ssh -F {fleet.ssh_config}"

        def clear():
            for i in range(hosts):
                shutil.rmtree(os.path.join(fleet.home(i), "dest"), ignore_errors=True)

        def runner():
            started = time.perf_counter()
            result = subprocess.run(
                [bench.runner, "push", source, "--to", "dest", "--hosts-file",
                 os.path.join(directory, "hosts.yaml"), "--identity", fleet.key,
                 "--known-hosts", fleet.known_hosts, "--no-agent"],
                capture_output=True, text=True)
            wall = time.perf_counter() - started
            if result.returncode != 0:
                raise RuntimeError(f"runner push failed: {result.stdout}{result.stderr}")
            return wall

        def on_every_host(command):
            """`command(i)` for every host at once; the wall time."""
            started = time.perf_counter()
            procs = [subprocess.Popen(command(i), stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE) for i in range(hosts)]
            for proc in procs:
                _, err = proc.communicate()
                if proc.returncode != 0:
                    raise RuntimeError(f"{command(0)[0]} failed: {err.decode()}")
            return time.perf_counter() - started

        def scp():
            for i in range(hosts):
                os.makedirs(os.path.join(fleet.home(i), "dest"), exist_ok=True)
            # -O: the scp protocol, a command sshd runs (not the sftp subsystem).
            return on_every_host(lambda i: ["scp", "-O", "-r", "-p", "-q", "-F",
                                            fleet.ssh_config, source, f"h{i}:dest/"])

        def rsync():
            return on_every_host(lambda i: ["rsync", "-a", "--mkpath", "-e", ssh, source,
                                            f"h{i}:dest/"])

        tools = [("runner", runner), ("scp", scp)]
        if shutil.which("rsync"):
            tools.append(("rsync", rsync))

        def first_copy(thunk):
            def timed_copy():
                clear()
                return mib / thunk()
            return timed_copy

        samples = bench.interleave(sizes["reps"], [(n, first_copy(t)) for n, t in tools])
        bench.record("push_throughput", {
            "what": f"{sizes['push_files']} small files and one {sizes['push_big_mib']} MiB file "
                    f"to {hosts} hosts at once", "measure": "MiB/s",
            "higher_is_better": True, "samples": samples,
            "targets": {name: {"reference": True} for name, _ in tools if name != "runner"},
            "peer_commands": {"scp": "scp -O -r -p (one per host, all at once)",
                              "rsync": "rsync -a -e 'ssh -F CONFIG' (one per host, all at once)"},
            "note": "MiB over all hosts per second of wall time; runner connects afresh, "
                    "the peers use warm ControlMaster connections",
        })
        # Unchanged: runner and rsync send nothing; scp sends everything again.
        again = bench.interleave(sizes["reps"], tools)
        bench.record("push_unchanged", {
            "what": "the same push again, nothing changed", "measure": "s",
            "higher_is_better": False, "samples": again,
            "targets": {name: {"reference": True} for name, _ in tools if name != "runner"},
            "peer_commands": {"scp": "scp -O -r -p (copies it all again)",
                              "rsync": "rsync -a (compares size and time)"},
        })
    finally:
        fleet.stop()
