"""The swarm's wire format, shared by the servers and the client.

A request is a line `HOPS SIZE`, HOPS the servers it still goes through after
this one (`ip:port,ip:port`, `-` for none), then SIZE bytes of hidden states.
A reply is a line `SIZE`, then SIZE bytes: the hidden states coming back.
"""
import socket


def address(text):
    """("10.0.0.1", 31330) from "10.0.0.1:31330"."""
    host, _, port = text.rpartition(":")
    return host, int(port)


def connect(text):
    """A connection to "ip:port", its reading and writing files."""
    sock = socket.create_connection(address(text))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock.makefile("rb"), sock.makefile("wb")


def send_request(out, hops, states):
    out.write(f"{','.join(hops) or '-'} {len(states)}\n".encode())
    out.write(states)
    out.flush()


def read_request(infile):
    """(hops, states), or None when the other side closed the connection."""
    line = infile.readline()
    if not line:
        return None
    hops, size = line.decode().split()
    return ([] if hops == "-" else hops.split(",")), read_exactly(infile, int(size))


def send_reply(out, states):
    out.write(f"{len(states)}\n".encode())
    out.write(states)
    out.flush()


def read_reply(infile):
    line = infile.readline()
    if not line:
        raise ConnectionError("the server closed the connection")
    return read_exactly(infile, int(line))


def read_exactly(infile, size):
    data = infile.read(size)
    if len(data) != size:
        raise ConnectionError(f"{len(data)} of {size} bytes came")
    return data
