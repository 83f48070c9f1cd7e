#!/usr/bin/python3
"""`tula serve` under load while a Fashion-MNIST job trains: for each of
GET /v1/jobs/{id}, GET /v1/jobs, POST /v1/plan and GET /healthz, wrk paced to
about 500 requests/s (10 connections, each waiting 20 ms between requests:
Debian's wrk has no rate option, so a Lua delay() paces it; the achieved rate
is reported), with its latency percentiles and errors; and the training job's
throughput (samples/s from its metrics file) in each loaded window against
the quiet window just before it. Quiet and loaded windows alternate, so a
drift of the job's speed falls on both.

One row per endpoint goes to --out, with the windows' throughputs; the
throughput ratio is reported per pair and as the median of the pair ratios.

  bench/service_load.py [--window 15] [--rounds 1] [--tula build/src/tula] [--out bench/results/service_load.jsonl]
"""
import argparse
import http.client
import json
import os
import re
import signal
import statistics
import subprocess
import tempfile
import time

from bench_common import git_state

HERE = os.path.dirname(os.path.abspath(__file__))
PACE = "request = function() return wrk.format(%s) end\ndelay = function() return 20 end\n"


def call(port, method, path, body=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request(method, path, body=json.dumps(body) if body is not None else None,
                 headers={"Content-Type": "application/json"} if body is not None else {})
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, json.loads(data) if data else None


def throughput(metrics, t0, t1):
    """Training samples per second of step time, from the job's step records
    between t0 and t1 (evaluations, which pause training, are left out)."""
    samples, busy = 0, 0.0
    with open(metrics) as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if r.get("type") == "iter" and t0 <= r.get("time", 0) < t1:
                samples += r.get("global_batch", 0)
                busy += r.get("iter_s", 0)
    return samples / busy if busy else float("nan")


def seconds(text):
    value, unit = re.match(r"([\d.]+)(us|ms|s|m)", text).groups()
    return float(value) * {"us": 1e-6, "ms": 1e-3, "s": 1, "m": 60}[unit]


def run_wrk(port, lua, duration):
    out = subprocess.run(["wrk", "-t1", "-c10", f"-d{duration}s", "--latency", "-s", lua, f"http://127.0.0.1:{port}"],
                         capture_output=True, text=True).stdout
    pct = dict(re.findall(r"^\s+(50|75|90|99)%\s+(\S+)", out, re.M))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    return {"requests_per_s": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
            "requests": int(re.search(r"(\d+) requests in", out).group(1)),
            "p50_ms": 1000 * seconds(pct["50"]), "p99_ms": 1000 * seconds(pct["99"]),
            "non_2xx": int(non2xx.group(1)) if non2xx else 0,
            "socket_errors": sum(map(int, sock.groups())) if sock else 0, "wrk_output": out}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tula", default=os.path.join(HERE, "..", "build", "src", "tula"))
    ap.add_argument("--window", type=int, default=15)
    ap.add_argument("--rounds", type=int, default=1, help="quiet/loaded pairs per endpoint")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "service_load.jsonl"))
    args = ap.parse_args()
    git_state()  # the commit the run starts at, recorded in each row
    tmp = tempfile.mkdtemp(prefix="tula-load-")
    ready = os.path.join(tmp, "ready.json")
    server = subprocess.Popen([os.path.abspath(args.tula), "serve", "--listen", "127.0.0.1:0", "--db",
                               os.path.join(tmp, "jobs.db"), "--workdir", os.path.join(tmp, "work"), "--ready-file", ready],
                              stdout=open(os.path.join(tmp, "server.log"), "w"), stderr=subprocess.STDOUT)
    try:
        while not os.path.exists(ready):
            time.sleep(0.05)
        port = json.load(open(ready))["port"]
        status, job = call(port, "POST", "/v1/jobs", {"model": "small_cnn", "dataset": "fashion-mnist", "epochs": 10,
                                                       "objective": "knee", "no_replan": True})
        assert status == 201, job
        jid = job["id"]
        jdir = os.path.join(tmp, "work", "jobs", str(jid))
        while call(port, "GET", f"/v1/jobs/{jid}")[1]["state"] != "training":
            time.sleep(1)
        time.sleep(10)  # past the first launch's start-up
        profile = json.load(open(os.path.join(jdir, "profile.json")))  # the job's own quick profile
        plan_body = json.dumps(json.dumps({"profile": profile, "objective": "knee"}))
        endpoints = [("GET /v1/jobs/{id}", f'"GET", "/v1/jobs/{jid}"'), ("GET /v1/jobs", '"GET", "/v1/jobs"'),
                     ("GET /healthz", '"GET", "/healthz"'),
                     ("POST /v1/plan", f'"POST", "/v1/plan", {{["Content-Type"]="application/json"}}, {plan_body}')]
        metrics = os.path.join(jdir, "metrics.jsonl")
        with open(args.out, "a") as out:
            for name, request in endpoints:
                lua = os.path.join(tmp, "pace.lua")
                open(lua, "w").write(PACE % request)
                pairs = []
                for _ in range(args.rounds):
                    q0 = time.time()
                    time.sleep(args.window)
                    quiet = throughput(metrics, q0, time.time())
                    l0 = time.time()
                    w = run_wrk(port, lua, args.window)
                    loaded = throughput(metrics, l0, time.time())
                    pairs.append({"quiet_samples_per_s": quiet, "loaded_samples_per_s": loaded, "ratio": loaded / quiet})
                row = {"endpoint": name, "window_s": args.window, "connections": 10, "delay_ms": 20,
                       **{k: v for k, v in w.items() if k != "wrk_output"}, "pairs": pairs,
                       "median_pair_ratio": statistics.median(p["ratio"] for p in pairs),
                       "job_config": call(port, "GET", f"/v1/jobs/{jid}")[1]["chosen"], "time": time.time(),
                       **git_state()}
                out.write(json.dumps(row) + "\n")
                out.flush()
                print(json.dumps(row))
        call(port, "POST", f"/v1/jobs/{jid}/cancel")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=300)


if __name__ == "__main__":
    main()
