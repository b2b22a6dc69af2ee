"""A tiny data-parallel training run: a linear model fitted to y = 3x + 1
with DistributedDataParallel over gloo, on CPUs. torchrun starts one
process per slot on each node; every process trains on its own batches,
DDP averages the gradients, and rank 0 writes the result as JSON.

It checkpoints every --checkpoint-every steps and, when started again after
a preemption, goes on from its last checkpoint. --step-seconds stands for
the compute of a real model: each step takes at least that long.
"""
import argparse
import fcntl
import json
import os
import socket
import struct
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def interface_towards(address):
    """The network interface of this node's address on the way to `address`.
    gloo otherwise binds to the address this node's hostname resolves to,
    which may be none, or not on the network the nodes share."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect((socket.gethostbyname(address), 9))
        mine = probe.getsockname()[0]
        for _, name in socket.if_nameindex():
            request = struct.pack("256s", name.encode()[:15])
            try:  # SIOCGIFADDR: the interface's IPv4 address
                found = socket.inet_ntoa(fcntl.ioctl(probe.fileno(), 0x8915, request)[20:24])
            except OSError:
                continue
            if found == mine:
                return name
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--step-seconds", type=float, default=0.0)
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--checkpoint-every", type=int, default=50)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    if "GLOO_SOCKET_IFNAME" not in os.environ:
        interface = interface_towards(os.environ["MASTER_ADDR"])
        if interface:
            os.environ["GLOO_SOCKET_IFNAME"] = interface
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = torch.nn.Linear(1, 1)

    # Rank 0 reads the checkpoint; DDP hands its weights to every rank.
    start = torch.tensor([0])
    if rank == 0 and os.path.exists(args.checkpoint):
        saved = torch.load(args.checkpoint)
        model.load_state_dict(saved["model"])
        start[0] = saved["step"]
    dist.broadcast(start, 0)
    start = int(start[0])
    ddp = DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=args.lr)
    if start:
        print(f"rank {rank}: resuming at step {start} from {args.checkpoint}", flush=True)

    data = torch.Generator().manual_seed(1000 * rank + start)
    began = time.monotonic()
    for step in range(start + 1, args.steps + 1):
        step_began = time.monotonic()
        x = torch.rand(args.batch, 1, generator=data) * 2 - 1
        loss = torch.nn.functional.mse_loss(ddp(x), 3 * x + 1)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        time.sleep(max(0.0, args.step_seconds - (time.monotonic() - step_began)))
        if step % args.checkpoint_every == 0 or step == args.steps:
            dist.all_reduce(loss)
            loss /= world
            if rank == 0:
                print(f"step {step}/{args.steps} loss {loss.item():.6f}", flush=True)
            if rank == 0 and step < args.steps:
                os.makedirs(os.path.dirname(args.checkpoint) or ".", exist_ok=True)
                torch.save({"model": model.state_dict(), "step": step}, args.checkpoint + ".new")
                os.replace(args.checkpoint + ".new", args.checkpoint)
    seconds = time.monotonic() - began

    if rank == 0:
        weight, bias = model.weight.item(), model.bias.item()
        result = {"world_size": world, "final_loss": loss.item(), "weight": weight,
                  "bias": bias, "resumed_at": start,
                  "steps_per_second": (args.steps - start) / seconds}
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        with open(args.out + ".new", "w") as out:
            json.dump(result, out)
        os.replace(args.out + ".new", args.out)
        os.remove(args.checkpoint)  # done: a run started again trains anew
        print(f"done: world size {world}, loss {loss.item():.6f}, "
              f"y = {weight:.3f}x + {bias:.3f}", flush=True)
    dist.barrier()  # the result is written before any rank ends
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
