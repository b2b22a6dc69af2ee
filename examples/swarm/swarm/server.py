"""A server of the swarm: joins through the coordinator, then serves the
steps of inference: a request's hidden states go on to the next server of
its route, and what comes back goes back (see wire.py).

Prints `server IP:PORT joined the swarm at COORDINATOR (N in it)` once the
coordinator took it in; leaves the swarm when it is stopped.
"""
import argparse
import socket
import socketserver

import wire


class Steps(socketserver.StreamRequestHandler):
    def handle(self):
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        downstream = None
        while (request := wire.read_request(self.rfile)) is not None:
            hops, states = request
            if hops:
                if downstream is None:
                    downstream = wire.connect(hops[0])
                down_in, down_out = downstream
                wire.send_request(down_out, hops[1:], states)
                states = wire.read_reply(down_in)
            wire.send_reply(self.wfile, states)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coordinator", required=True, help="IP:PORT")
    args = parser.parse_args()
    socketserver.ThreadingTCPServer.daemon_threads = True
    with socketserver.ThreadingTCPServer(("0.0.0.0", 0), Steps) as server:
        coordinator_in, coordinator_out = wire.connect(args.coordinator)
        coordinator_out.write(f"JOIN {server.server_address[1]}\n".encode())
        coordinator_out.flush()
        _, member, count = coordinator_in.readline().decode().split()
        print(f"server {member} joined the swarm at {args.coordinator} ({count} in it)",
              flush=True)
        server.serve_forever()


if __name__ == "__main__":
    main()
