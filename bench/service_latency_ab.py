#!/usr/bin/python3
"""What the request checks cost: two `tula serve` builds side by side, A (before) and B (after), each on a loopback
port of its own with an empty store, answered the same paced wrk load (1 thread, 10 connections, 20 ms between a
connection's requests, as bench/service_load.py) in windows that alternate A, B, A, B, ... per route. No job trains
(a build without LibTorch serves the API): this isolates the server's own work per request.

One row per window to --out, with the server's CPU time and context switches (all its threads, from /proc) per
request over the window; the table gives, per route, the median over windows of each build's p50, p99, requests/s
and CPU per request, and the median of the B/A pair ratios.

  bench/service_latency_ab.py --a OLD/tula --b NEW/tula [--window 10] [--pairs 3] [--unpaced]
                              [--out bench/results/service_latency_ab.jsonl]

--unpaced: no wait between a connection's requests, so wrk's 10 connections ask as fast as each server answers:
requests per second is then what the server serves at that concurrency, not the pace.
"""
import argparse
import json
import os
import signal
import re
import statistics
import subprocess
import tempfile
import time

from bench_common import append_row, git_state
from service_load import run_wrk

HERE = os.path.dirname(os.path.abspath(__file__))
ROUTES = {"GET /healthz": "/healthz", "GET /v1/jobs": "/v1/jobs"}


def server_usage(pid):
    """The server's CPU seconds (all threads, user and system) and context switches (all threads) so far."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    cpu_s = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
    switches = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            status = open(f"/proc/{pid}/task/{task}/status").read()
        except OSError:  # a thread that ended
            continue
        switches += sum(int(v) for v in re.findall(r"^(?:non)?voluntary_ctxt_switches:\s+(\d+)", status, re.M))
    return cpu_s, switches


def start(tula, tmp):
    ready = os.path.join(tmp, "ready.json")
    proc = subprocess.Popen([tula, "serve", "--listen", "127.0.0.1:0", "--db", os.path.join(tmp, "jobs.db"),
                             "--workdir", os.path.join(tmp, "work"), "--ready-file", ready],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while not os.path.exists(ready):
        if proc.poll() is not None or time.time() > deadline:
            raise RuntimeError(f"{tula} serve did not start")
        time.sleep(0.05)
    return proc, json.load(open(ready))["port"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="tula before")
    ap.add_argument("--b", required=True, help="tula after")
    ap.add_argument("--window", type=int, default=10)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--unpaced", action="store_true", help="no 20 ms wait between a connection's requests")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "service_latency_ab.jsonl"))
    args = ap.parse_args()
    state = git_state()
    with tempfile.TemporaryDirectory() as ta, tempfile.TemporaryDirectory() as tb:
        servers = {"A": start(os.path.abspath(args.a), ta), "B": start(os.path.abspath(args.b), tb)}
        try:
            rows = []
            for route, path in ROUTES.items():
                for pair in range(args.pairs):
                    for side in ("A", "B"):
                        port = servers[side][1]
                        lua = os.path.join(ta, "pace.lua")
                        with open(lua, "w") as f:
                            f.write('request = function() return wrk.format("GET", "%s", {["Host"] = "127.0.0.1:%d"}) end\n'
                                    % (path, port) + ("" if args.unpaced else 'delay = function() return 20 end\n'))
                        pid = servers[side][0].pid
                        cpu_before, switches_before = server_usage(pid)
                        r = run_wrk(port, lua, args.window)
                        r.pop("wrk_output")
                        cpu_after, switches_after = server_usage(pid)
                        # The server's own work per request, steadier than requests/s on a shared machine:
                        # the client's pace and the machine's other load move it less.
                        r["server_cpu_us_per_request"] = 1e6 * (cpu_after - cpu_before) / max(1, r["requests"])
                        r["server_switches_per_request"] = (switches_after - switches_before) / max(1, r["requests"])
                        row = {"route": route, "pair": pair, "build": side, "paced": not args.unpaced,
                               "binary": args.a if side == "A" else args.b, "window_s": args.window, **r, **state}
                        append_row(args.out, row)
                        rows.append(row)
        finally:
            for proc, _ in servers.values():
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=60)
    print("| route | A p50 | B p50 | B/A p50 (median of pairs) | A p99 | B p99 | B/A p99 (median of pairs) | "
          "A requests/s | B requests/s | B/A requests/s (median of pairs) | A server CPU µs/request | "
          "B server CPU µs/request | B/A CPU (median of pairs) | non-2xx A, B |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for route in ROUTES:
        a = [r for r in rows if r["route"] == route and r["build"] == "A"]
        b = [r for r in rows if r["route"] == route and r["build"] == "B"]
        med = lambda rs, k: statistics.median(r[k] for r in rs)
        ratio = lambda k: statistics.median(y[k] / x[k] for x, y in zip(a, b))
        print(f"| {route} | {med(a, 'p50_ms'):.3f} ms | {med(b, 'p50_ms'):.3f} ms | {ratio('p50_ms'):.2f} | "
              f"{med(a, 'p99_ms'):.3f} ms | {med(b, 'p99_ms'):.3f} ms | {ratio('p99_ms'):.2f} | "
              f"{med(a, 'requests_per_s'):.0f} | {med(b, 'requests_per_s'):.0f} | {ratio('requests_per_s'):.2f} | "
              f"{med(a, 'server_cpu_us_per_request'):.1f} | {med(b, 'server_cpu_us_per_request'):.1f} | "
              f"{ratio('server_cpu_us_per_request'):.2f} | "
              f"{sum(r['non_2xx'] for r in a)}, {sum(r['non_2xx'] for r in b)} |")


if __name__ == "__main__":
    main()
