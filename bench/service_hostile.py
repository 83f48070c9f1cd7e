#!/usr/bin/python3
"""`tula serve` on a hostile network (issue 81): /healthz latency while an
attack runs, and the server's resident memory before, at the peak and 10 s
after. The attacks, each for --seconds (12 by default, inside the 15 s
request deadline):

  slow-8x8      8 source addresses x 8 connections, each sending one header line a second
  slow-16x64    16 addresses x 64 such connections
  streams-1000  1,000 GET /v1/jobs/{id}/events from 100 addresses (10 each), held open
  header-flood  4 connections sending 8,000-byte header lines as fast as the server reads them,
                each opened again when the server cuts it off
  slow-bodies-8x16  8 addresses x 16 POSTs whose head is whole and whose 1,000-byte body comes a byte a second

/healthz is asked every 50 ms from its own address on a fresh connection
(timeout 30 s); its p50, p99 and max are over the attack's window. Resident
memory is VmRSS of the server process, sampled every 100 ms. One row per
binary and attack goes to --out; give several --tula to run them in turn,
attack by attack (alternated), and --rounds to repeat.

  bench/service_hostile.py --tula OLD --tula NEW [--label old --label new] [--seconds 12] [--rounds 1]
                           [--only slow-8x8,...] [--out bench/results/service_net/hostile.jsonl]

The machine this runs on may be loaded by other work: the latencies are
wall-clock and say so; the memory and the counts of answered connections do
not depend on load.
"""
import argparse
import json
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import threading
import time

from bench_common import append_row, git_state

HERE = os.path.dirname(os.path.abspath(__file__))


def rss_mb(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


class Server:
    def __init__(self, tula, base):
        self.base = base
        os.makedirs(os.path.join(base, "data"), exist_ok=True)
        ready = os.path.join(base, "ready.json")
        self.log = open(os.path.join(base, "server.log"), "w")
        self.proc = subprocess.Popen([tula, "serve", "--listen", "127.0.0.1:0", "--db", os.path.join(base, "jobs.db"),
                                      "--workdir", os.path.join(base, "work"), "--data-root",
                                      os.path.join(base, "data"), "--ready-file", ready, "--max-running", "1"],
                                     stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.time() + 60
        while not os.path.exists(ready):
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"the server did not start; see {self.log.name}")
            time.sleep(0.05)
        time.sleep(0.1)
        self.port = json.load(open(ready))["port"]

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def connect(port, source, timeout=30.0):
    return socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(source, 0))


def healthz_ms(port, source):
    started = time.time()
    try:
        with connect(port, source) as s:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            line = s.makefile("rb").readline(200)
            ok = line.split()[1:2] == [b"200"]
    except OSError:
        ok = False
    return (time.time() - started) * 1000.0, ok


def address(i):
    return f"127.0.{1 + i // 200}.{10 + i % 200}"


SLOW_HEAD = (b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n", b"X-Slow: 1\r\n")
# A POST whose head comes whole and whose body (1,000 bytes said) comes a byte a second.
SLOW_BODY = (b"POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
             b"Content-Length: 1000\r\n\r\n{", b" ")


def slow_connection(port, source, until, counts, trickle=SLOW_HEAD):
    """Sends trickle[0], then trickle[1] every second until the server answers or `until`."""
    first, then = trickle
    try:
        s = connect(port, source, timeout=2)
        s.sendall(first)
    except OSError:
        counts["refused"] += 1
        return
    counts["opened"] += 1
    try:
        while time.time() < until:
            s.settimeout(1.0)
            try:
                data = s.recv(200)
                counts["answered " + (data.split()[1].decode() if len(data.split()) > 1 else "close")] += 1
                return
            except socket.timeout:
                s.sendall(then)
        counts["held to the end"] += 1
    except OSError:
        counts["closed"] += 1
    finally:
        s.close()


def slow(addresses, per_address, trickle=SLOW_HEAD):
    def attack(port, until, counts):
        threads = [threading.Thread(target=slow_connection, args=(port, address(a), until, counts, trickle), daemon=True)
                   for a in range(addresses) for _ in range(per_address)]
        for t in threads:
            t.start()
        return threads
    return attack


def stream(port, source, job_id, until, counts):
    try:
        s = connect(port, source, timeout=30)
        s.sendall(f"GET /v1/jobs/{job_id}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        line = s.recv(200).split(b"\r\n")[0]
        counts["answered " + (line.split()[1].decode() if len(line.split()) > 1 else "close")] += 1
    except OSError:
        counts["unanswered"] += 1
        return
    try:
        while time.time() < until:
            s.settimeout(max(0.1, until - time.time()))
            if not s.recv(4096):
                break
    except OSError:
        pass
    finally:
        s.close()


def streams(count, addresses):
    def attack(port, until, counts):
        conn = socket.create_connection(("127.0.0.1", port))
        body = json.dumps({"model": "small_cnn", "dataset": "synthetic", "synthetic_size": 512, "epochs": 1})
        conn.sendall(f"POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n{body}".encode())
        answer = conn.makefile("rb").read().decode(errors="replace")
        conn.close()
        job_id = json.loads(answer.split("\r\n\r\n", 1)[1])["id"]
        threads = [threading.Thread(target=stream, args=(port, address(i % addresses), job_id, until, counts),
                                    daemon=True) for i in range(count)]
        for t in threads:
            t.start()
        return threads
    return attack


def flood_connection(port, source, until, counts):
    """8 KB header lines as fast as the server takes them; a connection the server
    cuts off is opened again, until the attack's end."""
    line = b"X-Flood: " + b"a" * 8000 + b"\r\n"  # under cpp-httplib's 8192-byte line limit
    while time.time() < until:
        try:
            s = connect(port, source, timeout=2)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            while time.time() < until:
                s.sendall(line)
                counts["header bytes sent"] += len(line)
            counts["held to the end"] += 1
            s.close()
        except OSError:
            counts["cut off"] += 1
            time.sleep(0.01)


def flood(connections):
    def attack(port, until, counts):
        threads = [threading.Thread(target=flood_connection, args=(port, address(i), until, counts), daemon=True)
                   for i in range(connections)]
        for t in threads:
            t.start()
        return threads
    return attack


ATTACKS = {"slow-8x8": slow(8, 8), "slow-16x64": slow(16, 64), "streams-1000": streams(1000, 100),
           "header-flood": flood(4), "slow-bodies-8x16": slow(8, 16, SLOW_BODY)}


class Counts(dict):
    def __missing__(self, key):
        return 0


def run_attack(tula, label, name, seconds):
    base = tempfile.mkdtemp(prefix="tula-hostile-")
    server = Server(tula, base)
    try:
        time.sleep(1.0)
        before = rss_mb(server.proc.pid)
        peak = [before]
        stop = threading.Event()

        def sample():
            while not stop.is_set():
                peak[0] = max(peak[0], rss_mb(server.proc.pid))
                time.sleep(0.1)
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        counts = Counts()
        until = time.time() + seconds
        threads = ATTACKS[name](server.port, until, counts)
        latencies, failed = [], 0
        while time.time() < until:
            ms, ok = healthz_ms(server.port, "127.0.0.250")
            latencies.append(ms)
            failed += 0 if ok else 1
            time.sleep(0.05)
        for t in threads:
            t.join(40)
        time.sleep(10)
        after = rss_mb(server.proc.pid)
        stop.set()
        sampler.join()
        alive = server.proc.poll() is None
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)
    q = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else latencies * 99
    return {"kind": "service_hostile", **git_state(), "label": label, "tula": os.path.abspath(tula), "attack": name,
            "seconds": seconds, "healthz_n": len(latencies), "healthz_failed": failed,
            "healthz_p50_ms": round(statistics.median(latencies), 1), "healthz_p99_ms": round(q[98], 1),
            "healthz_max_ms": round(max(latencies), 1), "rss_before_mb": round(before, 1),
            "rss_peak_mb": round(peak[0], 1), "rss_after_10s_mb": round(after, 1), "server_alive": alive,
            "attack_outcomes": dict(counts), "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "load_note": "wall-clock on a shared 2-core machine loaded by other builds"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tula", action="append", required=True)
    ap.add_argument("--label", action="append")
    ap.add_argument("--seconds", type=float, default=12)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "service_net", "hostile.jsonl"))
    args = ap.parse_args()
    git_state()
    # Room for a thousand attack sockets (and the server's, which inherits it).
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192) if hard != resource.RLIM_INFINITY else 8192, hard))
    labels = args.label or [os.path.basename(os.path.dirname(os.path.dirname(t))) for t in args.tula]
    names = [n for n in ATTACKS if not args.only or n in args.only.split(",")]
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    # Each binary is copied once, so a rebuild during the run changes nothing.
    copies = []
    for i, tula in enumerate(args.tula):
        copy = os.path.join(tempfile.mkdtemp(prefix="tula-bin-"), "tula")
        shutil.copy2(tula, copy)
        copies.append(copy)
    for _ in range(args.rounds):
        for name in names:
            for tula, label in zip(copies, labels):
                row = run_attack(tula, label, name, args.seconds)
                append_row(args.out, row)
                print(f"{label:<8} {name:<13} healthz p50 {row['healthz_p50_ms']:>8} ms p99 {row['healthz_p99_ms']:>8} "
                      f"ms max {row['healthz_max_ms']:>8} ms (failed {row['healthz_failed']}/{row['healthz_n']}); "
                      f"RSS {row['rss_before_mb']} -> {row['rss_peak_mb']} -> {row['rss_after_10s_mb']} MB; "
                      f"{row['attack_outcomes']}", flush=True)


if __name__ == "__main__":
    main()
