"""Helpers shared by the benchmark scripts."""
import json
import os
import socket


def free_port():
    """A TCP port on loopback that nothing listens on now (for a rendezvous)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def append_row(path, row):
    """Appends one JSON line to a results file and syncs it to disk, so a benchmark stopped at any moment
    keeps every row it finished (the scripts resume by skipping rows already there)."""
    with open(path, "a") as f:
        f.write(json.dumps(row) + "\n")
        f.flush()
        os.fsync(f.fileno())
