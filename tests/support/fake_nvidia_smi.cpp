#include "support/fake_nvidia_smi.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>

namespace runner::testing {

namespace {

// The script (see write_fake_nvidia_smi); between readings power changes
// linearly, so the readings describe it whole.
constexpr const char* k_script = R"(#!/usr/bin/env python3
import os, sys, time
args = sys.argv[1:]
if not args or not args[0].startswith("--query-gpu=timestamp,index,uuid,power.draw") or "-lms" not in args:
    sys.exit(2)
period_ms = int(args[args.index("-lms") + 1])
fault = os.environ.get("FAKE_GPU_FAULT", "")
done = os.environ.get("FAKE_GPU_FAULT_DONE", "")
faulty = fault and not os.path.exists(done)
if faulty: open(done, "w").close()
print("Warning: a line nvidia-smi may say", flush=True)
readings = 0
while True:
    ms = (int(time.time() * 1000) // period_ms + 1) * period_ms
    time.sleep(max(0, ms / 1000 - time.time()))
    part = ms % 1000 / 1000
    watts = 100 + 400 * (part if part < 0.5 else 1 - part)
    stamp = time.strftime("%Y/%m/%d %H:%M:%S", time.localtime(ms // 1000)) + ".%03d" % (ms % 1000)
    sys.stdout.write("%s, 0, GPU-aaaa-0000, %.2f, 60, 1000\n%s, 1, GPU-bbbb-1111, 50.00, 10, 2000\n" % (stamp, watts, stamp))
    sys.stdout.write("garbage, [N/A]\n")
    if os.environ.get("FAKE_GPU_HOSTILE"):
        ahead = time.strftime("%Y/%m/%d %H:%M:%S", time.localtime(ms // 1000 + 86400)) + ".000"
        sys.stdout.write("%s, 99, GPU-cccc, 10.00, 1, 1\n%s, 0, GPU-aaaa-0000, nan, 60, 1000\n%s, 0, GPU-aaaa-0000, 900.00, 60, 1000\n" % (stamp, stamp, ahead))
    sys.stdout.flush()
    readings += 1
    if faulty and readings == 3:
        if fault == "die": sys.exit(1)
        time.sleep(3600)
)";

}  // namespace

double scripted_gpu0_watts(double t) {
  double part = t - std::floor(t);
  return 100 + 400 * (part < 0.5 ? part : 1 - part);
}

double scripted_gpu0_joules(double from, double to) {
  double joules = 0;
  for (double t = from; t < to;) {
    double next = std::min(to, std::floor(t * 2 + 1) / 2);
    joules += (scripted_gpu0_watts(t) + scripted_gpu0_watts(next)) / 2 * (next - t);
    t = next;
  }
  return joules;
}

void write_fake_nvidia_smi(const TempDir& dir) {
  std::string fake = dir.write("bin/nvidia-smi", k_script);
  chmod(fake.c_str(), 0755);
}

}  // namespace runner::testing
