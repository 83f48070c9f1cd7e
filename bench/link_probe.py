#!/usr/bin/python3
"""A TCP probe of one link: its round-trip time and its bandwidth, as a
worker's collectives see them (TCP, Nagle off).

  bench/link_probe.py serve ADDRESS PORT     # one client, then exits; prints "listening" once it accepts
  bench/link_probe.py measure ADDRESS PORT [--pings 200] [--megabytes 16]

`measure` prints one JSON object: rtt_us (the median of --pings one-byte
round trips), one_way_us (half of it), and gbps (--megabytes sent, timed from
the first byte to the server's acknowledgement of the last, so the bytes
still queued on the link are counted).
"""
import argparse
import json
import socket
import statistics
import struct
import sys
import time

CHUNK = 1 << 16


def read_exactly(conn, n):
    data = bytearray()
    while len(data) < n:
        part = conn.recv(min(CHUNK, n - len(data)))
        if not part:
            raise ConnectionError("the peer closed the connection %d bytes early" % (n - len(data)))
        data += part
    return bytes(data)


def serve(address, port):
    listener = socket.create_server((address, port))
    print("listening", flush=True)
    listener.settimeout(120)
    conn, _ = listener.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    conn.settimeout(120)
    pings, = struct.unpack("!I", read_exactly(conn, 4))
    for _ in range(pings):
        conn.sendall(read_exactly(conn, 1))
    size, = struct.unpack("!Q", read_exactly(conn, 8))
    left = size
    while left > 0:
        part = conn.recv(min(CHUNK, left))
        if not part:
            raise ConnectionError("the client closed the connection %d bytes early" % left)
        left -= len(part)
    conn.sendall(b"k")
    conn.close()


def measure(address, port, pings, megabytes):
    conn = socket.create_connection((address, port), timeout=120)
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    conn.sendall(struct.pack("!I", pings))
    rtts = []
    for _ in range(pings):
        start = time.perf_counter()
        conn.sendall(b"p")
        read_exactly(conn, 1)
        rtts.append(time.perf_counter() - start)
    size = int(megabytes * 1e6)
    block = b"\0" * CHUNK
    start = time.perf_counter()
    conn.sendall(struct.pack("!Q", size))
    left = size
    while left > 0:
        conn.sendall(block[:min(CHUNK, left)])
        left -= min(CHUNK, left)
    read_exactly(conn, 1)
    seconds = time.perf_counter() - start
    conn.close()
    rtt = statistics.median(rtts)
    return {"rtt_us": rtt * 1e6, "one_way_us": rtt * 5e5, "gbps": size * 8 / seconds / 1e9,
            "pings": pings, "megabytes": megabytes}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["serve", "measure"])
    p.add_argument("address")
    p.add_argument("port", type=int)
    p.add_argument("--pings", type=int, default=200)
    p.add_argument("--megabytes", type=float, default=16)
    a = p.parse_args()
    if a.mode == "serve":
        serve(a.address, a.port)
    else:
        print(json.dumps(measure(a.address, a.port, a.pings, a.megabytes)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
