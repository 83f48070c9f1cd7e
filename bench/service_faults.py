#!/usr/bin/python3
"""Restart safety of `tula serve`, measured: SIGKILL the server again and again
while jobs are queued, profiling, planning and training (and right after a
submit or a cancel), restart it on the same store, and check at the end:

  lost      a submitted job missing from the store, or not final at the end
  twice     a job with two of its tune processes alive at once (an attempt
            that started before the previous one had ended: the store's
            attempts, ended_at of one <= started_at of the next), or a fresh
            (not resumed) start after an attempt that had written a report
            (work done would be done again)
  orphaned  a process of any job still alive after the final clean stop
            (its command line names the work directory)

Then a worker killed mid-training and a job's whole tune process killed
(each must end in a resume from the checkpoint), and two store faults: the database locked by another process (a 503 naming
the lock, no crash, integrity_check ok after), and the disk full (the store
on a tiny tmpfs: a 507, the server still answering, integrity_check ok after).

One JSON row per kill and a summary row per run go to --out.

  bench/service_faults.py [--kills 50] [--tula build/src/tula] [--out bench/results/service_faults.jsonl]
"""
import argparse
import http.client
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = {"model": "small_cnn", "dataset": "synthetic", "synthetic_size": 512, "pilot_steps": 6, "watch_every": 4}


class Server:
    def __init__(self, tula, db, work, extra=()):
        self.ready = os.path.join(os.path.dirname(db), "ready.json")
        if os.path.exists(self.ready):
            os.remove(self.ready)
        self.log = open(os.path.join(os.path.dirname(db), "server.log"), "a")
        self.proc = subprocess.Popen([tula, "serve", "--listen", "127.0.0.1:0", "--db", db, "--workdir", work,
                                      "--ready-file", self.ready, "--poll", "0.2", *extra],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 120
        while not os.path.exists(self.ready):
            if time.time() > deadline or self.proc.poll() is not None:
                raise RuntimeError("the server did not start; see " + self.log.name)
            time.sleep(0.02)
        self.port = json.load(open(self.ready))["port"]

    def call(self, method, path, body=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        conn.request(method, path, body=json.dumps(body) if body is not None else None,
                     headers={"Content-Type": "application/json"} if body is not None else {})
        r = conn.getresponse()
        data = r.read()
        conn.close()
        return r.status, (json.loads(data) if data else None)

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=300)


def states(server):
    _, body = server.call("GET", "/v1/jobs?limit=1000")
    return {j["id"]: j["state"] for j in body["jobs"]}


def kill_loop(args, rng, out):
    tmp = tempfile.mkdtemp(prefix="tula-faults-")
    db, work = os.path.join(tmp, "jobs.db"), os.path.join(tmp, "work")
    server = Server(args.tula, db, work, ("--max-running", "2"))
    submitted, cancelled, kills = [], [], 0
    by_state, by_moment = {}, {}
    try:
        while kills < args.kills:
            now = states(server)
            waiting = sum(1 for s in now.values() if s in ("queued", "profiling", "planning", "training"))
            moment = "random"
            if waiting < 4:
                status, job = server.call("POST", "/v1/jobs", dict(JOB, epochs=rng.choice([2, 3, 4])))
                assert status == 201, job
                submitted.append(job["id"])
                moment = "after a submit"
            elif rng.random() < 0.1:
                running = [i for i, s in now.items() if s in ("queued", "profiling", "planning", "training")]
                victim = rng.choice(running)
                server.call("POST", f"/v1/jobs/{victim}/cancel")
                cancelled.append(victim)
                moment = "after a cancel"
            if moment == "random":
                time.sleep(rng.uniform(0, 6))
            seen = states(server)
            server.kill()
            kills += 1
            by_moment[moment] = by_moment.get(moment, 0) + 1
            for s in set(seen.values()):
                by_state[s] = by_state.get(s, 0) + 1
            row = {"kind": "kill", "run": os.path.basename(tmp), "kill": kills, "moment": moment,
                   "states": {str(k): v for k, v in seen.items()}, "time": time.time()}
            out.write(json.dumps(row) + "\n")
            out.flush()
            server = Server(args.tula, db, work, ("--max-running", "2"))
        deadline = time.time() + args.settle
        while any(s not in ("succeeded", "failed", "cancelled") for s in states(server).values()):
            if time.time() > deadline:
                break
            time.sleep(1)
        final = states(server)
        details = {i: server.call("GET", f"/v1/jobs/{i}")[1] for i in submitted}
        exit_code = server.stop()
        orphans = []
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    if work.encode() in open(f"/proc/{pid}/cmdline", "rb").read():
                        orphans.append(int(pid))
                except OSError:
                    pass
        lost = [i for i in submitted if final.get(i) not in ("succeeded", "failed", "cancelled")]
        twice = []
        for i, d in details.items():
            a = d["attempts"]
            for prev, nxt in zip(a, a[1:]):
                if prev["ended_at"] is None or prev["ended_at"] > nxt["started_at"]:
                    twice.append(i)
            for prev, nxt in zip(a, a[1:]):
                # A fresh start is a second run unless nothing came of the one
                # before (no report: killed during its profile, or before it started).
                if not nxt["resumed"] and not (prev["outcome"] or "").startswith(("ended without a report", "not started",
                                                                                 "could not start")):
                    twice.append(i)
        summary = {"kind": "kill-summary", "run": os.path.basename(tmp), "kills": kills, "kills_by_state_present": by_state, "kills_by_moment": by_moment,
                   "jobs": len(submitted),
                   "final": {s: sum(1 for v in final.values() if v == s) for s in set(final.values())},
                   "cancel_requests": len(cancelled), "lost": len(lost), "run_twice": len(sorted(set(twice))),
                   "orphaned_processes": len(orphans), "fresh_starts_over_one": sum(
                       1 for d in details.values() if sum(1 for x in d["attempts"] if not x["resumed"]) > 1),
                   "attempts": sum(len(d["attempts"]) for d in details.values()),
                   "attempts_without_process": sum(1 for d in details.values() for x in d["attempts"] if x["pid"] is None),
                   "resumed_attempts": sum(1 for d in details.values() for x in d["attempts"] if x["resumed"]),
                   "server_exit_on_sigterm": exit_code, "time": time.time()}
        out.write(json.dumps(summary) + "\n")
        out.flush()
        print(json.dumps(summary, indent=1))
    finally:
        if server.proc.poll() is None:
            server.kill()
        shutil.rmtree(tmp, ignore_errors=True)


def session_processes(session):
    """(pid, command line) of every process in a session."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = open(f"/proc/{pid}/stat").read()
            if int(stat[stat.rfind(")") + 2:].split()[3]) == session:
                found.append((int(pid), open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode()))
        except (OSError, ValueError, IndexError):
            pass
    return found


def process_faults(args, out):
    """A worker killed mid-training, then a job's whole tune process killed."""
    tmp = tempfile.mkdtemp(prefix="tula-faults-proc-")
    work = os.path.join(tmp, "work")
    server = Server(args.tula, os.path.join(tmp, "jobs.db"), work)
    try:
        for victim in ("worker", "tune process and its workers"):
            _, job = server.call("POST", "/v1/jobs", dict(JOB, synthetic_size=4096, epochs=6))
            jid, jdir = job["id"], os.path.join(work, "jobs", str(job["id"]))
            checkpoint = os.path.join(jdir, "checkpoints", "latest.pt")
            deadline = time.time() + 600
            while not (server.call("GET", f"/v1/jobs/{jid}")[1]["state"] == "training" and os.path.exists(checkpoint)):
                assert time.time() < deadline, f"job {jid} never trained with a checkpoint"
                time.sleep(0.5)
            tune = int(open(os.path.join(work, "jobs", f"{jid}.lock")).read())
            workers = [p for p, cmd in session_processes(tune) if " train " in cmd]
            targets = workers[:1] if victim == "worker" else [p for p, _ in session_processes(tune)]
            for p in targets:
                os.kill(p, signal.SIGKILL)
            t_kill = time.time()
            while server.call("GET", f"/v1/jobs/{jid}")[1]["state"] not in ("succeeded", "failed", "cancelled"):
                assert time.time() < deadline + 600, f"job {jid} never ended"
                time.sleep(0.5)
            detail = server.call("GET", f"/v1/jobs/{jid}")[1]
            report = json.load(open(os.path.join(jdir, "report.json")))
            row = {"kind": "killed " + victim, "killed_pids": len(targets), "state": detail["state"],
                   "reason": detail["reason"], "attempts": [{k: a[k] for k in ("resumed", "outcome")} for a in detail["attempts"]],
                   "tune_retries": report["measured"]["retries"], "launches": len(report.get("segments", [])),
                   "seconds_to_end_after_kill": time.time() - t_kill, "time": time.time()}
            out.write(json.dumps(row) + "\n")
            out.flush()
            print(json.dumps(row))
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def store_faults(args, out):
    # The database locked by another process.
    tmp = tempfile.mkdtemp(prefix="tula-faults-lock-")
    db = os.path.join(tmp, "jobs.db")
    server = Server(args.tula, db, os.path.join(tmp, "work"))
    try:
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        t0 = time.time()
        status, body = server.call("POST", "/v1/jobs", dict(JOB, epochs=1))
        waited = time.time() - t0
        holder.execute("ROLLBACK")
        holder.close()
        after, _ = server.call("GET", "/healthz")
        ok = sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone()[0]
        row = {"kind": "database-locked", "status": status, "message": body["error"]["message"], "waited_s": waited,
               "healthz_after": after, "integrity_check": ok, "time": time.time()}
        out.write(json.dumps(row) + "\n")
        print(json.dumps(row))
        server.call("POST", "/v1/jobs/1/cancel") if status == 201 else None
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    # The disk full: the store and the jobs on a 4 MiB tmpfs.
    mnt = tempfile.mkdtemp(prefix="tula-faults-full-")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mnt]).returncode != 0:
        out.write(json.dumps({"kind": "disk-full", "skipped": "cannot mount a tmpfs (not root?)"}) + "\n")
        return
    try:
        db = os.path.join(mnt, "jobs.db")
        server = Server(args.tula, db, os.path.join(mnt, "work"), ("--max-running", "1"))
        server.call("POST", "/v1/jobs/0/cancel")
        first, job = server.call("POST", "/v1/jobs", dict(JOB, epochs=1, lr=0.01))
        server.call("POST", f"/v1/jobs/{job['id']}/cancel")
        filler = os.path.join(mnt, "filler")
        subprocess.run(["dd", "if=/dev/zero", "of=" + filler, "bs=64k"], stderr=subprocess.DEVNULL)
        codes = []
        for i in range(20):  # until a write needs a page SQLite does not have
            status, body = server.call("POST", "/v1/jobs", dict(JOB, epochs=1, seed=i, watch_every_seconds=30 + i))
            codes.append(status)
            if status != 201:
                break
        health, _ = server.call("GET", "/healthz")
        os.remove(filler)
        integrity = sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone()[0]
        kept, body2 = server.call("GET", f"/v1/jobs/{job['id']}")
        row = {"kind": "disk-full", "statuses": codes, "message": body["error"]["message"] if body and "error" in body else None,
               "healthz_while_full": health, "integrity_check": integrity, "earlier_job_kept": kept == 200,
               "time": time.time()}
        out.write(json.dumps(row) + "\n")
        print(json.dumps(row))
        server.stop()
    finally:
        subprocess.run(["umount", "-l", mnt])
        shutil.rmtree(mnt, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tula", default=os.path.join(HERE, "..", "build", "src", "tula"))
    ap.add_argument("--kills", type=int, default=50)
    ap.add_argument("--settle", type=float, default=900, help="seconds for every job to end after the last kill")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-kills", action="store_true")
    ap.add_argument("--skip-processes", action="store_true")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "service_faults.jsonl"))
    args = ap.parse_args()
    args.tula = os.path.abspath(args.tula)
    with open(args.out, "a") as out:
        if not args.skip_kills:
            kill_loop(args, random.Random(args.seed), out)
        if not args.skip_processes:
            process_faults(args, out)
        store_faults(args, out)


if __name__ == "__main__":
    main()
