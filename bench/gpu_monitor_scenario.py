"""The GPU monitor scenario of bench/bench.py: what watching a host's GPUs
costs. One local host with `gpus` GPU slots runs one `sleep` per slot, once
with the GPU monitor and once with --no-gpu-monitor, alternately; the CPU
time runner and everything it started used (wait4's rusage: runner, the
monitor's python3 reading NVML through ctypes, the jobs) is compared. The
difference, over the run's length, is what monitoring one host costs, as a
share of one core: runner's reading of the lines plus the host's script.

No GPU here: the NVML the monitor loads is a fake built into the work
directory (libnvidia-ml.so.1 on LD_LIBRARY_PATH, each call a few
arithmetic operations), so the figure leaves out what a real driver spends
answering; an `nvidia-smi` on PATH says the host has GPUs. Every job's
results row must carry its GPU energy, or the scenario fails: a monitor
that did not run costs nothing.
"""

import json
import os
import subprocess
import time

FAKE_NVML = r"""#include <stdio.h>
#include <string.h>
#include <time.h>
struct use { unsigned gpu, memory; };
struct memory { unsigned long long total, free, used; };
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}
int nvmlInit_v2(void) { return 0; }
int nvmlDeviceGetCount_v2(unsigned *count) { *count = GPUS; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **handle) {
  *handle = (void *)(unsigned long)(i + 1);
  return 0;
}
static unsigned index_of(void *handle) { return (unsigned)(unsigned long)handle - 1; }
int nvmlDeviceGetUUID(void *handle, char *uuid, unsigned length) {
  snprintf(uuid, length, "GPU-00000000-0000-0000-0000-%012u", index_of(handle));
  return 0;
}
int nvmlDeviceGetPowerUsage(void *handle, unsigned *milliwatts) {
  *milliwatts = 100000 + 1000 * index_of(handle);
  return 0;
}
int nvmlDeviceGetUtilizationRates(void *handle, struct use *use) {
  use->gpu = 50;
  use->memory = 10;
  return 0;
}
int nvmlDeviceGetMemoryInfo(void *handle, struct memory *memory) {
  memory->total = 80ull << 30;
  memory->used = 1ull << 30;
  memory->free = memory->total - memory->used;
  return 0;
}
int nvmlDeviceGetTotalEnergyConsumption(void *handle, unsigned long long *millijoules) {
  *millijoules = (unsigned long long)(now() * (100000 + 1000 * index_of(handle)));
  return 0;
}
"""

FAKE_NVIDIA_SMI = "#!/bin/sh\n# Only says that the host has GPUs: NVML answers the monitor.\nexit 0\n"


def build_fakes(directory, gpus, BenchError):
    """The fake NVML and nvidia-smi in `directory`; the environment that finds them."""
    lib = os.path.join(directory, "lib")
    bin_dir = os.path.join(directory, "bin")
    os.makedirs(lib)
    os.makedirs(bin_dir)
    source = os.path.join(directory, "nvml.c")
    with open(source, "w") as f:
        f.write(FAKE_NVML)
    built = subprocess.run(["cc", "-O2", "-shared", "-fPIC", f"-DGPUS={gpus}", "-o",
                            os.path.join(lib, "libnvidia-ml.so.1"), source],
                           capture_output=True, text=True)
    if built.returncode != 0:
        raise BenchError(f"the fake NVML did not compile:\n{built.stderr}")
    smi = os.path.join(bin_dir, "nvidia-smi")
    with open(smi, "w") as f:
        f.write(FAKE_NVIDIA_SMI)
    os.chmod(smi, 0o755)
    env = dict(os.environ)
    env.pop("SSH_AUTH_SOCK", None)
    env["NO_COLOR"] = "1"
    env["PATH"] = bin_dir + ":" + env["PATH"]
    env["LD_LIBRARY_PATH"] = lib
    return env


def cpu_seconds(runner, directory, env, extra, BenchError):
    """Runs runner's queue in `directory` to its end: the CPU seconds of runner
    and all it waited for, and the wall seconds."""
    with open(os.path.join(directory, "runner.out"), "w") as out:
        started = time.perf_counter()
        child = subprocess.Popen([runner, "queue", "-p", "0", "--color", "never", *extra],
                                 cwd=directory, stdout=out, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        with open(os.path.join(directory, "runner.out")) as f:
            raise BenchError(f"runner exited {status} in {directory}:\n{f.read()[-3000:]}")
    return usage.ru_utime + usage.ru_stime, wall


def energies(runner, directory, env):
    """Each results row's gpu_energy_j (None where it has none)."""
    listed = subprocess.run([runner, "results", "--format", "jsonl"], cwd=directory, env=env,
                            capture_output=True, text=True)
    if listed.returncode != 0:
        return []
    return [json.loads(line).get("gpu_energy_j") for line in listed.stdout.splitlines()]


def run(bench, BenchError, log):
    gpus = bench.sizes["gpu_monitor_gpus"]
    seconds = bench.sizes["gpu_monitor_seconds"]
    env = build_fakes(bench.fresh_dir("gpu_monitor_fakes"), gpus, BenchError)
    indices = ", ".join(str(i) for i in range(gpus))

    def one_run(extra):
        directory = bench.fresh_dir("gpu_monitor")
        with open(os.path.join(directory, "hosts.yaml"), "w") as f:
            f.write(f"- hostname: localhost\n  gpu: [{indices}]\n")
        with open(os.path.join(directory, "queue.yaml"), "w") as f:
            f.write(f"- command: sleep {seconds}\n  copy: [{indices}]\n")
        cpu, wall = cpu_seconds(bench.runner, directory, env, extra, BenchError)
        return directory, cpu, wall

    def monitored():
        directory, cpu, wall = one_run([])
        found = energies(bench.runner, directory, env)
        if len(found) != gpus or any(value is None for value in found):
            raise BenchError(f"the monitored run's results lack GPU energy ({found}) in "
                             f"{directory}")
        return cpu, wall

    def unmonitored():
        _, cpu, wall = one_run(["--no-gpu-monitor"])
        return cpu, wall

    samples = bench.interleave(bench.sizes["reps"], [("on", monitored), ("off", unmonitored)])
    # Each monitored run against the unmonitored run beside it.
    shares = [100 * (on_cpu - off_cpu) / on_wall
              for (on_cpu, on_wall), (off_cpu, _) in zip(samples["on"], samples["off"])]
    log(f"gpu_monitor: CPU seconds with the monitor {[round(c, 3) for c, _ in samples['on']]}, "
        f"without {[round(c, 3) for c, _ in samples['off']]}, over runs of {seconds} s")
    bench.record("gpu_monitor_cpu", {
        "what": f"CPU of monitoring one host of {gpus} GPUs (runner and the host's NVML "
                f"reader, a fake NVML), % of one core",
        "measure": "% of a core", "higher_is_better": False,
        "samples": {"runner": shares},
        "targets": {"runner": {"value_at_most": 1.0}},
    })
