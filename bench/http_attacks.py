"""The HTTP-layer probes of bench/service_attacks.py: bodies, cross-site requests,
deadlines, the token off loopback and the security headers.

Each function is a probe's run(ctx): it returns the text it saw (compared with
the table's expected text), or (that text, a detail) where a measurement goes
with it, or raises Skipped when this machine cannot run it. Every wait is
bounded: socket timeouts, and the fixed bounds below.
"""
import http.client
import json
import os
import select
import socket
import subprocess
import threading
import time

MIB = 1 << 20
MAX_BODY = 1 << 20            # the server's default --max-body
BIG_SPEC_BYTES = 1_200_000    # "a 1.2 MB spec": above the limit
HUGE_BODY_BYTES = 64 * MIB
# How far past the limit the client may get before the refusal: the server
# reads about the limit, and the kernel's socket buffers on both sides hold a
# few MiB more; a server that read the whole body lets all 64 MiB through.
HUGE_BODY_MAX_SENT = 16 * MIB
FOREIGN_ORIGIN = "http://attacker.example"
TOKEN = "attack-suite-token-0123456789"

# The deadlines server: few threads and a short request deadline, so the
# slow-client probes end in seconds.
DEADLINE_THREADS = 4
DEADLINE_REQUEST_TIMEOUT_S = 2
DEADLINE_FLAGS = ["--threads", str(DEADLINE_THREADS), "--request-timeout", str(DEADLINE_REQUEST_TIMEOUT_S)]
PER_CLIENT = DEADLINE_THREADS // 2   # the default --max-connections-per-client
# Event streams open at once on the streams server: its --max-connections is
# twice this (streams are capped at half the connections, event_pump.hpp).
STREAMS = 4
STREAM_FLAGS = ["--max-connections", str(2 * STREAMS)]
SLOW_LINE_EVERY_S = 1.5
HEALTHZ_BOUND_S = 10.0               # /healthz took 14.0 s with every thread held, before the fixes
SLOW_CLOSED_BOUND_S = DEADLINE_REQUEST_TIMEOUT_S + 15.0
STREAM_FREED_BOUND_S = 3.0           # a stream's place came free about 5 s after its client left, before


class Skipped(Exception):
    """This machine cannot run the probe (the message says why)."""


class Answered(Exception):
    """The server answered while the client was still sending."""


def spec_padded(size):
    """A job spec of `size` bytes: a valid one with a long unknown field."""
    head = b'{"model": "small_cnn", "dataset": "synthetic", "epochs": 1, "pad": "'
    return head + b"x" * (size - len(head) - 2) + b'"}'


def chunked(body, piece=64 * 1024):
    for i in range(0, len(body), piece):
        part = body[i:i + piece]
        yield b"%x\r\n" % len(part) + part + b"\r\n"
    yield b"0\r\n\r\n"


def chunked_filler(total, piece=64 * 1024):
    """`total` bytes of chunked body without holding them all."""
    part = b"x" * piece
    for _ in range(total // piece):
        yield b"%x\r\n" % piece + part + b"\r\n"
    yield b"0\r\n\r\n"


def head(server, method, path, *lines):
    text = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n" + "".join(f"{l}\r\n" for l in lines)
    return (text + "\r\n").encode()


def status_of(line):
    parts = line.split()
    return parts[1].decode() if len(parts) > 1 else "no status line"


def send_until_answered(server, request_head, pieces, timeout):
    """Sends the head, then the pieces, stopping at the first byte of an answer.
    (status, body bytes the client got into its socket before the answer).
    The client's send buffer is kept small so that the count is near what the
    server took in."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
    s.settimeout(timeout)
    sent = 0
    try:
        s.connect(("127.0.0.1", server.port))
        s.sendall(request_head)
        s.setblocking(False)
        deadline = time.time() + timeout
        for piece in pieces:
            view = memoryview(piece)
            while view:
                readable, writable, _ = select.select([s], [s], [], max(0.0, deadline - time.time()))
                if readable or time.time() > deadline:
                    raise Answered
                if writable:
                    try:
                        n = s.send(view)
                    except BlockingIOError:
                        continue
                    sent, view = sent + n, view[n:]
    except Answered:
        pass
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server answered and closed: read what it said
    except OSError as e:
        s.close()
        return f"no answer ({type(e).__name__})", sent
    try:
        s.setblocking(True)
        s.settimeout(timeout)
        line = s.makefile("rb").readline(1000)
        return status_of(line), sent
    except OSError as e:
        return f"no answer ({type(e).__name__})", sent
    finally:
        s.close()


# ---- body --------------------------------------------------------------------

def big_spec_with_length(ctx):
    body = spec_padded(BIG_SPEC_BYTES)
    status, _ = send_until_answered(
        ctx.server, head(ctx.server, "POST", "/v1/jobs", "Content-Type: application/json",
                         f"Content-Length: {len(body)}"), [body], ctx.server.timeout)
    return status


def big_spec_expecting_continue(ctx):
    """Announced too large with `Expect: 100-continue`: the refusal comes instead of 100 Continue."""
    request = head(ctx.server, "POST", "/v1/jobs", "Content-Type: application/json",
                   f"Content-Length: {BIG_SPEC_BYTES}", "Expect: 100-continue")
    return ctx.server.raw(request)


def big_spec_chunked(ctx):
    status, _ = send_until_answered(
        ctx.server, head(ctx.server, "POST", "/v1/jobs", "Content-Type: application/json",
                         "Transfer-Encoding: chunked"), chunked(spec_padded(BIG_SPEC_BYTES)), ctx.server.timeout)
    return status


def huge_chunked(ctx):
    status, sent = send_until_answered(
        ctx.server, head(ctx.server, "POST", "/v1/jobs", "Content-Type: application/json",
                         "Transfer-Encoding: chunked"), chunked_filler(HUGE_BODY_BYTES), ctx.server.timeout)
    detail = f"the client got {sent / MIB:.1f} MiB of {HUGE_BODY_BYTES // MIB} into the connection before the answer"
    if sent >= HUGE_BODY_BYTES:
        return f"{status} after the whole body", detail
    if sent > HUGE_BODY_MAX_SENT:
        return f"{status} after {sent / MIB:.0f} MiB", detail
    return f"{status}, stopped near the limit", detail


def post_without_length(ctx):
    """No Content-Length, no Transfer-Encoding: no body, whatever follows the head."""
    request = head(ctx.server, "POST", "/v1/jobs", "Content-Type: application/json", "Connection: close")
    return ctx.server.raw(request + json.dumps({"model": "small_cnn", "dataset": "synthetic", "epochs": 1}).encode())


# ---- cross-site --------------------------------------------------------------

def own_origin(server):
    return f"http://127.0.0.1:{server.port}"


def cancel_queued_job(ctx, origin):
    """A job queued behind a slot holder is cancelled with an empty body, as a
    page's form or fetch sends it; (status, the job's state afterwards)."""
    with ctx.slot_holder(ctx.server):
        status, job = ctx.submit(json.dumps(ctx.valid).encode())
        if status != 201:
            return f"setup: the job got {status}"
        answer, _ = ctx.server.call("POST", f"/v1/jobs/{job['id']}/cancel", b"",
                                    {"Origin": origin(ctx.server), "Content-Type": None})
        if answer == 202:
            # Accepted: the supervisor's next pass moves the queued job, so wait
            # for that move rather than read the state the instant the answer came.
            state = ctx.server.wait_final(job["id"])["state"]
        else:
            state = ctx.server.job(job["id"])["state"]
            # What a client without a browser may do: no Origin.
            ctx.server.call("POST", f"/v1/jobs/{job['id']}/cancel", b"", {"Content-Type": None})
    ctx.server.wait_final(job["id"])
    return f"{answer}, job {state}"


def cancel_from_foreign_origin(ctx):
    return cancel_queued_job(ctx, lambda server: FOREIGN_ORIGIN)


def cancel_from_own_origin(ctx):
    return cancel_queued_job(ctx, own_origin)


# ---- deadlines ---------------------------------------------------------------

def deadline_server(ctx):
    return ctx.extra_server("deadlines", DEADLINE_FLAGS)


def connect(server, source="127.0.0.1", timeout=10.0):
    return socket.create_connection((server.host, server.port), timeout=timeout, source_address=(source, 0))


def healthz_from(server, source, timeout):
    """(status, seconds) of GET /healthz from another loopback address."""
    started = time.time()
    try:
        with connect(server, source, timeout) as s:
            s.sendall(head(server, "GET", "/healthz", "Connection: close"))
            status = status_of(s.makefile("rb").readline(1000))
    except OSError as e:
        status = f"no answer ({type(e).__name__})"
    return status, time.time() - started


def slow_headers(server, source, index, outcomes):
    """A request whose headers never end: one line every SLOW_LINE_EVERY_S.
    Records how it ended: the server's status, "closed", or "still open"."""
    try:
        s = connect(server, source)
    except OSError as e:
        outcomes[index] = f"no connection ({type(e).__name__})"
        return
    started = time.time()
    try:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % server.port)
        while time.time() - started < SLOW_CLOSED_BOUND_S:
            s.settimeout(SLOW_LINE_EVERY_S)
            try:
                data = s.recv(100)
                outcomes[index] = status_of(data.split(b"\r\n")[0]) if data else "closed"
                return
            except socket.timeout:
                s.sendall(b"X-Slow: %d\r\n" % index)
        outcomes[index] = "still open"
    except OSError:
        outcomes[index] = "closed"
    finally:
        s.close()


def slow_clients(ctx, sources):
    """As many slow-header connections as the server has threads, from `sources`;
    /healthz, asked from another address a moment later, must answer within
    HEALTHZ_BOUND_S, and every slow connection must be closed by the server."""
    server = deadline_server(ctx)
    outcomes = {}
    threads = [threading.Thread(target=slow_headers, args=(server, sources[i], i, outcomes), daemon=True)
               for i in range(DEADLINE_THREADS)]
    for t in threads:
        t.start()
    time.sleep(0.5)  # the slow connections first; the bound below is far above this
    status, seconds = healthz_from(server, "127.0.0.2", HEALTHZ_BOUND_S + 5)
    for t in threads:
        t.join(SLOW_CLOSED_BOUND_S + 5)
    closed = sum(1 for o in outcomes.values() if o in ("408", "429", "closed"))
    ends = ", ".join(f"{o}: {sum(1 for v in outcomes.values() if v == o)}" for o in sorted(set(outcomes.values())))
    detail = f"/healthz in {seconds:.2f} s; the slow connections ended: {ends}"
    healthz = f"healthz {status}" if seconds <= HEALTHZ_BOUND_S else f"healthz {status} after {seconds:.1f} s"
    return f"{healthz}, {closed} of {DEADLINE_THREADS} closed", detail


def slow_clients_one_address(ctx):
    return slow_clients(ctx, ["127.0.0.1"] * DEADLINE_THREADS)


def slow_clients_many_addresses(ctx):
    return slow_clients(ctx, [f"127.0.0.{10 + i}" for i in range(DEADLINE_THREADS)])


def connections_over_the_limit(ctx):
    """PER_CLIENT kept-alive connections from one address, each answered once
    (so the server holds them), then one more."""
    server = deadline_server(ctx)
    held = []
    try:
        for _ in range(PER_CLIENT):
            c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10, source_address=("127.0.0.3", 0))
            c.request("GET", "/healthz")
            c.getresponse().read()
            held.append(c)
        c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10, source_address=("127.0.0.3", 0))
        held.append(c)
        try:
            c.request("GET", "/healthz")
            r = c.getresponse()
            r.read()
        except (OSError, http.client.HTTPException) as e:
            return f"no answer ({type(e).__name__})"
        return f"{r.status}, Retry-After {r.getheader('Retry-After')}"
    finally:
        for c in held:
            c.close()


def open_stream(server, job_id, source):
    """(socket, status) of GET /v1/jobs/ID/events from `source`."""
    s = connect(server, source)
    s.sendall(head(server, "GET", f"/v1/jobs/{job_id}/events"))
    return s, status_of(s.recv(200).split(b"\r\n")[0])


def stream_left_frees_its_place(ctx):
    """STREAMS event streams of a quiet job fill the places; one more gets 503;
    the first client leaves; a new stream must get in within STREAM_FREED_BOUND_S."""
    server = ctx.extra_server("streams", STREAM_FLAGS)
    streams = []
    try:
        with ctx.slot_holder(server) as job_id:
            for i in range(STREAMS):
                s, status = open_stream(server, job_id, f"127.0.0.{20 + i}")
                streams.append(s)
                if status != "200":
                    return f"setup: stream {i + 1} got {status}"
            s, full = open_stream(server, job_id, "127.0.0.29")
            s.close()
            streams.pop(0).close()
            left = time.time()
            attempt, status = 0, full
            while status != "200" and time.time() - left < STREAM_FREED_BOUND_S + 10:
                time.sleep(0.05)
                s, status = open_stream(server, job_id, f"127.0.0.{30 + attempt % 200}")
                attempt += 1
                (streams.append if status == "200" else lambda x: x.close())(s)
            seconds = time.time() - left
    finally:
        for s in streams:
            s.close()
    detail = f"a new stream got in {seconds:.2f} s after the first client left"
    after = "200" if seconds <= STREAM_FREED_BOUND_S else f"{status} after {seconds:.1f} s"
    return f"{full} while full, {after} after one left", detail


# ---- token off loopback ------------------------------------------------------

def token_file(ctx, name, content):
    path = os.path.join(ctx.base, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(content)
    return path


def wildcard_server(ctx):
    return ctx.extra_server("wildcard", ["--token-file", token_file(ctx, "token", TOKEN.encode())],
                            listen="0.0.0.0:0")


def statuses(server, requests, headers=None):
    return ", ".join(str(server.call(method, path, body, headers)[0]) for method, path, body in requests)


TOKEN_ROUTES = [("GET", "/v1/jobs", b""), ("GET", "/metrics", b""),
                ("POST", "/v1/jobs", json.dumps({"model": "small_cnn", "dataset": "synthetic", "epochs": 1}).encode())]


def reads_without_token(ctx):
    return statuses(wildcard_server(ctx), TOKEN_ROUTES[:2])


def submit_without_token(ctx):
    return statuses(wildcard_server(ctx), TOKEN_ROUTES[2:])


def reads_with_token(ctx):
    return statuses(wildcard_server(ctx), TOKEN_ROUTES[:2], {"Authorization": f"Bearer {TOKEN}"})


def healthz_without_token(ctx):
    return statuses(wildcard_server(ctx), [("GET", "/healthz", b"")])


def ipv6_loopback(ctx):
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
    except OSError as e:
        raise Skipped(f"this machine has no IPv6 loopback ({e.strerror})")
    try:
        server = ctx.extra_server("ipv6", [], listen="[::1]:0", host="::1")
    except RuntimeError as e:
        return f"refused: {ctx.log_tail('ipv6')}"[:80] if "did not start" in str(e) else f"error: {e}"[:80]
    return f"starts, /healthz {server.call('GET', '/healthz')[0]}"


def start_refused(ctx, name, flags, mentions):
    """`tula serve` with `flags` must exit non-zero, its message holding each of `mentions`."""
    base = os.path.join(ctx.base, name)
    os.makedirs(base, exist_ok=True)
    ready = os.path.join(base, "ready.json")
    proc = subprocess.Popen([ctx.tula, "serve", "--db", os.path.join(base, "jobs.db"), "--workdir",
                             os.path.join(base, "work"), "--ready-file", ready, *flags],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = time.time() + 30
    while proc.poll() is None and not os.path.exists(ready) and time.time() < deadline:
        time.sleep(0.05)
    if proc.poll() is None:
        proc.terminate()
        proc.wait(30)
        return "accepted" if os.path.exists(ready) else "neither started nor exited within 30 s"
    message = proc.stdout.read().decode(errors="replace")
    lacking = [m for m in mentions if m not in message]
    return f"refused (exit {proc.returncode})" + (f", message lacks {lacking[0]!r}" if lacking else ""), \
        message.strip().splitlines()[-1][:160] if message.strip() else "no message"


def unresolvable_name_without_token(ctx):
    return start_refused(ctx, "invalid-name", ["--listen", "127.example.invalid:0"], ("--token-file",))


def token_with_nul(ctx):
    path = token_file(ctx, "nul-token", b"0123456789abcdef\0tail-of-the-token")
    return start_refused(ctx, "token-nul", ["--listen", "127.0.0.1:0", "--token-file", path], ("byte",))


# ---- headers -----------------------------------------------------------------

ALLOWED_SOURCES = {"'self'", "'none'", "'unsafe-inline'", "data:"}


def header_faults(response):
    """What an answer lacks of the security headers (empty when none)."""
    faults = []
    csp = response.getheader("Content-Security-Policy") or ""
    directives = [d.split() for d in csp.split(";") if d.strip()]
    foreign = [src for d in directives for src in d[1:] if src not in ALLOWED_SOURCES]
    names = {d[0] for d in directives}
    if not csp or foreign or "frame-ancestors" not in names or "default-src" not in names:
        faults.append("CSP " + (f"allows {foreign[0]}" if foreign else "missing or incomplete"))
    if (response.getheader("X-Frame-Options") or "").upper() != "DENY":
        faults.append("X-Frame-Options")
    if (response.getheader("X-Content-Type-Options") or "").lower() != "nosniff":
        faults.append("nosniff")
    if "no-store" not in (response.getheader("Cache-Control") or ""):
        faults.append("no-store")
    return faults


def security_headers_of(path):
    def run(ctx):
        c = http.client.HTTPConnection("127.0.0.1", ctx.server.port, timeout=ctx.server.timeout)
        try:
            c.request("GET", path)
            r = c.getresponse()
            r.read()
        finally:
            c.close()
        faults = header_faults(r)
        kind = (r.getheader("Content-Type") or "").split(";")[0]
        return ("CSP, DENY, nosniff, no-store" if not faults else "lacks " + ", ".join(faults)), \
            f"{r.status} {kind}: {r.getheader('Content-Security-Policy')}"
    return run
