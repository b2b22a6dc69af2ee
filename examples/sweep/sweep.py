#!/usr/bin/env python3
"""A stand-in for one run of a horizontal-fusion benchmark (HFTA's shape).

It trains MODELS copies of a model at once (the trials of a hyperparameter
search) on a "device": a process of its own that runs each kernel launched
to it, a multiply-add over as many elements as the launch says, and answers
when it is done. Without fusion, every layer of every copy is a launch of
its own; with fusion, the copies' layers are fused, one launch per layer for
all of them. Both do the same arithmetic; fusion saves launches, as it does
on a GPU, so it gains the most at small batches.

It warms up, trains for SECONDS, and writes its throughput to the CSV file
OUT: samples (of all copies) per second of CPU time of the program and its
device, so that jobs sharing a machine's cores measure what they would
alone.

    python3 sweep.py --model mlp --batch 8 --fusion on --out results/mlp.csv
"""
import argparse
import csv
import os
import struct
import sys
import time
from itertools import islice
from operator import mul

# Per model: its layers, and the multiply-adds of a sample in each layer.
MODELS = {"mlp": (4, 16), "cnn": (6, 32)}


def run_device(requests, replies, capacity):
    """Runs kernels until the launching process closes its end; each answer
    is the device's CPU time so far."""
    weights = [1.001] * capacity
    inputs = [0.5] * capacity
    while True:
        launch = os.read(requests, 8)
        if not launch:
            return
        elements = int.from_bytes(launch, "little")
        sum(map(mul, islice(weights, elements), islice(inputs, elements)))
        os.write(replies, struct.pack("d", time.process_time()))


class Device:
    """The launching side of a device process."""

    def __init__(self, capacity):
        requests_read, self.requests = os.pipe()
        self.replies, replies_write = os.pipe()
        if os.fork() == 0:
            os.close(self.requests)
            os.close(self.replies)
            run_device(requests_read, replies_write, capacity)
            os._exit(0)
        os.close(requests_read)
        os.close(replies_write)
        self.cpu_seconds = 0.0

    def launch(self, elements):
        """Runs a kernel over `elements` and waits for its end."""
        os.write(self.requests, elements.to_bytes(8, "little"))
        answer = os.read(self.replies, 8)
        if len(answer) != 8:
            sys.exit("sweep.py: the device went away")
        (self.cpu_seconds,) = struct.unpack("d", answer)


def train_step(device, layers, per_sample, batch, copies, fused):
    for _ in range(layers):
        if fused:
            device.launch(copies * batch * per_sample)
        else:
            for _ in range(copies):
                device.launch(batch * per_sample)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(MODELS), required=True)
    parser.add_argument("--batch", type=int, required=True)
    parser.add_argument("--fusion", choices=["on", "off"], required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--models", type=int, default=4, help="copies trained at once")
    parser.add_argument("--seconds", type=float, default=1.0, help="of training measured")
    args = parser.parse_args()

    layers, per_sample = MODELS[args.model]
    device = Device(args.models * args.batch * per_sample)
    print(f"{args.model}, batch {args.batch}, fusion {args.fusion}: {args.models} models "
          f"on device {os.environ.get('CUDA_VISIBLE_DEVICES', 'none')}", flush=True)

    def train(seconds):
        """Trains for `seconds`; returns the samples and the CPU seconds."""
        device.launch(0)
        cpu_began = time.process_time() + device.cpu_seconds
        began = time.perf_counter()
        samples = 0
        while time.perf_counter() - began < seconds:
            train_step(device, layers, per_sample, args.batch, args.models, args.fusion == "on")
            samples += args.models * args.batch
        return samples, time.process_time() + device.cpu_seconds - cpu_began

    train(args.seconds / 5)  # warm-up
    samples, cpu_seconds = train(args.seconds)
    print(f"throughput: {samples / cpu_seconds:.1f} samples/s", flush=True)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w", newline="") as out:
        table = csv.writer(out, lineterminator="\n")
        table.writerow(["samples", "cpu_seconds", "throughput"])
        table.writerow([samples, f"{cpu_seconds:.4f}", f"{samples / cpu_seconds:.1f}"])


if __name__ == "__main__":
    main()
