#!/usr/bin/python3
"""Attacks on `tula serve`, one probe a line (python3, stdlib only).

    bench/service_attacks.py [--tula build/src/tula] [--only NAME-OR-PART,...] [--quick]
                             [--out FILE.jsonl --label WORDS]

Starts its own server (loopback, a free port, --max-running 1) in a temporary
directory with a data root of its own, sends each probe of the table PROBES,
and prints one line per probe: its name, the status expected, the status it
got, PASS, FAIL or SKIP (this machine cannot run it: the line says why), and
under it what was measured, where something was. Then the end checks, in the
same form: the server is alive and never died during the run, `PRAGMA
integrity_check` of its SQLite store is ok, and the store holds exactly the
jobs of the probes meant to create one (a rejected request created none).
Exits 1 on any FAIL.

The probes, by the part of the server they attack (the HTTP-layer ones are in
http_attacks.py and hostile_attacks.py):

  body       nesting: a field holding 100,000 arrays in one another, the whole
             body 100,000 deep, 65 levels, a deep /v1/plan body (400 naming the
             limit of 64; the server used to die of the first); a 1.2 MB spec
             with Content-Length, announced with Expect: 100-continue, and
             chunked (413); 64 MiB chunked (413 once the server has read about
             the limit: the bytes the client got out before the answer are
             counted); a POST with no length (no body: 400)
  cross-site a submit with no Content-Type and a foreign Origin, Origin null
             (403), the types a form sends (415), an empty-body cancel from a
             foreign Origin (403, the job still queued) and from the server's
             own (202), a foreign Host (403)
  deadlines  on a server of their own (--threads 4 --request-timeout 2): more
             connections from one address than its limit (429), as many
             slow-header connections as threads from one address and from one
             address each (/healthz still answers; every one closed), an event
             stream whose client left (its place comes free)
  token      a server on 0.0.0.0 with --token-file: reads and a submit without
             the token (401), with it (200), /healthz (200); --listen [::1]
             starts; --listen 127.example.invalid without a token and a token
             file with a NUL byte are refused
  headers    the page, a JSON answer and an error carry a Content-Security-
             Policy with no source outside the server, X-Frame-Options DENY,
             nosniff and Cache-Control no-store
  numbers    values out of a field's range: 1e400 (it was a 500), 2^32 + 1
             retries (it passed and failed the job at its start), a rate, a size,
             a seed past 64 bits, a deadline, a start_at batch
  names      a model not in the zoo, a data set the engine does not read, a
             model path outside the data roots or not a .pt file
  paths      a data_dir link out of the root at the submit (400), and one that
             dangles at the submit and leads outside by the start: the job must
             fail naming the path, its attempt `could_not_start` (no process read
             anything); a data_dir inside the root whose files link outside it
             (the job's processes refuse the files, naming one)
  smuggling  (hostile_attacks.py) a malformed request line before a GET, an
             obs-folded Content-Length, `Transfer-Encoding : chunked`, a chunk
             without its CRLF nor a last chunk, Transfer-Encoding twice (400,
             the connection closed, no job); a key given twice (400 naming it);
             a NUL and ESC in a key (escaped in the message)
  exhaustion (hostile_attacks.py) 100,000 small headers and 8 KB header lines
             (431 at the 64 KiB cap); slow heads from 2 x 16, 8 x 8 and 16 x 64
             addresses x connections, and 300 event streams from one address
             each: /healthz answers within 1 s meanwhile, every stream is
             answered (200 or 503)

--quick leaves out the probes that wait out deadlines (part deadlines but the
per-client limit): the rest take a few seconds, and CTest runs them
(service_attacks). A Probe's run(ctx) returns the status it saw as text (or
that text and a measurement); `http_probe` builds the usual kind, and
ctx.raw() sends bytes as they are.

Every probe is bounded: at most --probe-timeout seconds (socket timeouts and
waits), and the table is fixed. The server's log is printed on a failure.
"""
import argparse
import contextlib
import fcntl
import http.client
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

import hostile_attacks as x
import http_attacks as h
from bench_common import append_row, git_state

HERE = os.path.dirname(os.path.abspath(__file__))
VALID = {"model": "small_cnn", "dataset": "synthetic", "synthetic_size": 512, "epochs": 1}
FINAL = {"succeeded", "failed", "cancelled"}


class Probe:
    """One line of the table: `run(ctx)` returns what it saw, compared with `expected`.
    `creates`: how many jobs the probe is meant to create (the end check counts them)."""

    def __init__(self, name, part, expected, run, creates=0, slow=False):
        self.name, self.part, self.expected, self.run, self.creates = name, part, expected, run, creates
        self.slow = slow  # waits out deadlines: left out by --quick


# ---- the server ------------------------------------------------------------------

class Server:
    """`tula serve` on a loopback port of its choosing, restarted on the same store if it dies."""

    def __init__(self, tula, base, timeout, extra=(), listen="127.0.0.1:0", host="127.0.0.1"):
        """`extra`: more `tula serve` flags, `listen` its address and `host` the one to reach it
        by (a probe that needs a token, another address or other limits starts its own)."""
        self.tula, self.base, self.timeout, self.extra = tula, base, timeout, list(extra)
        self.listen, self.host = listen, host
        self.db = os.path.join(base, "jobs.db")
        self.work = os.path.join(base, "work")
        self.root = os.path.join(base, "data")
        self.log_path = os.path.join(base, "server.log")
        self.deaths = []  # (probe name, exit status) for every time it was found dead
        os.makedirs(os.path.join(self.work, "jobs"), exist_ok=True)
        os.makedirs(self.root, exist_ok=True)
        self.start()

    def start(self):
        ready = os.path.join(self.base, "ready.json")
        if os.path.exists(ready):
            os.remove(ready)
        with open(self.log_path, "a") as log:
            self.proc = subprocess.Popen(
                [self.tula, "serve", "--listen", self.listen, "--db", self.db, "--workdir", self.work,
                 "--data-root", self.root, "--max-running", "1", "--ready-file", ready, "--poll", "0.1", *self.extra],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.time() + 60
        while not os.path.exists(ready):
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"the server did not start (exit {self.proc.poll()}); see {self.log_path}")
            time.sleep(0.02)
        self.port = json.load(open(ready))["port"]

    def alive(self):
        return self.proc.poll() is None

    def revive(self, after):
        """After each probe: a server that does not answer /healthz is given a moment to exit
        (a crash takes a little while to end the process); a dead one is restarted on the same
        store, its death noted against the probe `after`."""
        status, _ = self.call("GET", "/healthz")
        if status == 200:
            return
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.deaths.append((after, "no answer to /healthz"))
            return
        self.deaths.append((after, self.proc.returncode))
        self.start()

    def call(self, method, path, body=b"", headers=None):
        """(status, parsed JSON or None); status is a text when no answer came.
        A header given as None is not sent (Content-Type is sent unless so)."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            h = {k: v for k, v in {"Content-Type": "application/json", **(headers or {})}.items() if v is not None}
            conn.request(method, path, body=body if method != "GET" else None, headers=h)
            r = conn.getresponse()
            data = r.read()
            try:
                return r.status, json.loads(data) if data else None
            except ValueError:
                return r.status, None
        except (OSError, http.client.HTTPException) as e:
            return f"no answer ({type(e).__name__})", None
        finally:
            conn.close()

    def raw(self, data, read_timeout=None):
        """Sends `data` as it is on a fresh connection; the status line's code, or a text saying why none."""
        try:
            with socket.create_connection((self.host, self.port), timeout=read_timeout or self.timeout) as s:
                s.sendall(data)
                line = s.makefile("rb").readline(1000)
        except OSError as e:
            return f"no answer ({type(e).__name__})"
        parts = line.split()
        return parts[1].decode() if len(parts) > 1 else "no status line"

    def job(self, job_id):
        status, body = self.call("GET", f"/v1/jobs/{job_id}")
        return body if status == 200 else None

    def wait_final(self, job_id):
        deadline = time.time() + self.timeout
        while time.time() < deadline:
            job = self.job(job_id)
            if job and job["state"] in FINAL:
                return job
            time.sleep(0.1)
        return self.job(job_id)

    def stop(self):
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        stop_job_processes(self.work)


def stop_job_processes(work):
    """Kills the tune processes that outlive the server (each leads a session: its process group)."""
    jobs = os.path.join(work, "jobs")
    for name in os.listdir(jobs) if os.path.isdir(jobs) else []:
        if not name.endswith(".lock"):
            continue
        try:
            pid = int(open(os.path.join(jobs, name)).read().strip() or 0)
        except (OSError, ValueError):
            continue
        if pid > 0:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass


class Context:
    """What the probes share: the server, its data root, the ids of the jobs they created,
    and the other servers some probes start (each once, in a folder of its own)."""

    def __init__(self, server, tula, base):
        self.server, self.tula, self.base = server, tula, base
        self.root = server.root
        self.valid = VALID
        self.created = []     # ids of the jobs the probes created, in order
        self.created_by = {}  # probe name: the ids it created
        self.others = {}      # name: Server

    def extra_server(self, name, flags, listen="127.0.0.1:0", host="127.0.0.1"):
        if name not in self.others:
            base = os.path.join(self.base, name)
            os.makedirs(base, exist_ok=True)
            self.others[name] = None  # a start that fails is not tried again
            self.others[name] = Server(self.tula, base, self.server.timeout, flags, listen, host)
        if self.others[name] is None:
            raise RuntimeError(f"the {name} server did not start earlier")
        return self.others[name]

    def log_tail(self, name):
        lines = open(os.path.join(self.base, name, "server.log"), errors="replace").read().strip().splitlines()
        return lines[-1] if lines else "no message"

    def stop_others(self):
        for server in self.others.values():
            if server:
                server.stop()

    @contextlib.contextmanager
    def slot_holder(self, server):
        """The only running slot of `server`, taken by a job whose lock file is locked here
        before it is submitted: the server finds "its process running already" and follows
        it, quiet, until it leaves (cancelled, its lock let go). Yields the holder's id; jobs
        submitted meanwhile stay queued."""
        holder_id = next_job_id(server.db)
        with open(os.path.join(server.work, "jobs", f"{holder_id}.lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # empty: the server sees pid 0 and signals nobody
            try:
                status, holder = self.submit(json.dumps(VALID).encode(), server=server)
                if status != 201 or holder["id"] != holder_id:
                    raise RuntimeError(f"the slot holder got {status}")
                yield holder_id
                server.call("POST", f"/v1/jobs/{holder_id}/cancel")
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
        server.wait_final(holder_id)

    def submit(self, spec_bytes, headers=None, server=None):
        """A submit; the jobs it creates on the main server are counted."""
        status, body = (server or self.server).call("POST", "/v1/jobs", spec_bytes, headers)
        if status in (200, 201) and body and "id" in body and (server or self.server) is self.server:
            self.created.append(body["id"])
        return status, body

    def raw(self, data, read_timeout=None):
        return self.server.raw(data, read_timeout)


def message_of(body):
    try:
        return body["error"]["message"]
    except (TypeError, KeyError):
        return ""


def http_probe(name, part, body, expected=400, mentions=(), path="/v1/jobs", method="POST", headers=None,
               creates=0):
    """A request whose answer must have status `expected` and, for an error, a message holding each of `mentions`."""
    def run(ctx):
        data = body(ctx) if callable(body) else body
        data = data if isinstance(data, bytes) else json.dumps(data).encode()
        if path == "/v1/jobs" and method == "POST":
            status, answer = ctx.submit(data, headers)
        else:
            status, answer = ctx.server.call(method, path, data, headers)
        lacking = [m for m in mentions if m not in message_of(answer)]
        if lacking and status == expected:
            return f"{status}, message lacks {lacking[0]!r}"
        return str(status)
    return Probe(name, part, str(expected), run, creates)


def spec(**fields):
    return {**VALID, **fields}


def nested(levels, inner=b"1"):
    return b"[" * levels + inner + b"]" * levels


# ---- probes: paths that change between the submit and the start -------------

def next_job_id(db):
    """The id the store gives the next job (INTEGER PRIMARY KEY: the largest plus one)."""
    c = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return (c.execute("SELECT max(id) FROM jobs").fetchone()[0] or 0) + 1
    finally:
        c.close()


def link_moves_outside_before_start(ctx):
    """A slot holder takes the only running slot: its lock file is locked here before it is
    submitted, so the server finds "its process running already" and follows it. Then a job
    names a link that dangles at the submit and stays queued; the link is pointed outside the
    root; the holder is cancelled and its lock let go; the job starts, and must fail naming
    the path, with no process started for it."""
    outside = os.path.join(os.path.dirname(ctx.root), "outside")
    os.makedirs(outside, exist_ok=True)
    with open(os.path.join(outside, "train-images-idx3-ubyte"), "w") as f:
        f.write("not the data: outside the data root")
    link = os.path.join(ctx.root, "mnist-link")
    os.symlink(os.path.join(os.path.dirname(ctx.root), "not-yet"), link)
    holder_id = next_job_id(ctx.server.db)
    with open(os.path.join(ctx.server.work, "jobs", f"{holder_id}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # empty: the server sees pid 0 and signals nobody
        try:
            status, holder = ctx.submit(json.dumps(VALID).encode())
            if status != 201 or holder["id"] != holder_id:
                return f"setup: the slot holder got {status}"
            status, job = ctx.submit(json.dumps({"model": "small_cnn", "dataset": "mnist", "epochs": 1,
                                                 "data_dir": link}).encode())
            if status != 201:
                return f"{status} at the submit: {message_of(job)[:60]}"
            if ctx.server.job(job["id"])["state"] != "queued":
                return "setup: the job started before its link moved"
            os.remove(link)
            os.symlink(outside, link)
            ctx.server.call("POST", f"/v1/jobs/{holder_id}/cancel")
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    end = ctx.server.wait_final(job["id"])
    if not end or end["state"] not in FINAL:
        return f"not ended within {ctx.server.timeout} s"
    reason = end.get("reason") or ""
    started = any(a.get("pid") for a in end.get("attempts") or [])
    if end["state"] == "failed" and link in reason and "leads to" in reason and not started:
        return "failed, names the path"
    return f"{end['state']}{', a process started' if started else ''}: {reason[:70]}"


# ---- the table -----------------------------------------------------------------

PROBES = [
    # body: nesting
    http_probe("field nested 100000 deep", "body",
               b'{"model": "small_cnn", "dataset": "synthetic", "epochs": ' + nested(100000) + b"}", mentions=("64",)),
    http_probe("body nested 100000 deep", "body", nested(100000), mentions=("64",)),
    http_probe("field nested 65 deep", "body", b'{"model": "small_cnn", "epochs": ' + nested(65) + b"}", mentions=("64",)),
    http_probe("field nested 63 deep (a type error)", "body", b'{"model": "small_cnn", "epochs": ' + nested(63) + b"}",
               mentions=("field 'epochs' must be a number",)),
    http_probe("plan body nested 100000 deep", "body", b'{"profile": ' + nested(100000, b"{}") + b"}", path="/v1/plan",
               mentions=("64",)),
    Probe("1.2 MB spec, Content-Length", "body", "413", h.big_spec_with_length),
    Probe("1.2 MB spec announced, Expect: 100-continue", "body", "413", h.big_spec_expecting_continue),
    Probe("1.2 MB spec, chunked", "body", "413", h.big_spec_chunked),
    Probe("64 MiB chunked", "body", "413, stopped near the limit", h.huge_chunked),
    Probe("POST with no length (no body)", "body", "400", h.post_without_length),
    # cross-site
    http_probe("no Content-Type, foreign Origin", "cross-site", spec(), expected=403,
               headers={"Content-Type": None, "Origin": h.FOREIGN_ORIGIN}, mentions=("Origin",)),
    http_probe("Origin: null", "cross-site", spec(), expected=403, headers={"Origin": "null"}),
    http_probe("Content-Type application/jsonp-evil", "cross-site", spec(), expected=415,
               headers={"Content-Type": "application/jsonp-evil"}, mentions=("application/json",)),
    http_probe("Content-Type text/plain (a form's)", "cross-site", spec(), expected=415,
               headers={"Content-Type": "text/plain"}),
    Probe("empty-body cancel, foreign Origin", "cross-site", "403, job queued", h.cancel_from_foreign_origin,
          creates=2),
    Probe("empty-body cancel, the server's own Origin", "cross-site", "202, job cancelled", h.cancel_from_own_origin,
          creates=2),
    http_probe("Host: attacker.example", "cross-site", b"", expected=403, method="GET",
               headers={"Host": "attacker.example"}, mentions=("attacker.example",)),
    # deadlines (a server of their own: --threads 4 --request-timeout 2)
    Probe("connections over the per-client limit", "deadlines", "429, Retry-After 1", h.connections_over_the_limit),
    Probe("slow headers x --threads, one address", "deadlines", f"healthz 200, {h.DEADLINE_THREADS} of "
          f"{h.DEADLINE_THREADS} closed", h.slow_clients_one_address, slow=True),
    Probe("slow headers x --threads, one address each", "deadlines", f"healthz 200, {h.DEADLINE_THREADS} of "
          f"{h.DEADLINE_THREADS} closed", h.slow_clients_many_addresses, slow=True),
    Probe("event stream whose client left", "deadlines", "503 while full, 200 after one left",
          h.stream_left_frees_its_place, slow=True),
    # token (a server on 0.0.0.0 with --token-file, and servers that must not start)
    Probe("off loopback, reads without the token", "token", "401, 401", h.reads_without_token),
    Probe("off loopback, submit without the token", "token", "401", h.submit_without_token),
    Probe("off loopback, reads with the token", "token", "200, 200", h.reads_with_token),
    Probe("off loopback, /healthz without the token", "token", "200", h.healthz_without_token),
    Probe("--listen [::1]", "token", "starts, /healthz 200", h.ipv6_loopback),
    Probe("--listen 127.example.invalid, no token", "token", "refused (exit 1)", h.unresolvable_name_without_token),
    Probe("token file with a NUL byte", "token", "refused (exit 1)", h.token_with_nul),
    # headers
    Probe("security headers: the page", "headers", "CSP, DENY, nosniff, no-store", h.security_headers_of("/")),
    Probe("security headers: JSON", "headers", "CSP, DENY, nosniff, no-store", h.security_headers_of("/v1/jobs")),
    Probe("security headers: an error", "headers", "CSP, DENY, nosniff, no-store",
          h.security_headers_of("/v1/jobs/999999")),
    # numbers
    http_probe("epochs 1e400", "numbers", b'{"model": "small_cnn", "dataset": "synthetic", "epochs": 1e400}',
               mentions=("epochs", "10000")),
    http_probe("max_retries 2^32+1", "numbers", spec(max_retries=2 ** 32 + 1), mentions=("max_retries", "1000")),
    http_probe("lr 1e6", "numbers", spec(lr=1e6), mentions=("lr", "100")),
    http_probe("synthetic_size 1e12", "numbers", spec(synthetic_size=10 ** 12), mentions=("synthetic_size",)),
    http_probe("seed 2^64", "numbers", spec(seed=2 ** 64), mentions=("seed",)),
    http_probe("pilot_workers 0", "numbers", spec(pilot_workers=0), mentions=("pilot_workers",)),
    http_probe("reference_batch 2^40", "numbers", spec(reference_batch=2 ** 40), mentions=("reference_batch",)),
    http_probe("deadline 1e6 hours", "numbers", spec(objective="deadline=1000000"), mentions=("8760",)),
    http_probe("start_at batch 2^30", "numbers", spec(start_at=f"1x{2 ** 30}"), mentions=("start_at",)),
    # names
    http_probe("model not in the zoo", "names", spec(model="resnet1000"), mentions=("resnet1000", "zoo")),
    http_probe("data set the engine cannot read", "names", spec(dataset="imagenet"), mentions=("imagenet",)),
    http_probe("model path outside the roots", "names", spec(model="/etc/model.pt"), mentions=("outside",)),
    http_probe("model path not a .pt file", "names", lambda ctx: spec(model=os.path.join(ctx.root, "m.onnx")),
               mentions=(".pt",)),
    # paths
    http_probe("data_dir link out of the root", "paths", lambda ctx: spec(data_dir=os.path.join(ctx.root, "etc-link")),
               mentions=("outside",)),
    Probe("data_dir link moved out before the start", "paths", "failed, names the path",
          link_moves_outside_before_start, creates=2),
    Probe("data_dir whose files link outside the root", "paths", "failed, names the path",
          x.data_files_link_outside, creates=1, slow=True),
    # smuggling: requests a proxy in front could read differently (issue 81)
    Probe("malformed request line, then a GET", "smuggling", "400, closed", x.request_line_then_get),
    Probe("Content-Length obs-folded", "smuggling", "400, closed", x.obs_folded_length),
    Probe("Transfer-Encoding : chunked (space before the colon)", "smuggling", "400, closed", x.space_before_colon),
    Probe("chunked without the CRLF after the data nor the 0 chunk", "smuggling", "400, closed",
          x.chunk_without_crlf),
    Probe("Transfer-Encoding: chunked twice", "smuggling", "400, closed", x.two_chunked_encodings),
    http_probe("duplicate key epochs 1 and 9999", "smuggling", b'{"model": "small_cnn", "dataset": "synthetic", '
               b'"epochs": 1, "epochs": 9999}', mentions=("'epochs' is given twice",)),
    http_probe("NUL and ESC in a key", "smuggling", b'{"model": "small_cnn", "ep\\u0000\\u001bochs": 1}',
               mentions=("ep\\x00\\x1bochs' (known",)),
    # exhaustion: slow clients, floods and streams from many addresses (issue 81)
    Probe("100,000 small headers", "exhaustion", "431", x.header_flood(x.small_headers)),
    Probe("8 KB header lines", "exhaustion", "431", x.header_flood(x.long_header_lines)),
    Probe("slow heads, 2 addresses x 16", "exhaustion", "healthz 200", x.slow_heads(2, 16)),
    Probe("slow heads, 8 addresses x 8", "exhaustion", "healthz 200", x.slow_heads(8, 8)),
    Probe("slow heads, 16 addresses x 64", "exhaustion", "healthz 200", x.slow_heads(16, 64)),
    Probe(f"{x.STREAMS_TRIED} event streams, one address each", "exhaustion", "0 unanswered, healthz 200",
          x.event_streams_many_addresses, creates=1),
]


def prepare_root(root):
    """What the probes' paths need in the data root."""
    os.symlink("/etc", os.path.join(root, "etc-link"))


# ---- the end checks ------------------------------------------------------------

def end_checks(ctx, probes_run):
    server = ctx.server
    status, _ = server.call("GET", "/healthz")
    alive = "alive" if status == 200 else f"{status}"
    deaths = server.deaths
    yield "server alive, never died", "alive, 0 deaths", f"{alive}, {len(deaths)} deaths" + (
        f" (after {deaths[0][0]!r}, exit {deaths[0][1]})" if deaths else "")
    c = sqlite3.connect(f"file:{server.db}?mode=ro", uri=True, timeout=30)
    try:
        integrity = c.execute("PRAGMA integrity_check").fetchone()[0]
        ids = sorted(r[0] for r in c.execute("SELECT id FROM jobs"))
    finally:
        c.close()
    yield "store integrity_check", "ok", integrity
    meant = sorted(i for p in probes_run if p.creates for i in ctx.created_by.get(p.name, []))
    stray = sorted(set(ids) - set(meant))
    yield "no job from a rejected request", f"{sum(p.creates for p in probes_run)} jobs", f"{len(ids)} jobs" + (
        f" (stray: {stray})" if stray else "")


def line(name, expected, actual, detail="", skipped=False):
    verdict = "SKIP" if skipped else "PASS" if expected == actual else "FAIL"
    print(f"{name:<58} expected {expected:<36} actual {actual:<36} {verdict}", flush=True)
    if detail:
        print(f"{'':<8}{detail}", flush=True)
    return None if skipped else verdict == "PASS"


def run_probe(p, ctx):
    """(what it saw, a detail, skipped)."""
    try:
        seen = p.run(ctx)
    except h.Skipped as e:
        return f"skipped: {e}"[:80], "", True
    except Exception as e:  # a probe that breaks is a failure, not the end of the run
        return f"probe error: {type(e).__name__}: {e}"[:80], "", False
    actual, detail = seen if isinstance(seen, tuple) else (seen, "")
    return actual, detail, False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tula", default=os.path.join(HERE, "..", "build", "src", "tula"))
    ap.add_argument("--only", default="", help="comma-separated probe names or parts")
    ap.add_argument("--quick", action="store_true", help="leave out the probes that wait out deadlines")
    ap.add_argument("--probe-timeout", type=float, default=60.0)
    ap.add_argument("--out", help="append a summary row (JSON line) here")
    ap.add_argument("--label", default="", help="words for the row (which binary this was)")
    args = ap.parse_args()
    git_state()
    wanted = [w.strip() for w in args.only.split(",") if w.strip()]
    probes = [p for p in PROBES if (not wanted or p.name in wanted or p.part in wanted) and not (args.quick and p.slow)]
    base = tempfile.mkdtemp(prefix="tula-attacks-")
    tula = os.path.join(base, "tula")
    shutil.copy2(args.tula, tula)  # a rebuild during the run changes nothing
    server = Server(tula, base, args.probe_timeout)
    prepare_root(server.root)
    ctx = Context(server, tula, base)
    results = []
    try:
        for p in probes:
            started, before = time.time(), len(ctx.created)
            actual, detail, skipped = run_probe(p, ctx)
            ctx.created_by[p.name] = ctx.created[before:]
            server.revive(after=p.name)
            ok = line(f"[{p.part}] {p.name}", p.expected, actual, detail, skipped)
            results.append({"probe": p.name, "part": p.part, "expected": p.expected, "actual": actual, "pass": ok,
                            "seconds": round(time.time() - started, 3), **({"detail": detail} if detail else {})})
        for name, expected, actual in end_checks(ctx, probes):
            ok = line(f"[end] {name}", expected, actual)
            results.append({"probe": name, "part": "end", "expected": expected, "actual": actual, "pass": ok})
    finally:
        ctx.stop_others()
        server.stop()
        log_tail = open(server.log_path, errors="replace").read().splitlines()[-15:]
        shutil.rmtree(base, ignore_errors=True)
    failed = [r for r in results if r["pass"] is False]
    skipped = [r for r in results if r["pass"] is None]
    passed = len(results) - len(failed) - len(skipped)
    print(f"{passed} of {len(results)} passed" + (f", {len(skipped)} skipped" if skipped else ""), flush=True)
    if failed:
        print("server log (last 15 lines):")
        print("\n".join(log_tail))
    if args.out:
        append_row(args.out, {"kind": "service_attacks", **git_state(), "label": args.label,
                              "tula": os.path.abspath(args.tula), "passed": passed, "skipped": len(skipped),
                              "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "results": results})
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
