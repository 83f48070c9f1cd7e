#!/usr/bin/python3
"""Random and mutated requests against `tula serve`: no crash, no leak, and
every answer well formed.

The requests, over raw sockets so that malformed ones can be sent: random
methods and paths (the real routes, ids huge, negative or not numbers,
traversal, long paths, query strings of garbage), wrong or missing
Content-Type, bad Authorization headers, and bodies that are a valid job with
one thing broken (a wrong type, an unknown field, null, a huge number, a
path out of the data roots, deep nesting, truncated JSON, bytes that are not
UTF-8, a body over the 1 MiB limit). Every mutation is invalid, so no job may
be created. Checked: each answer has a status line, is 4xx (or 2xx for a read
of a valid route), never 5xx, and carries a JSON body with an "error" for
every 4xx; the server is alive and answers /healthz at the end; the store
holds as many jobs as before; its resident memory before and after
(VmRSS) is reported.

  bench/service_fuzz.py [--requests 10000] [--seed 0] [--tula build/src/tula] [--out bench/results/service_fuzz.jsonl]
"""
import argparse
import json
import os
import random
import signal
import socket
import subprocess
import tempfile
import time

from bench_common import git_state

HERE = os.path.dirname(os.path.abspath(__file__))
VALID = {"model": "small_cnn", "dataset": "synthetic", "synthetic_size": 512, "epochs": 2}
FIELDS = ["model", "dataset", "data_dir", "target_accuracy", "epochs", "objective", "resources", "optimizer", "lr",
          "seed", "profile", "pilot_steps", "no_replan", "start_at", "max_retries"]
WEIRD = [None, True, -1, 1e308, -1e308, "", "x" * 5000, [], {}, [1, [2, [3]]], {"a": {"b": {"c": 1}}}, "../../etc/passwd",
         "/etc/passwd", "/usr/share/datasets/../../../etc", "\u00e9\u4e2d\U0001f600", 2 ** 63, -(2 ** 63), 0.5, "NaN"]


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def invalid_body(rng):
    spec = dict(VALID)
    kind = rng.randrange(9)
    if kind == 0:
        spec[rng.choice(FIELDS)] = rng.choice(WEIRD)
        spec["epochs"] = "two"  # whatever else changed, this keeps it invalid
    elif kind == 1:
        spec["unknown_" + str(rng.randrange(1000))] = rng.choice(WEIRD)
    elif kind == 2:
        spec["data_dir"] = rng.choice(["/etc", "/usr/share/datasets/../../root", "relative/dir", "/proc/self"])
    elif kind == 3:
        return json.dumps(spec)[: rng.randrange(1, len(json.dumps(spec)))].encode()
    elif kind == 4:
        return b"[" * rng.randrange(1, 100000) + b"]" * rng.randrange(0, 10)
    elif kind == 5:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300)))
    elif kind == 6:
        return b'{"epochs": 2, "model": "' + b"a" * (1024 * 1024 + 10) + b'"}'
    elif kind == 7:
        spec["target_accuracy"] = 0.9  # with epochs too: exactly one is allowed
    else:
        return json.dumps(rng.choice([[], "job", 42, None, [VALID]])).encode()
    return json.dumps(spec).encode()


def random_path(rng):
    ids = ["1", "0", "-1", "99999999999999999999999", "abc", "1.5", "%00", "..%2F..%2Fetc", "1/../../2"]
    path = rng.choice(["/v1/jobs", "/v1/jobs/{id}", "/v1/jobs/{id}/cancel", "/v1/jobs/{id}/plan", "/v1/jobs/{id}/metrics",
                       "/v1/plan", "/healthz", "/metrics", "/jobs/{id}", "/jobs/{id}/fragment", "/v1/../../etc/passwd",
                       "/" + "a" * rng.randrange(1, 5000), "/v1/jobs?state=" + rng.choice(["x", "queued", "%ff", ""]),
                       "/v1/jobs?limit=" + rng.choice(["-1", "0", "1e9", "abc", "5"]),
                       "/v1/jobs/1/metrics?since=" + rng.choice(["-5", "x", "9" * 30])])
    return path.replace("{id}", rng.choice(ids))


def one_request(rng):
    method = rng.choice(["GET", "POST", "POST", "DELETE", "PUT", "PATCH", "OPTIONS", "BOGUS"])
    path = random_path(rng)
    headers = {"Host": "127.0.0.1"}
    body = b""
    if method in ("POST", "PUT", "PATCH"):
        if rng.random() < 0.7:
            path = "/v1/jobs" if rng.random() < 0.8 else "/v1/plan"
        body = invalid_body(rng)
        headers["Content-Type"] = rng.choice(["application/json"] * 4 + ["text/plain", "application/x-www-form-urlencoded"])
    if rng.random() < 0.1:
        headers["Authorization"] = rng.choice(["Bearer", "Bearer x", "Basic Zm9vOmJhcg==", "\u00e9" * 10])
    if rng.random() < 0.05:
        headers["X-Big"] = "y" * rng.randrange(1000, 20000)
    if rng.random() < 0.05:
        headers["Idempotency-Key"] = "k" * rng.randrange(1, 400)
    head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    head += f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    return method, path, head.encode("utf-8", "replace") + body


def send(port, data):
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    try:
        s.sendall(data)
    except OSError:
        pass  # the server may close early on an oversized body; its answer is still read
    chunks = []
    try:
        while True:
            c = s.recv(65536)
            if not c:
                break
            chunks.append(c)
            # Done once the body its Content-Length announces is in (the
            # server may keep the connection open for a while after).
            got = b"".join(chunks)
            if b"\r\n\r\n" in got:
                head, body = got.split(b"\r\n\r\n", 1)
                length = [int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
                if length and len(body) >= length[0]:
                    break
    except OSError:
        pass
    s.close()
    return b"".join(chunks)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tula", default=os.path.join(HERE, "..", "build", "src", "tula"))
    ap.add_argument("--requests", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "service_fuzz.jsonl"))
    args = ap.parse_args()
    git_state()  # the commit the run starts at, recorded in its row
    rng = random.Random(args.seed)
    tmp = tempfile.mkdtemp(prefix="tula-fuzz-")
    ready = os.path.join(tmp, "ready.json")
    server = subprocess.Popen([os.path.abspath(args.tula), "serve", "--listen", "127.0.0.1:0", "--db",
                               os.path.join(tmp, "jobs.db"), "--workdir", os.path.join(tmp, "work"), "--ready-file", ready,
                               "--max-running", "1"],
                              stdout=open(os.path.join(tmp, "server.log"), "w"), stderr=subprocess.STDOUT)
    problems, statuses = [], {}
    try:
        while not os.path.exists(ready):
            time.sleep(0.05)
        port, pid = json.load(open(ready))["port"], server.pid
        # One real job (cancelled at once) so that job ids exist.
        send(port, b"POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                   b"Connection: close\r\n\r\n%s" % (len(json.dumps(VALID)), json.dumps(VALID).encode()))
        send(port, b"POST /v1/jobs/1/cancel HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        for _ in range(200):  # warm the server's pools before the first reading
            send(port, b"GET /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        rss_before = rss_kib(pid)
        t0 = time.time()
        rss_along = []
        for i in range(args.requests):
            if i % 2500 == 0:
                rss_along.append([i, rss_kib(pid)])
            method, path, data = one_request(rng)
            answer = send(port, data)
            line = answer.split(b"\r\n", 1)[0]
            parts = line.split(b" ")
            if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.1") or not parts[1].isdigit():
                problems.append({"request": data[:200].decode("latin1"), "answer": answer[:200].decode("latin1")})
                continue
            status = int(parts[1])
            statuses[status] = statuses.get(status, 0) + 1
            head, _, body = answer.partition(b"\r\n\r\n")
            length = [int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
            body = body[: length[0]] if length else body
            if status >= 500 or status == 201:
                problems.append({"request": data[:300].decode("latin1"), "status": status, "body": body[:300].decode("latin1")})
            elif status >= 400 and method != "HEAD":
                try:
                    assert "error" in json.loads(body)
                except (ValueError, AssertionError):
                    problems.append({"request": data[:300].decode("latin1"), "status": status, "body": body[:300].decode("latin1")})
            if server.poll() is not None:
                problems.append({"request": data[:300].decode("latin1"), "crash": server.returncode})
                break
        elapsed = time.time() - t0
        rss_after = rss_kib(pid)
        health = send(port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").split(b"\r\n", 1)[0].decode()
        jobs = json.loads(send(port, b"GET /v1/jobs?limit=1000 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                          .split(b"\r\n\r\n", 1)[1])["jobs"]
        row = {"requests": args.requests, "seed": args.seed, "seconds": elapsed, "statuses": statuses,
               "problems": len(problems), "examples": problems[:5], "alive": server.poll() is None, "healthz": health,
               "jobs_in_store": len(jobs), "jobs_submitted_valid": 1, "rss_kib_before": rss_before,
               "rss_kib_after": rss_after, "rss_kib_along": rss_along,
               "created_by_fuzz": statuses.get(201, 0), "time": time.time(), **git_state()}
        with open(args.out, "a") as out:
            out.write(json.dumps(row) + "\n")
        print(json.dumps(row, indent=1))
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=300)


if __name__ == "__main__":
    main()
