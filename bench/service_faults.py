#!/usr/bin/python3
"""Restart safety of `tula serve`, measured (python3, stdlib only; run as root
for the disk-full part, which mounts a tmpfs).

    bench/service_faults.py                 # everything: 60 kills, worker kills, clean restarts, store faults
    bench/service_faults.py --kills 90 --seed 1
    bench/service_faults.py --quick         # smoke run: 9 kills, small jobs, rows to /tmp
    bench/service_faults.py --parts store   # only some parts: kills, worker, restarts, store

The binary (--tula, default build/src/tula) is copied into the run's temporary
directory first, so a rebuild while this runs changes nothing; its sha256 is in
every summary row. Rows go to --out (JSON lines, appended); a part whose summary
row (same kind and run id; the run id names the part, the seed and the number
of kills) is there already is skipped, so the script resumes. --force runs it
again.

1. Kill loop. A server (--max-running 2) gets a stream of small synthetic jobs
   (small_cnn, 512 samples, 2-4 epochs, a 6-step pilot), always with an
   Idempotency-Key. The server is SIGKILLed again and again at moments chosen
   round robin so that every kind gets its share:
     queued / profiling / planning / training   a job is in that state (the
                                                store's state, read by the GET
                                                just before the kill)
     after-submit    right after a 201
     after-cancel    right after a cancel's 202 (the cancels of the run)
     during-submit   while a POST is in flight (its answer may never come: the
                     same request is sent again, same key, after the restart)
     after-restart   as soon as the restarted server wrote its ready file
                     (it has re-adopted or resumed jobs and starts the queue)
     during-stop     a SIGTERM, then a SIGKILL while the server waits for its
                     jobs to checkpoint (they are then resumed: this is what
                     exercises `tula tune --resume` from the server)
   After each kill the server is restarted on the same store and work
   directory (a new port, read from --ready-file). One row per kill holds the
   state of every job at that moment. Then every job is let finish (--settle
   seconds), the server is stopped with SIGTERM, and the run is checked:

   lost       a job that was answered with 201/200 (or whose key was) is
              missing from the store or not final (succeeded, failed or
              cancelled) at the end; also counted: a key that gave two ids.
   run twice  a job for which two of its tune processes ran at once, or which
              was started from scratch again after it had done durable work.
              Precisely, any of:
              (a) overlap in the store: for two consecutive attempts A, B of a
                  job that started a process (outcome not "not started" /
                  "could not start"), A.ended_at is null or A.ended_at >
                  B.started_at. The server writes ended_at only after it saw
                  the job's lock free (every process of the job holds it), or
                  after stop() waited for the lock, so A.ended_at <=
                  B.started_at proves A's processes had all ended when B
                  began.
              (b) overlap observed: a sampler reads /proc every 0.25 s; two
                  live `tula tune` session leaders for the same job directory
                  in one sample. (A tune process is the leader of its own
                  session; its forked children are not, so a child caught
                  between fork and exec is not counted.)
              (c) redo: a fresh (not --resume) attempt after an attempt whose
                  outcome names a report state. report.json is only written
                  together with tune.json (save_state), and tune.json is the
                  job's durable progress; a fresh start after it would redo the
                  profile (tune itself refuses to start fresh over tune.json,
                  so this would show as a failed job).
              (d) a job's log shows tune refusing a fresh start over an
                  existing tune.json ("already holds a tune job").
              Not counted: a second fresh attempt after attempts that left no
              report (the server was killed between recording an attempt and
              forking, or the tune process was stopped right after its exec,
              before its first save): nothing durable was done, so "a succeeded
              job has exactly one non-resumed attempt" is not an invariant of
              this design. Such jobs are listed in
              succeeded_with_more_than_one_fresh_start with the earlier
              attempts' outcomes; the run fails if any of those named a report.
   orphaned   after the final clean stop: a process whose session id is the
              pid of any tune process seen (attempt pids and sampler), or
              whose command line names the work directory, or that has a job's
              lock file open (`tula launch` puts each worker in a session of
              its own, so workers are found by the last two); and job lock
              files still held (flock LOCK_EX|LOCK_NB fails).
   Also: server crashes (an exit we did not cause), attempts never closed,
   the store's integrity_check.

2. A `tula train` worker SIGKILLed mid-training (synthetic 4096 samples, 6
   epochs, started at 2 workers x 64 without re-planning, so that training
   lasts 192 steps; with the planner's choice it is one step per epoch):
   once the job trains and has written a checkpoint during training, one
   worker of the job (found by its command line) is killed. The job must still succeed, with the
   tune runner's relaunch ("a worker died" note, retries >= 1, a segment that
   ended "worker died") resuming from the checkpoint: the first step of the
   next launch is the checkpoint's step + 1, not 1, and its log says
   "resuming from". Then the same with the whole tune session killed: the
   server must resume the job (a second, resumed attempt).

3. Clean restarts: one long job (4096 samples, 20 epochs at 2 x 64) while
   the server is stopped with SIGTERM and started again --restarts times
   (default 7), each time while the job trains and once it has made 8 steps
   since the previous stop. SIGTERM is documented as
   "jobs checkpoint and resume at the next start": the job must succeed.

4. Store faults. (a) Another process holds `BEGIN EXCLUSIVE` on the database
   for 8 s while a job is POSTed: a 503 JSON error naming the lock within the
   5 s busy timeout (plus slack), the server still answering, a submit working
   after the release, integrity_check ok. (b) The same lock held while a
   running job's tune process ends: the job must still reach its final state
   once the lock is released (the supervisor says it retries at the next
   tick). (c) The database and work directory on a 2 MiB tmpfs, filled with a
   file: POSTs until one fails, expected 507 with a JSON error, the server
   still answering; after freeing the space integrity_check ok, the job
   submitted before still there with the same history, and the jobs submitted
   while full end in a final state after a cancel.
"""
import argparse
import errno
import fcntl
import hashlib
import http.client
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

from bench_common import append_row, git_state

HERE = os.path.dirname(os.path.abspath(__file__))
FINAL = ("succeeded", "failed", "cancelled")
RUNNING = ("profiling", "planning", "training")
JOB = {"model": "small_cnn", "dataset": "synthetic", "synthetic_size": 512, "pilot_steps": 6, "watch_every": 4}
MOMENTS = ["queued", "profiling", "planning", "training", "after-submit", "after-cancel", "during-submit",
           "after-restart", "during-stop"]
NEVER_RAN = ("not started", "could not start")
NO_REPORT = ("ended without a report",) + NEVER_RAN
REPORT_STATES = ("succeeded", "failed", "stopped", "running")


def log(*a):
    print(time.strftime("%H:%M:%S"), *a, flush=True)


# ---- results file ----------------------------------------------------------

def rows(out):
    if not os.path.exists(out):
        return []
    found = []
    with open(out) as f:
        for line in f:
            try:
                found.append(json.loads(line))
            except ValueError:
                pass
    return found


def done(out, kind, run):
    return any(r.get("kind") == kind and r.get("run") == run for r in rows(out))


# ---- processes ---------------------------------------------------------------

def proc(pid):
    """(state, ppid, session, argv) of a process, None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
        rest = stat[stat.rfind(")") + 2:].split()
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = [a.decode(errors="replace") for a in f.read().split(b"\0")[:-1]]
        return rest[0], int(rest[1]), int(rest[3]), argv
    except (OSError, ValueError, IndexError):
        return None


def processes():
    for name in os.listdir("/proc"):
        if name.isdigit():
            p = proc(int(name))
            if p:
                yield int(name), p


def tune_job(argv, work):
    """The job id a `tula tune` command line runs (--out or --resume W/jobs/N), else None."""
    if len(argv) < 2 or argv[1] != "tune":
        return None
    for flag in ("--out", "--resume"):
        if flag in argv[:-1]:
            path = argv[argv.index(flag) + 1]
            prefix = os.path.join(work, "jobs") + "/"
            if path.startswith(prefix) and path[len(prefix):].isdigit():
                return int(path[len(prefix):])
    return None


def job_processes(work, sessions=()):
    """Live processes of jobs in `work`: their session is a known tune pid or their command line names `work`."""
    me = os.getpid()
    found = []
    for pid, (state, ppid, sid, argv) in processes():
        if pid == me:
            continue
        if sid in sessions or any(work in a for a in argv):
            found.append({"pid": pid, "state": state, "session": sid, "cmd": " ".join(argv)[:200]})
    return found


def job_workers(work, job_id):
    """Live `tula train` workers of a job (the launcher gives each its own session; found by command line)."""
    mark = os.path.join(work, "jobs", str(job_id)) + "/"
    return [pid for pid, (st, _, _, argv) in processes()
            if st != "Z" and len(argv) > 1 and argv[1] == "train" and any(a.startswith(mark) for a in argv)]


def lock_holders(work):
    """Processes with a job's lock file open (every process of a job inherits it as fd 3)."""
    jobs = os.path.join(work, "jobs") + "/"
    found = []
    for pid, (st, _, sid, argv) in processes():
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith(jobs) and target.endswith(".lock"):
                found.append({"pid": pid, "state": st, "lock": os.path.basename(target), "cmd": " ".join(argv)[:200]})
                break
    return found


def session_alive(sid):
    return any(s == sid and st != "Z" for _, (st, _, s, _) in processes())


def kill_pids(pids):
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass


def session_of_job(work, job_id):
    """The live tune session leader of a job, with the processes of its session."""
    for pid, (state, ppid, sid, argv) in processes():
        if state != "Z" and sid == pid and tune_job(argv, work) == job_id:
            members = [(p, a) for p, (st, _, s, a) in processes() if s == pid and st != "Z"]
            return pid, members
    return None, []


class Sampler(threading.Thread):
    """Every 0.25 s: the live `tula tune` session leaders per job (two at once for a job is a double run)."""

    def __init__(self, work):
        super().__init__(daemon=True)
        self.work, self.stop_flag = work, threading.Event()
        self.seen = {}  # tune pid -> {"job", "resume", "first", "last"}
        self.overlaps = []
        self.samples = 0
        self.lock = threading.Lock()

    def run(self):
        while not self.stop_flag.is_set():
            now = time.time()
            live = {}
            for pid, (state, ppid, sid, argv) in processes():
                if state == "Z" or sid != pid:
                    continue
                job = tune_job(argv, self.work)
                if job is None:
                    continue
                live.setdefault(job, []).append(pid)
                with self.lock:
                    s = self.seen.setdefault(pid, {"job": job, "resume": "--resume" in argv, "first": now})
                    s["last"] = now
            with self.lock:
                self.samples += 1
                for job, pids in live.items():
                    if len(pids) > 1:
                        self.overlaps.append({"job": job, "pids": pids, "time": now})
            self.stop_flag.wait(0.25)

    def last_seen(self):
        with self.lock:
            return max((s["last"] for s in self.seen.values()), default=0.0)

    def stop(self):
        self.stop_flag.set()
        self.join(timeout=10)


# ---- the server ------------------------------------------------------------------

class Server:
    def __init__(self, tula, db, work, extra=(), tag="", base=None):
        base = base or os.path.dirname(work)
        self.ready = os.path.join(base, "ready.json")
        if os.path.exists(self.ready):
            os.remove(self.ready)
        self.log_path = os.path.join(base, "server.log")
        with open(self.log_path, "a") as logf:
            logf.write(f"\n==== start {tag} {time.strftime('%H:%M:%S')} ====\n")
            logf.flush()
            t0 = time.time()
            self.proc = subprocess.Popen([tula, "serve", "--listen", "127.0.0.1:0", "--db", db, "--workdir", work,
                                          "--ready-file", self.ready, "--poll", "0.2", *extra],
                                         stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.time() + 300
        while not os.path.exists(self.ready):
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with {self.proc.returncode} before it was ready; see {self.log_path}")
            if time.time() > deadline:
                self.kill()
                raise RuntimeError("the server was not ready within 300 s; see " + self.log_path)
            time.sleep(0.01)
        ready = json.load(open(self.ready))
        self.port, self.pid = ready["port"], ready["pid"]
        self.started = t0
        self.ready_s = time.time() - t0
        assert self.pid == self.proc.pid, (self.pid, self.proc.pid)

    def call(self, method, path, body=None, headers=None, timeout=120):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            h = dict(headers or {})
            if body is not None:
                h["Content-Type"] = "application/json"
            conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=h)
            r = conn.getresponse()
            data = r.read()
            try:
                parsed = json.loads(data) if data else None
            except ValueError:
                parsed = {"raw": data[:200].decode(errors="replace")}
            return r.status, parsed, dict(r.getheaders())
        finally:
            conn.close()

    def get(self, path, timeout=120):
        status, body, _ = self.call("GET", path, timeout=timeout)
        if status != 200:
            raise RuntimeError(f"GET {path}: {status} {body}")
        return body

    def states(self):
        return {j["id"]: j["state"] for j in self.get("/v1/jobs?limit=1000")["jobs"]}

    def alive(self):
        return self.proc.poll() is None

    def kill(self):
        if self.alive():
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self, timeout=600):
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return "killed after %d s" % timeout

    def log_tail(self, n=5):
        try:
            return open(self.log_path, errors="replace").read().splitlines()[-n:]
        except OSError:
            return []


def wait_final(server, ids, timeout, poll=1.0):
    deadline = time.time() + timeout
    while True:
        states = server.states()
        if all(states.get(i) in FINAL for i in ids) or time.time() > deadline:
            return states
        time.sleep(poll)


def sqlite_check(db):
    c = sqlite3.connect(db, timeout=30)
    try:
        return c.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        c.close()


HOLDER = r"""
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=0)
c.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
limit = time.time() + float(sys.argv[2])
if sys.argv[3] == "stdin":
    sys.stdin.readline()
else:
    time.sleep(max(0.0, limit - time.time()))
c.execute("ROLLBACK")
c.close()
print("released", flush=True)
"""


def hold_db(db, seconds, until_stdin=False):
    p = subprocess.Popen([sys.executable, "-c", HOLDER, db, str(seconds), "stdin" if until_stdin else "sleep"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline().strip()
    if line != "locked":
        p.kill()
        p.wait()
        raise RuntimeError("could not lock the database: " + line)
    return p


# ---- context ---------------------------------------------------------------------

class Run:
    """A temporary directory with its own copy of the binary; cleans up its processes."""

    def __init__(self, args, prefix):
        self.args = args
        self.tmp = tempfile.mkdtemp(prefix=prefix)
        os.makedirs(os.path.join(self.tmp, "bin"))
        self.tula = os.path.join(self.tmp, "bin", "tula")
        shutil.copy2(args.tula, self.tula)
        self.db, self.work = os.path.join(self.tmp, "jobs.db"), os.path.join(self.tmp, "work")
        self.servers = []
        self.sessions = set()
        self.failed = False

    def server(self, extra=(), tag="", db=None, work=None):
        s = Server(self.tula, db or self.db, work or self.work, extra, tag, base=self.tmp)
        self.servers.append(s)
        return s

    def cleanup(self):
        for s in self.servers:
            if s.alive():
                s.kill()
        left = job_processes(self.tmp, self.sessions)
        kill_pids([p["pid"] for p in left if p["state"] != "Z"])
        if self.args.keep or self.failed:
            log("kept", self.tmp)
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)
        return left


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def commit_fields():
    """The checkout's commit (short, as the first rows hold it) and whether its sources differ from it."""
    state = git_state(short=True)
    return {"git_head": state["commit"], "dirty": state["dirty"]}


def provenance(args):
    return {"tula_sha256": args.tula_sha, **commit_fields(), "command": " ".join([os.path.relpath(sys.argv[0])] + sys.argv[1:]),
            "quick": args.quick, "seed": args.seed}


# ---- 1. the kill loop ------------------------------------------------------------

def kill_loop(args, out):
    run_id = f"kills{args.kills}-seed{args.seed}" + ("-quick" if args.quick else "")
    if done(out, "kill-summary", run_id) and not args.force:
        log(f"kill loop {run_id}: recorded already in {out}; skipped (--force runs it again)")
        return True
    session = time.strftime("%Y%m%dT%H%M%S")
    rng = random.Random(args.seed)
    r = Run(args, "tula-faults-kills-")
    sampler = Sampler(r.work)
    sampler.start()
    keys = {}  # idempotency key -> {"body", "id", "answered": status list}
    cancels = []
    counts = {m: 0 for m in MOMENTS}
    missed = {m: 0 for m in MOMENTS}
    with_state = {}
    kills, crashes, restarts, submit_errors, ready_s = 0, [], 0, [], []
    n_key = [0]
    server = None

    def new_key():
        n_key[0] += 1
        return f"{run_id}-{session}-{n_key[0]}"

    def body():
        return dict(JOB, epochs=rng.choice([2, 3, 4]))

    def submit(srv, key):
        status, b, _ = srv.call("POST", "/v1/jobs", keys[key]["body"], {"Idempotency-Key": key})
        keys[key]["answers"].append(status)
        if status in (200, 201):
            if keys[key]["id"] is not None and keys[key]["id"] != b["id"]:
                keys[key]["second_id"] = b["id"]
            keys[key]["id"] = b["id"]
        else:
            submit_errors.append({"key": key, "status": status, "body": b})
        return status, b

    def restart(tag):
        nonlocal server, restarts
        for attempt in range(3):
            try:
                server = r.server(("--max-running", "2"), tag)
                break
            except RuntimeError as e:  # it died or hung while starting: a crash, and try again
                crashes.append({"during": "start " + tag, "error": str(e), "log": r.servers[-1].log_tail() if r.servers else []})
                log("the server did not start:", e)
                if attempt == 2:
                    raise
        restarts += 1
        ready_s.append(server.ready_s)
        for key, k in keys.items():  # submits whose answer was lost with the server
            if k["id"] is None:
                submit(server, key)

    def top_up(srv, states, want):
        live = sum(1 for s in states.values() if s not in FINAL)
        for _ in range(max(0, want - live)):
            key = new_key()
            keys[key] = {"body": body(), "id": None, "answers": []}
            submit(srv, key)

    def wait_for(srv, cond, timeout):
        """The last GET's states once cond(states) holds; None at the timeout."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            states = srv.states()
            if cond(states):
                return states
            top_up(srv, states, args.inflight)
            time.sleep(rng.uniform(0.02, 0.12))
        return None

    try:
        restart("first")
        while kills < args.kills:
            if not server.alive():  # it exited by itself
                crashes.append({"exit": server.proc.returncode, "log": server.log_tail()})
                restart("after a crash")
                continue
            open_moments = [m for m in MOMENTS if missed[m] < 3  # one missed 3 times in a row is given up
                            and (m != "after-restart" or time.time() - server.started < 2.0)]
            least = min(counts[m] for m in open_moments)
            moment = rng.choice([m for m in open_moments if counts[m] == least])
            detail = {}
            try:
                seen = None
                if moment == "after-restart":
                    # The server was restarted right after the previous kill and
                    # nothing was asked of it since: kill it as soon as it answers.
                    seen = server.states()
                    server.kill()
                    detail = {"ready_s": round(server.ready_s, 3),
                              "killed_s_after_start": round(time.time() - server.started, 3)}
                else:
                    top_up(server, server.states(), args.inflight if moment != "queued" else args.inflight + 1)
                if moment in ("queued",) + RUNNING:
                    seen = wait_for(server, lambda st: moment in st.values(), args.state_timeout)
                    if seen is None:
                        missed[moment] += 1
                        log(f"no job {moment} within {args.state_timeout} s; trying another moment")
                        continue
                    missed[moment] = 0
                    server.kill()
                elif moment == "after-submit":
                    seen = server.states()
                    key = new_key()
                    keys[key] = {"body": body(), "id": None, "answers": []}
                    status, b = submit(server, key)
                    server.kill()
                    if status in (200, 201):
                        seen[b["id"]] = b["state"]
                    detail = {"submitted": keys[key]["id"], "status": status}
                elif moment == "after-cancel":
                    seen = wait_for(server, lambda st: any(s not in FINAL for s in st.values()), args.state_timeout)
                    if seen is None:
                        continue
                    victim = rng.choice(sorted(i for i, s in seen.items() if s not in FINAL))
                    status, b, _ = server.call("POST", f"/v1/jobs/{victim}/cancel")
                    server.kill()
                    cancels.append({"id": victim, "state": seen[victim], "status": status})
                    detail = {"cancelled": victim, "its_state": seen[victim], "status": status}
                elif moment == "during-submit":
                    seen = server.states()
                    key = new_key()
                    keys[key] = {"body": body(), "id": None, "answers": []}
                    result = {}

                    def post(srv=server, key=key):
                        try:
                            result["status"] = submit(srv, key)[0]
                        except Exception as e:  # the server died under it
                            result["error"] = type(e).__name__

                    t = threading.Thread(target=post)
                    t.start()
                    time.sleep(rng.uniform(0.0, 0.004))
                    server.kill()
                    t.join(timeout=130)
                    detail = {"key": key, "answered": result.get("status"), "error": result.get("error")}
                elif moment == "during-stop":
                    # Jobs that run, under a server up for a few seconds (so that
                    # their tune processes are past their start), then SIGTERM and
                    # a SIGKILL while the server waits for them to checkpoint.
                    up = rng.uniform(2.0, 8.0)
                    seen = wait_for(server, lambda st: any(s in RUNNING for s in st.values())
                                    and time.time() - server.started > up, args.state_timeout)
                    if seen is None:
                        continue
                    server.proc.send_signal(signal.SIGTERM)
                    time.sleep(rng.uniform(0.0, 0.3))
                    if not server.alive():
                        detail = {"stopped_cleanly_before_the_kill": True, "exit": server.proc.returncode}
                        log("during-stop: the server had stopped already; not a kill")
                        restart("after a clean stop")
                        continue
                    server.kill()
            except (OSError, http.client.HTTPException, RuntimeError) as e:
                if server.alive():
                    raise
                crashes.append({"exit": server.proc.returncode, "during": moment, "error": repr(e), "log": server.log_tail()})
                log(f"the server died by itself ({server.proc.returncode}) during {moment}: {e!r}")
                restart("after a crash")
                continue
            kills += 1
            counts[moment] += 1
            for s in set(seen.values()):
                with_state[s] = with_state.get(s, 0) + 1
            row = {"kind": "kill", "run": run_id, "session": session, "kill": kills, "moment": moment,
                   "states": {str(k): v for k, v in sorted(seen.items())},
                   "by_state": {s: sum(1 for v in seen.values() if v == s) for s in sorted(set(seen.values()))},
                   "server_uptime_s": round(time.time() - server.started, 3), "detail": detail, "time": time.time(),
                   **commit_fields()}
            append_row(out, row)
            log(f"kill {kills}/{args.kills} {moment}: {row['by_state']}")
            restart(f"after kill {kills}")

        # Let every job end.
        ids = sorted({k["id"] for k in keys.values() if k["id"] is not None})
        log(f"{kills} kills done; waiting up to {args.settle:.0f} s for {len(ids)} jobs to end")
        deadline, last_change, last_states = time.time() + args.settle, time.time(), None
        stuck = False
        while True:
            if not server.alive():
                crashes.append({"exit": server.proc.returncode, "during": "settle", "log": server.log_tail()})
                restart("after a crash while settling")
            states = server.states()
            if states != last_states:
                last_states, last_change = states, time.time()
            if all(states.get(i) in FINAL for i in ids) or time.time() > deadline:
                break
            quiet = time.time() - max(last_change, sampler.last_seen())
            if quiet > args.stuck_after:
                stuck = True
                log(f"no state change and no tune process for {quiet:.0f} s: stuck")
                break
            time.sleep(1)
        details = {i: server.get(f"/v1/jobs/{i}") for i in ids if i in states}
        store_ids = sorted(states)
        exit_code = server.stop()
        time.sleep(1)
        sampler.stop()

        # Checks.
        final = {i: states.get(i) for i in ids}
        lost = [i for i in ids if final[i] not in FINAL]
        unanswered_keys = [k for k, v in keys.items() if v["id"] is None]
        two_ids = [k for k, v in keys.items() if "second_id" in v]
        extra_jobs = [i for i in store_ids if i not in ids]
        twice = {}
        fresh_over_one, succeeded_fresh_ne_1, never_closed = [], [], []
        tune_pids = {p for p in sampler.seen}
        for i, d in details.items():
            attempts = d["attempts"]
            for a in attempts:
                if a["pid"]:
                    tune_pids.add(a["pid"])
                if a["ended_at"] is None and d["state"] in FINAL:
                    never_closed.append(i)
            ran = [a for a in attempts if not (a["outcome"] or "").startswith(NEVER_RAN)]
            for a, b in zip(ran, ran[1:]):
                if a["ended_at"] is None or a["ended_at"] > b["started_at"]:
                    twice.setdefault(i, []).append(f"(a) attempt started at {b['started_at']:.3f} before the one before "
                                                   f"ended ({a['ended_at']})")
            for k, b in enumerate(attempts):
                if not b["resumed"] and any((a["outcome"] or "").startswith(REPORT_STATES) for a in attempts[:k]):
                    twice.setdefault(i, []).append(f"(c) fresh attempt {k + 1} after an attempt with a report")
            if sum(1 for a in attempts if not a["resumed"]) > 1:
                fresh_over_one.append({"id": i, "attempts": [{k: a[k] for k in ("resumed", "pid", "outcome")} for a in attempts]})
            fresh_ran = [a for a in attempts if not a["resumed"] and (a["pid"] or not (a["outcome"] or "").startswith(NO_REPORT))]
            if d["state"] == "succeeded" and len(fresh_ran) != 1:
                # Legitimate only when every fresh attempt before the last ended without a report.
                earlier = [a["outcome"] for a in fresh_ran[:-1]]
                succeeded_fresh_ne_1.append({"id": i, "fresh_attempts_that_ran": len(fresh_ran), "earlier_outcomes": earlier,
                                             "all_earlier_without_report": all((o or "").startswith(NO_REPORT) for o in earlier)})
            job_log = os.path.join(r.work, "jobs", f"{i}.log")
            if os.path.exists(job_log) and "already holds a tune job" in open(job_log, errors="replace").read():
                twice.setdefault(i, []).append("(d) tune refused a fresh start over its tune.json (job log)")
        for o in sampler.overlaps:
            twice.setdefault(o["job"], []).append(f"(b) tune pids {o['pids']} alive at once at {o['time']:.3f}")
        unrecorded = sorted(p for p, s in sampler.seen.items()
                            if p not in {a["pid"] for d in details.values() for a in d["attempts"]})
        r.sessions |= tune_pids
        orphans = job_processes(r.work, tune_pids)
        holders = lock_holders(r.work)
        orphans += [h for h in holders if h["pid"] not in {o["pid"] for o in orphans}]
        held = []
        for name in sorted(os.listdir(os.path.join(r.work, "jobs"))):
            if name.endswith(".lock"):
                with open(os.path.join(r.work, "jobs", name)) as f:
                    try:
                        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except OSError:
                        held.append(name)
        integrity = sqlite_check(r.db)
        c = sqlite3.connect(r.db)
        attempts_total = c.execute("SELECT COUNT(*) FROM attempts").fetchone()[0]
        resumed_total = c.execute("SELECT COUNT(*) FROM attempts WHERE resumed = 1").fetchone()[0]
        no_pid = c.execute("SELECT COUNT(*) FROM attempts WHERE pid IS NULL").fetchone()[0]
        c.close()
        summary = {
            "kind": "kill-summary", "run": run_id, "session": session, "kills": kills,
            "kills_by_moment": counts, "kills_with_a_job_in_state": with_state,
            "restarts": restarts, "server_ready_s_median": sorted(ready_s)[len(ready_s) // 2] if ready_s else None,
            "server_crashes": len(crashes), "jobs": len(ids),
            "final": {s: sum(1 for v in final.values() if v == s) for s in sorted(set(map(str, final.values())))},
            "failed_reasons": sorted({d["reason"] for d in details.values() if d["state"] == "failed"}),
            "cancel_requests": len(cancels), "submit_errors": len(submit_errors),
            "lost": len(lost) + len(unanswered_keys) + len(two_ids), "lost_ids": lost,
            "unanswered_keys": unanswered_keys, "keys_with_two_ids": two_ids, "jobs_not_submitted_by_us": extra_jobs,
            "run_twice": len(twice), "run_twice_detail": twice,
            "fresh_starts_over_one": len(fresh_over_one), "fresh_starts_over_one_detail": fresh_over_one,
            "succeeded_with_more_than_one_fresh_start": succeeded_fresh_ne_1,
            "orphaned_processes": len(orphans), "orphans": orphans, "locks_held_after_stop": held,
            "attempts": attempts_total, "resumed_attempts": resumed_total, "attempts_without_pid": no_pid,
            "attempts_never_closed": sorted(set(never_closed)),
            "tune_processes_seen": len(sampler.seen), "tune_processes_not_in_attempts": len(unrecorded),
            "sampler_samples": sampler.samples, "settle_stuck": stuck,
            "server_exit_on_sigterm": exit_code, "integrity_check": integrity,
            "crashes": crashes, "time": time.time(), **provenance(args)}
        summary["ok"] = (summary["lost"] == 0 and summary["run_twice"] == 0 and not orphans and not held
                         and not crashes and integrity == "ok" and kills >= args.kills
                         and all(x["all_earlier_without_report"] for x in succeeded_fresh_ne_1))
        r.failed = not summary["ok"]
        append_row(out, summary)
        log("kill loop:", json.dumps({k: v for k, v in summary.items() if not k.endswith("detail")}, indent=1))
        return summary["ok"]
    finally:
        sampler.stop()
        left = r.cleanup()
        if left:
            log("cleaned up", len(left), "left-over processes")


# ---- 2. a worker (then a whole tune session) killed mid-training ---------------

def metrics_launches(path):
    """[(start time, first iter step after it)] for each `start` record of metrics.jsonl."""
    launches = []
    for line in open(path):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("type") == "start":
            launches.append([rec.get("time"), None])
        elif rec.get("type") == "iter" and launches and launches[-1][1] is None:
            launches[-1][1] = rec.get("step")
    return launches


def last_step(path):
    step = 0
    for line in open(path):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("type") == "iter":
            step = rec["step"]
    return step


def process_faults(args, out):
    run_id = f"worker-seed{args.seed}" + ("-quick" if args.quick else "")
    if done(out, "worker-killed", run_id) and done(out, "tune-session-killed", run_id) and not args.force:
        log(f"worker faults {run_id}: recorded already; skipped")
        return True
    r = Run(args, "tula-faults-proc-")
    ok = True
    try:
        server = r.server(("--max-running", "1"), "process faults")
        # A fixed configuration (2 workers x 64, no re-plan): with the planner's
        # choice the 4096 samples are one step per epoch, over before a
        # checkpoint of the training launch exists.
        spec = {"model": "small_cnn", "dataset": "synthetic", "synthetic_size": 4096, "epochs": 6, "start_at": "2x64",
                "no_replan": True, "watch_every": 4}
        for kind in ("worker-killed", "tune-session-killed"):
            if done(out, kind, run_id) and not args.force:
                continue
            status, job, _ = server.call("POST", "/v1/jobs", spec)
            assert status == 201, (status, job)
            jid = job["id"]
            jdir = os.path.join(r.work, "jobs", str(jid))
            ckpt = os.path.join(jdir, "checkpoints", "latest.pt")
            deadline = time.time() + args.job_timeout
            training_since = None
            # Training, and a checkpoint written by the training launch (not the pilot's).
            while True:
                assert time.time() < deadline, f"job {jid} never trained with a checkpoint"
                d = server.get(f"/v1/jobs/{jid}")
                assert d["state"] not in FINAL, f"job {jid} ended before the kill: {d['state']} {d['reason']}"
                if d["state"] == "training" and training_since is None:
                    training_since = time.time()
                if training_since and os.path.exists(ckpt) and os.path.getmtime(ckpt) > training_since:
                    tune_pid, members = session_of_job(r.work, jid)
                    workers = job_workers(r.work, jid)
                    if tune_pid and len(workers) >= 2:
                        break
                time.sleep(0.2)
            r.sessions.add(tune_pid)
            ck = json.load(open(os.path.join(jdir, "checkpoints", "latest.json")))
            metrics = os.path.join(jdir, "metrics.jsonl")
            step_at_kill = last_step(metrics)
            launches_before = len(metrics_launches(metrics))
            if kind == "worker-killed":
                targets = [rng_pick(args, workers)]
            else:  # the tune process, its launcher (its session) and the workers (sessions of their own)
                targets = [p for p, (st, _, s, _) in processes() if s == tune_pid and st != "Z"] + job_workers(r.work, jid)
            kill_pids(targets)
            t_kill = time.time()
            log(f"{kind}: job {jid} at step {step_at_kill}, checkpoint step {ck.get('global_step')}; killed {targets}")
            while True:
                d = server.get(f"/v1/jobs/{jid}")
                if d["state"] in FINAL:
                    break
                assert time.time() < t_kill + args.job_timeout, f"job {jid} never ended after the kill"
                time.sleep(0.5)
            report = json.load(open(os.path.join(jdir, "report.json")))
            launches = metrics_launches(metrics)
            after = [l for l in launches[launches_before:] if l[0] and l[0] > t_kill]
            first_after = after[0][1] if after else None
            resumed_logs = []
            for name in sorted(os.listdir(os.path.join(jdir, "logs"))):
                if name.startswith("launch-") and os.path.getmtime(os.path.join(jdir, "logs", name)) > t_kill:
                    resumed_logs += [l.strip()[-160:] for l in open(os.path.join(jdir, "logs", name), errors="replace")
                                     if "resuming from" in l]
            segments = report.get("segments", [])
            row = {"kind": kind, "run": run_id, "job": jid, "spec": spec, "killed_pids": len(targets),
                   "state": d["state"], "reason": d["reason"],
                   "attempts": [{k: a[k] for k in ("resumed", "outcome")} for a in d["attempts"]],
                   "step_at_kill": step_at_kill, "checkpoint_step_at_kill": ck.get("global_step"),
                   "first_step_after_kill": first_after, "launches_after_kill": len(after),
                   "resuming_from_log": resumed_logs[:2],
                   "tune_retries": report.get("measured", {}).get("retries"),
                   "worker_died_notes": [n for n in report.get("notes", []) if "worker died" in n],
                   "segments_exit": [s.get("exit", "")[:80] for s in segments],
                   "final_steps": report.get("measured", {}).get("steps"),
                   "seconds_to_end_after_kill": round(time.time() - t_kill, 2), "time": time.time(), **provenance(args)}
            resumed_ok = (first_after is not None and 1 < first_after <= step_at_kill + 1 and bool(resumed_logs))
            if kind == "worker-killed":
                row["ok"] = (d["state"] == "succeeded" and resumed_ok and (row["tune_retries"] or 0) >= 1
                             and len(d["attempts"]) == 1
                             and any(s.startswith("worker died") for s in row["segments_exit"]))
            else:
                row["ok"] = (d["state"] == "succeeded" and resumed_ok and len(d["attempts"]) == 2
                             and d["attempts"][1]["resumed"])
            ok = ok and row["ok"]
            append_row(out, row)
            log(kind, json.dumps(row))
        server.stop()
        r.failed = not ok
        return ok
    finally:
        r.cleanup()


def rng_pick(args, items):
    return random.Random(args.seed).choice(sorted(items))


# ---- 3. clean restarts -------------------------------------------------------------

def clean_restarts(args, out):
    run_id = f"restarts{args.restarts}-seed{args.seed}" + ("-quick" if args.quick else "")
    if done(out, "clean-restarts", run_id) and not args.force:
        log(f"clean restarts {run_id}: recorded already; skipped")
        return True
    r = Run(args, "tula-faults-restarts-")
    try:
        server = r.server(("--max-running", "1"), "clean restarts")
        spec = {"model": "small_cnn", "dataset": "synthetic", "synthetic_size": 4096, "epochs": 20, "start_at": "2x64",
                "no_replan": True, "watch_every": 4}
        status, job, _ = server.call("POST", "/v1/jobs", spec)
        jid = job["id"]
        first_seen, stops = {}, []
        deadline = time.time() + args.job_timeout
        while len(stops) < args.restarts:
            d = server.get(f"/v1/jobs/{jid}")
            if d["state"] in FINAL:
                break
            tune_pid, _ = session_of_job(r.work, jid)
            metrics = os.path.join(r.work, "jobs", str(jid), "metrics.jsonl")
            step = last_step(metrics) if os.path.exists(metrics) else 0
            if tune_pid:
                r.sessions.add(tune_pid)
                first_seen.setdefault(tune_pid, time.time())
                # Stopped only while it trains and has made progress since the last stop.
                if (d["state"] == "training" and time.time() - first_seen[tune_pid] >= 2.0
                        and step >= (stops[-1]["step"] if stops else 0) + 8):
                    t0 = time.time()
                    exit_code = server.stop()
                    stops.append({"state": d["state"], "step": step, "stop_s": round(time.time() - t0, 2), "exit": exit_code})
                    log(f"clean restart {len(stops)}: job {jid} was {d['state']}")
                    server = r.server(("--max-running", "1"), f"clean restart {len(stops)}")
                    continue
            assert time.time() < deadline, "the job never ran long enough"
            time.sleep(0.2)
        states = wait_final(server, [jid], args.job_timeout)
        d = server.get(f"/v1/jobs/{jid}")
        row = {"kind": "clean-restarts", "run": run_id, "job": jid, "spec": spec, "restarts": len(stops), "stops": stops,
               "state": states.get(jid), "reason": d["reason"],
               "attempts": [{k: a[k] for k in ("resumed", "outcome")} for a in d["attempts"]],
               "time": time.time(), **provenance(args)}
        row["ok"] = row["state"] == "succeeded"
        row["exit_on_sigterm"] = server.stop()
        append_row(out, row)
        log("clean-restarts", json.dumps(row))
        return row["ok"]
    finally:
        r.cleanup()


# ---- 4. store faults ----------------------------------------------------------------

def db_locked(args, out):
    run_id = f"store-seed{args.seed}" + ("-quick" if args.quick else "")
    ok = True
    if not done(out, "database-locked", run_id) or args.force:
        r = Run(args, "tula-faults-lock-")
        try:
            server = r.server(("--max-running", "1"), "db locked")
            holder = hold_db(r.db, 8)
            t0 = time.time()
            status, b, headers = server.call("POST", "/v1/jobs", dict(JOB, epochs=2))
            waited = time.time() - t0
            health = server.call("GET", "/healthz")[0]
            listing = server.call("GET", "/v1/jobs")[0]
            holder.wait(timeout=60)
            after, b2, _ = server.call("POST", "/v1/jobs", dict(JOB, epochs=2))
            states = wait_final(server, [b2["id"]], args.job_timeout) if after == 201 else {}
            message = (b or {}).get("error", {}).get("message", "")
            row = {"kind": "database-locked", "run": run_id, "status": status, "message": message,
                   "retry_after": headers.get("Retry-After"), "waited_s": round(waited, 3),
                   "healthz_while_locked": health, "list_while_locked": listing,
                   "server_alive": server.alive(), "submit_after_release": after,
                   "job_after_release": states.get(b2["id"]) if after == 201 else None,
                   "integrity_check": sqlite_check(r.db), "time": time.time(), **provenance(args)}
            row["ok"] = (status == 503 and "locked" in message and waited < 5 + 3 and health == 200 and row["server_alive"]
                         and after == 201 and row["job_after_release"] == "succeeded" and row["integrity_check"] == "ok")
            row["exit_on_sigterm"] = server.stop()
            ok = ok and row["ok"]
            r.failed = not row["ok"]
            append_row(out, row)
            log("database-locked", json.dumps(row))
        finally:
            r.cleanup()

    if not done(out, "database-locked-while-a-job-ends", run_id) or args.force:
        r = Run(args, "tula-faults-lock-end-")
        try:
            server = r.server(("--max-running", "1"), "db locked while a job ends")
            status, job, _ = server.call("POST", "/v1/jobs", {"model": "small_cnn", "dataset": "synthetic",
                                                              "synthetic_size": 2048, "epochs": 2, "start_at": "2x64",
                                                              "no_replan": True, "watch_every": 4})
            jid = job["id"]
            deadline = time.time() + args.job_timeout
            while True:
                d = server.get(f"/v1/jobs/{jid}")
                tune_pid, _ = session_of_job(r.work, jid)
                if d["state"] == "training" and tune_pid:
                    break
                assert d["state"] not in FINAL and time.time() < deadline, f"job {jid}: {d['state']}"
                time.sleep(0.1)
            r.sessions.add(tune_pid)
            holder = hold_db(r.db, 0, until_stdin=True)
            t_lock = time.time()
            while session_alive(tune_pid):
                assert time.time() < deadline + args.job_timeout, "the job's processes never ended"
                time.sleep(0.2)
            t_end = time.time()
            time.sleep(8)  # > the 5 s busy timeout + a poll: the supervisor's try at settling the job failed
            state_while_locked = server.get(f"/v1/jobs/{jid}")["state"]
            holder.stdin.write("\n")
            holder.stdin.flush()
            holder.wait(timeout=60)
            t_release = time.time()
            states = wait_final(server, [jid], 60)
            after_release = states.get(jid)
            running = server.get("/healthz").get("running")
            after_restart = None
            if after_release not in FINAL:
                server.stop()
                server = r.server(("--max-running", "1"), "restart after the stuck job")
                after_restart = wait_final(server, [jid], 120).get(jid)
            d = server.get(f"/v1/jobs/{jid}")
            row = {"kind": "database-locked-while-a-job-ends", "run": run_id, "job": jid,
                   "locked_s_before_the_job_ended": round(t_end - t_lock, 2), "locked_s": round(t_release - t_lock, 2),
                   "state_while_locked": state_while_locked, "state_60s_after_release": after_release,
                   "healthz_running_after_release": running, "state_after_a_restart": after_restart,
                   "final_reason": d["reason"], "attempts": [{k: a[k] for k in ("resumed", "outcome")} for a in d["attempts"]],
                   "supervisor_errors": [l[-200:] for l in open(server.log_path, errors="replace") if "supervisor:" in l][:3],
                   "integrity_check": sqlite_check(r.db), "time": time.time(), **provenance(args)}
            row["ok"] = after_release in FINAL and row["integrity_check"] == "ok"
            row["exit_on_sigterm"] = server.stop()
            ok = ok and row["ok"]
            append_row(out, row)
            log("database-locked-while-a-job-ends", json.dumps(row))
        finally:
            r.cleanup()
    return ok


def disk_full(args, out):
    run_id = f"store-seed{args.seed}" + ("-quick" if args.quick else "")
    if done(out, "disk-full", run_id) and not args.force:
        return True
    r = Run(args, "tula-faults-full-")
    mnt = os.path.join(r.tmp, "tmpfs")
    os.makedirs(mnt)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mnt], capture_output=True, text=True)
    if mounted.returncode != 0:
        append_row(out, {"kind": "disk-full", "run": run_id, "skipped": "cannot mount a tmpfs: " + mounted.stderr.strip(),
                     "time": time.time(), **provenance(args)})
        r.cleanup()
        return False
    try:
        db, work = os.path.join(mnt, "jobs.db"), os.path.join(mnt, "work")
        server = r.server(("--max-running", "1"), "disk full", db=db, work=work)
        # A job from before, cancelled at once: its record must survive.
        _, early, _ = server.call("POST", "/v1/jobs", dict(JOB, epochs=2))
        server.call("POST", f"/v1/jobs/{early['id']}/cancel")
        wait_final(server, [early["id"]], args.job_timeout)
        before = server.get(f"/v1/jobs/{early['id']}")
        filler = os.path.join(mnt, "filler")
        with open(filler, "wb", buffering=0) as f:
            try:
                while True:
                    f.write(b"\0" * 65536)
            except OSError as e:
                assert e.errno == errno.ENOSPC, e
        free = os.statvfs(mnt)
        statuses, message, probe_ids = [], None, []
        for i in range(30):  # until a write needs a page SQLite does not have
            status, b, _ = server.call("POST", "/v1/jobs", dict(JOB, epochs=2, seed=100 + i))
            statuses.append(status)
            if status in (200, 201):
                probe_ids.append(b["id"])
                continue
            message = (b or {}).get("error", {}).get("message", b)
            break
        health_full = server.call("GET", "/healthz")[0]
        read_full = server.call("GET", f"/v1/jobs/{early['id']}")[0]
        os.remove(filler)
        alive = server.alive()
        integrity = sqlite_check(db)
        for i in probe_ids:
            server.call("POST", f"/v1/jobs/{i}/cancel")
        states = wait_final(server, probe_ids, 120) if probe_ids else {}
        after = server.get(f"/v1/jobs/{early['id']}")
        row = {"kind": "disk-full", "run": run_id, "tmpfs": "2m", "free_bytes_when_full": free.f_bavail * free.f_frsize,
               "statuses": statuses, "message": message, "healthz_while_full": health_full,
               "get_while_full": read_full, "server_alive": alive, "integrity_check": integrity,
               "earlier_job_intact": (after["state"] == before["state"] and after["transitions"] == before["transitions"]),
               "earlier_job_state": after["state"],
               "jobs_accepted_while_full": {str(i): states.get(i) for i in probe_ids},
               "jobs_accepted_while_full_reasons": sorted({server.get(f"/v1/jobs/{i}")["reason"] for i in probe_ids}),
               "submit_after_free": None, "time": time.time(), **provenance(args)}
        s2, b2, _ = server.call("POST", "/v1/jobs", dict(JOB, epochs=2, seed=999))
        row["submit_after_free"] = s2
        if s2 == 201:
            server.call("POST", f"/v1/jobs/{b2['id']}/cancel")
            wait_final(server, [b2["id"]], 120)
        row["ok"] = (statuses[-1] == 507 and message is not None and "full" in str(message) and health_full == 200 and alive
                     and integrity == "ok" and row["earlier_job_intact"] and s2 == 201
                     and all(v in FINAL for v in row["jobs_accepted_while_full"].values()))
        row["exit_on_sigterm"] = server.stop()
        r.failed = not row["ok"]
        append_row(out, row)
        log("disk-full", json.dumps(row))
        return row["ok"]
    finally:
        for s in r.servers:
            if s.alive():
                s.kill()
        kill_pids([p["pid"] for p in job_processes(mnt) if p["state"] != "Z"])
        time.sleep(0.5)
        subprocess.run(["umount", mnt])
        if os.path.ismount(mnt):
            subprocess.run(["umount", "-l", mnt])
        r.cleanup()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tula", default=os.path.join(HERE, "..", "build", "src", "tula"))
    ap.add_argument("--kills", type=int, default=None, help="server SIGKILLs in the kill loop (default 60; 9 with --quick)")
    ap.add_argument("--quick", action="store_true", help="a smoke run: 9 kills, smaller jobs, rows to /tmp")
    ap.add_argument("--parts", default="kills,worker,restarts,store", help="comma-separated: kills, worker, restarts, store")
    ap.add_argument("--restarts", type=int, default=7, help="clean server restarts under one job (part restarts)")
    ap.add_argument("--inflight", type=int, default=5, help="unfinished jobs kept in the store during the kill loop")
    ap.add_argument("--state-timeout", type=float, default=180, help="seconds to wait for a job in the state a kill aims at")
    ap.add_argument("--settle", type=float, default=3600, help="seconds for every job to end after the last kill")
    ap.add_argument("--stuck-after", type=float, default=300,
                    help="while settling: give up when no state changed and no tune process ran for this long")
    ap.add_argument("--job-timeout", type=float, default=1800, help="seconds for one job of parts 2 and 3")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="default bench/results/service_faults.jsonl (/tmp/service_faults_quick.jsonl with --quick)")
    ap.add_argument("--force", action="store_true", help="run parts already recorded in --out again")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directories")
    args = ap.parse_args()
    if args.kills is None:
        args.kills = 9 if args.quick else 60
    if args.out is None:
        args.out = "/tmp/service_faults_quick.jsonl" if args.quick else os.path.join(HERE, "results", "service_faults.jsonl")
    args.tula = os.path.abspath(args.tula)
    args.tula_sha = sha256(args.tula)
    commit_fields()  # the commit the run starts at, recorded in its rows
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    parts = set(args.parts.split(","))
    results = {}
    if "kills" in parts:
        results["kills"] = kill_loop(args, args.out)
    if "worker" in parts:
        results["worker"] = process_faults(args, args.out)
    if "restarts" in parts:
        results["clean-restarts"] = clean_restarts(args, args.out)
    if "store" in parts:
        results["db-locked"] = db_locked(args, args.out)
        results["disk-full"] = disk_full(args, args.out)
    log("results:", results, "rows in", args.out)
    return 0 if all(results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
