// A fake nvidia-smi for tests of the GPU monitor: a python3 script that
// answers the monitor's `--query-gpu=timestamp,index,uuid,... -lms N` with
// scripted readings of two GPUs, and what its GPU 0 draws.
#pragma once

#include <string>

#include "support/temp_dir.h"

namespace runner::testing {

// Writes it as `bin/nvidia-smi` of `dir`, executable by anyone. GPU 0's
// power goes from 100 W up to 300 W and back down in each second (at whole
// seconds since the epoch 100 W, at half seconds 300 W), at 60 % and 1000
// MiB; GPU 1 draws 50 W at 10 % and 2000 MiB. Readings are taken at whole
// multiples of the period and stamped, as nvidia-smi does, with the local
// time of the reading. With `$FAKE_GPU_HOSTILE` set, each reading comes
// with lines no GPU gives (an index of 99, a power of nan, a reading of GPU
// 0 stamped a day ahead); with `$FAKE_GPU_FAULT` set to `die` or `hang`,
// the first run (none had made `$FAKE_GPU_FAULT_DONE`) ends or stops
// speaking after three readings.
void write_fake_nvidia_smi(const TempDir& dir);

// The scripted GPU 0's power at `t` (seconds since the epoch).
double scripted_gpu0_watts(double t);

// The scripted GPU 0's energy from `from` to `to` (seconds since the
// epoch): its power is linear between half seconds.
double scripted_gpu0_joules(double from, double to);

}  // namespace runner::testing
