"""The swarm's coordinator: servers join it, clients ask it for the servers.

Listens on a TCP port (a free one by default) and prints the address others
reach it at: `coordinator listening at IP:PORT`. A server sends `JOIN PORT`
and keeps the connection open: it is a member, reached at the address it
came from and that port, until the connection closes. A client sends `LIST`
and gets one member a line, in joining order, then an empty line.
"""
import argparse
import os
import socketserver
import threading

members = []
members_lock = threading.Lock()


class Peer(socketserver.StreamRequestHandler):
    def handle(self):
        words = self.rfile.readline().decode().split()
        if words[:1] == ["JOIN"] and len(words) == 2:
            self.join(f"{self.client_address[0]}:{int(words[1])}")
        elif words == ["LIST"]:
            with members_lock:
                listed = list(members)
            self.wfile.write("".join(f"{member}\n" for member in listed).encode() + b"\n")

    def join(self, member):
        with members_lock:
            members.append(member)
            count = len(members)
        self.wfile.write(f"OK {member} {count}\n".encode())
        self.wfile.flush()
        print(f"{member} joined ({count} in the swarm)", flush=True)
        while self.rfile.read(4096):
            pass
        with members_lock:
            members.remove(member)
        print(f"{member} left", flush=True)


def own_address():
    """The address this node was reached at over SSH (the third word of
    SSH_CONNECTION), the one the other nodes reach it at too."""
    words = os.environ.get("SSH_CONNECTION", "").split()
    return words[2] if len(words) == 4 else "127.0.0.1"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", help="the address to give (default: this node's SSH address)")
    parser.add_argument("--port", type=int, default=0, help="the port (default: a free one)")
    args = parser.parse_args()
    socketserver.ThreadingTCPServer.allow_reuse_address = True
    socketserver.ThreadingTCPServer.daemon_threads = True
    with socketserver.ThreadingTCPServer(("0.0.0.0", args.port), Peer) as server:
        print(f"coordinator listening at {args.host or own_address()}:{server.server_address[1]}",
              flush=True)
        server.serve_forever()


if __name__ == "__main__":
    main()
