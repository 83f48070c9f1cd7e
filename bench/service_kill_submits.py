#!/usr/bin/python3
"""`tula serve` SIGKILLed in the middle of concurrent submits: nothing answered is lost, no key maps to two jobs.

Each run starts a server on an empty store, sends --submits POST /v1/jobs at once from as many threads, each with
an Idempotency-Key of its own, and SIGKILLs the server after --kill-after of them have been answered (so the rest
are in flight or not yet sent). A new server then starts on the same store; every submit whose answer never came is
sent again with the same key (as a client that retries does). Then:

  lost       a job answered 201/200 before the kill that the store no longer has
  twice      a key whose answers (before and after the kill) name two ids, or a key with two jobs in the store
  extra      jobs in the store that no key's answer names

One row per run goes to --out; the exit status is 1 when any run lost a job, mapped a key twice or stored one no
answer names (CTest's service_kill_submits runs it once). Jobs are small and may fail to run (a build without
LibTorch is enough): only the submits are counted.

  bench/service_kill_submits.py --tula build-notorch/src/tula [--runs 3] [--submits 20] [--kill-after 8]
                                [--out bench/results/service_net/kill_submits.jsonl]
"""
import argparse
import http.client
import json
import os
import signal
import sys
import tempfile
import threading

from bench_common import append_row, git_state
from service_latency_ab import start

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = {"model": "small_cnn", "dataset": "synthetic", "synthetic_size": 512, "epochs": 1}


def submit(port, key):
    """The id the server answered for `key`, or None when no answer came."""
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        c.request("POST", "/v1/jobs", body=json.dumps(JOB),
                  headers={"Content-Type": "application/json", "Idempotency-Key": key})
        r = c.getresponse()
        body = json.loads(r.read() or b"{}")
        c.close()
        return body.get("id") if r.status in (200, 201) else None
    except (OSError, http.client.HTTPException, ValueError):
        return None


def all_jobs(port):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    jobs, path = [], "/v1/jobs?limit=1000"
    while path:
        c.request("GET", path)
        page = json.loads(c.getresponse().read())
        jobs += page["jobs"]
        path = page["next"]
    return jobs


def one_run(args, run, state):
    with tempfile.TemporaryDirectory(prefix="tula-kill-submits-") as tmp:
        proc, port = start(args.tula, tmp)
        keys = [f"run{run}-submit{i}-{os.getpid()}" for i in range(args.submits)]
        answered, lock, enough = {}, threading.Lock(), threading.Event()

        def send(key):
            got = submit(port, key)
            with lock:
                if got is not None:
                    answered[key] = got
                if len(answered) >= args.kill_after:
                    enough.set()

        threads = [threading.Thread(target=send, args=(k,)) for k in keys]
        for t in threads:
            t.start()
        enough.wait(timeout=60)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        for t in threads:
            t.join()
        with lock:
            before_kill = dict(answered)
        os.remove(os.path.join(tmp, "ready.json"))  # the killed server's: the new one writes its own
        proc, port = start(args.tula, tmp)
        try:
            after = {k: submit(port, k) for k in keys}  # every key again: a retry names its first job
            jobs = all_jobs(port)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=120)
        ids = [j["id"] for j in jobs]
        lost = sorted(i for i in before_kill.values() if i not in ids)
        twice = sorted(k for k in keys if k in before_kill and after[k] is not None and after[k] != before_kill[k])
        named = set(after.values()) | set(before_kill.values())
        extra = sorted(i for i in ids if i not in named)
        row = {"kind": "kill-submits", "run": run, "submits": args.submits, "answered_before_kill": len(before_kill),
               "in_store": len(ids), "answered_after": sum(v is not None for v in after.values()), "lost": lost,
               "twice": twice, "extra": extra, "distinct_ids": len(set(ids)) == len(ids), **state}
        append_row(args.out, row)
        return row


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tula", default=os.path.join(HERE, "..", "build", "src", "tula"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--submits", type=int, default=20)
    ap.add_argument("--kill-after", type=int, default=8)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "service_net", "kill_submits.jsonl"))
    args = ap.parse_args()
    args.tula = os.path.abspath(args.tula)
    state = git_state()
    failed = False
    for run in range(args.runs):
        row = one_run(args, run, state)
        print(json.dumps({k: row[k] for k in ("run", "answered_before_kill", "in_store", "answered_after", "lost",
                                              "twice", "extra", "distinct_ids")}))
        failed = failed or bool(row["lost"] or row["twice"] or row["extra"]) or not row["distinct_ids"]
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
