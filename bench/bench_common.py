"""Helpers shared by the benchmark scripts."""
import socket


def free_port():
    """A TCP port on loopback that nothing listens on now (for a rendezvous)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port
