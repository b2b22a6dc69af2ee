"""The benchmark client: generates tokens through the swarm and writes one
TSV row of what it measured.

Asks the coordinator for the servers, then runs PROCESSES sessions at once.
A session sends BATCH sequences through every server in joining order: the
prefix (PREFIX tokens each) once, then one token per sequence per step, for
OUTPUT steps. Each step's batch is split into MICRO_BATCHES requests in
flight at once, each on a connection of its own. A token is HIDDEN bytes of
hidden states; every server passes them on, and they come back.

The TSV: batch, micro_batches, processes, prefix_length, output_length,
throughput (tokens generated per second, all sessions together, prefix
included in the time) and latency (the mean milliseconds of one step).
"""
import argparse
import concurrent.futures
import multiprocessing
import os
import statistics
import time

import wire


def servers(coordinator):
    infile, out = wire.connect(coordinator)
    out.write(b"LIST\n")
    out.flush()
    listed = []
    while line := infile.readline().decode().strip():
        listed.append(line)
    if not listed:
        raise SystemExit(f"no server has joined the swarm at {coordinator}")
    return listed


def session(args, route):
    """One session's start, end and the seconds of each generation step."""
    rows = [args.batch // args.micro_batches + (i < args.batch % args.micro_batches)
            for i in range(args.micro_batches)]
    connections = [wire.connect(route[0]) for _ in rows]
    pool = concurrent.futures.ThreadPoolExecutor(len(rows))

    def request(connection, sequences, tokens):
        infile, out = connection
        states = os.urandom(sequences * tokens * args.hidden)
        wire.send_request(out, route[1:], states)
        if wire.read_reply(infile) != states:
            raise RuntimeError("the hidden states came back changed")

    def step(tokens):
        began = time.perf_counter()
        list(pool.map(request, connections, rows, [tokens] * len(rows)))
        return time.perf_counter() - began

    start = time.time()
    step(args.prefix)
    steps = [step(1) for _ in range(args.output)]
    return start, time.time(), steps


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coordinator", required=True, help="IP:PORT")
    parser.add_argument("--batch", type=int, required=True)
    parser.add_argument("--micro-batches", type=int, default=1)
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--prefix", type=int, default=32, help="prefix length, tokens")
    parser.add_argument("--output", type=int, default=16, help="output length, tokens")
    parser.add_argument("--hidden", type=int, default=8192, help="bytes of one token's states")
    parser.add_argument("--out", required=True, help="the TSV file to write")
    args = parser.parse_args()
    if not 1 <= args.micro_batches <= args.batch:
        parser.error("--micro-batches must be between 1 and --batch")
    route = servers(args.coordinator)
    with multiprocessing.Pool(args.processes) as processes:
        sessions = processes.starmap(session, [(args, route)] * args.processes)
    seconds = max(end for _, end, _ in sessions) - min(start for start, _, _ in sessions)
    throughput = args.batch * args.output * args.processes / seconds
    latency = 1000 * statistics.mean(s for _, _, steps in sessions for s in steps)
    print(f"batch {args.batch}, {args.micro_batches} micro-batches, {args.processes} processes "
          f"through {len(route)} servers: {throughput:.1f} tokens/s, {latency:.2f} ms per step",
          flush=True)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as tsv:
        tsv.write("batch\tmicro_batches\tprocesses\tprefix_length\toutput_length"
                  "\tthroughput\tlatency\n")
        tsv.write(f"{args.batch}\t{args.micro_batches}\t{args.processes}\t{args.prefix}"
                  f"\t{args.output}\t{throughput:.2f}\t{latency:.3f}\n")


if __name__ == "__main__":
    main()
