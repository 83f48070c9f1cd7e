"""The probes of bench/service_attacks.py for a hostile network (issue 81):
requests a proxy in front could read differently (smuggling), header floods,
slow clients and event streams from many addresses, duplicate JSON keys,
control bytes in messages, and data files that link out of the data root.

Each function is a probe's run(ctx), as in http_attacks.py: it returns the
text it saw, or (that text, a detail). Every wait is bounded.
"""
import json
import os
import socket
import threading
import time

import http_attacks as h

HEAD_CAP = 64 * 1024          # the server's cap on a request's head
HEALTHZ_BOUND_S = 1.0         # the target: no /healthz answer later than 1 s under attack
STREAMS_TRIED = 300           # event streams opened, one address each


def exchange(server, data, timeout=10.0):
    """(first status, whether the server closed the connection with no second answer)."""
    with socket.create_connection((server.host, server.port), timeout=timeout) as s:
        s.sendall(data)
        got = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
        except OSError:
            pass
    answers = got.count(b"HTTP/1.1 ")
    return h.status_of(got.split(b"\r\n")[0]), answers == 1, got


def smuggled(ctx, head_lines, body=b"", mention=b""):
    server = ctx.server
    data = (f"POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Type: application/json\r\n"
            + head_lines + "\r\n").encode() + body
    status, closed, got = exchange(server, data)
    said = "" if not mention or mention in got else f", no {mention.decode()!r}"
    return f"{status}{', closed' if closed else ', served on'}{said}"


def spec_bytes(ctx):
    return json.dumps(ctx.valid).encode()


def request_line_then_get(ctx):
    server = ctx.server
    status, closed, _ = exchange(server, f"XYZ\r\nGET /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
    return f"{status}{', closed' if closed else ', served on'}"


def obs_folded_length(ctx):
    return smuggled(ctx, "Content-Length: 0\r\n 36\r\n", spec_bytes(ctx), b"obs-fold")


def space_before_colon(ctx):
    body = spec_bytes(ctx)
    return smuggled(ctx, "Transfer-Encoding : chunked\r\n", b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n",
                    b"whitespace before its colon")


def chunk_without_crlf(ctx):
    """The data of one chunk, then at once a second request: no CRLF after the data, no 0 chunk."""
    body = spec_bytes(ctx)
    after = f"GET /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1:{ctx.server.port}\r\n\r\n".encode()
    return smuggled(ctx, "Transfer-Encoding: chunked\r\n", b"%x\r\n" % len(body) + body + after,
                    b"malformed chunked body")


def two_chunked_encodings(ctx):
    body = spec_bytes(ctx)
    return smuggled(ctx, "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
                    b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n", b"2 Transfer-Encoding headers")


def header_flood(lines):
    """`lines` (a generator of header lines) sent until the server answers; its status."""
    def run(ctx):
        server = ctx.server
        start = f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n".encode()
        status, sent = h.send_until_answered(server, start, lines(), 30)
        return status, f"{sent} header bytes got out before the answer (the cap is {HEAD_CAP})"
    return run


def small_headers():
    for i in range(100_000):
        yield b"X-%d: 1\r\n" % i


def long_header_lines():
    for i in range(1500):  # 12 MB in all
        yield b"X-%d: " % i + b"a" * 8192 + b"\r\n"


def healthz_while(ctx, open_attack, name):
    """/healthz from a fresh address while `open_attack(server)` holds its sockets."""
    server = ctx.server
    socks = []
    try:
        socks = open_attack(server)
        status, seconds = h.healthz_from(server, "127.0.0.250", 30)
    finally:
        for s in socks:
            s.close()
    verdict = f"healthz {status}" + ("" if seconds <= HEALTHZ_BOUND_S else f" after {seconds:.1f} s")
    return verdict, f"{name}: /healthz in {seconds * 1000:.0f} ms with {len(socks)} attack connections open"


def slow_heads(addresses, per_address):
    def open_attack(server):
        socks = []
        for a in range(addresses):
            for _ in range(per_address):
                try:
                    s = h.connect(server, f"127.0.{1 + a // 200}.{10 + a % 200}")
                    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1\r\n")
                    socks.append(s)
                except OSError:
                    pass
        return socks
    return lambda ctx: healthz_while(ctx, open_attack, f"{addresses} addresses x {per_address} slow heads")


def event_streams_many_addresses(ctx):
    """STREAMS_TRIED event streams, one address each: every one answered (200 or 503 with
    Retry-After) within the bound, and /healthz answers meanwhile."""
    server = ctx.server
    status, job = ctx.submit(json.dumps({**ctx.valid, "epochs": 1}).encode())
    if status != 201:
        return f"setup: submit got {status}"
    ctx.server.call("POST", f"/v1/jobs/{job['id']}/cancel")
    held, answered, unanswered = [], {}, 0
    try:
        for i in range(STREAMS_TRIED):
            try:
                s = h.connect(server, f"127.0.{3 + i // 200}.{10 + i % 200}", timeout=HEALTHZ_BOUND_S + 4)
                s.sendall(h.head(server, "GET", f"/v1/jobs/{job['id']}/events"))
                line = s.recv(200).split(b"\r\n")[0]
                code = h.status_of(line)
                answered[code] = answered.get(code, 0) + 1
                held.append(s)
            except OSError:
                unanswered += 1
        status, seconds = h.healthz_from(server, "127.0.0.251", 30)
    finally:
        for s in held:
            s.close()
    codes = ", ".join(f"{k}: {v}" for k, v in sorted(answered.items()))
    health = f"healthz {status}" + ("" if seconds <= HEALTHZ_BOUND_S else f" after {seconds:.1f} s")
    return f"{unanswered} unanswered, {health}", f"answers {codes}; /healthz in {seconds * 1000:.0f} ms"


def data_files_link_outside(ctx):
    """A data_dir inside the root whose files are symlinks to files outside it: the submit
    passes (the folder is inside), and the job's processes must refuse the files, naming one."""
    outside = os.path.join(os.path.dirname(ctx.root), "outside-files")
    os.makedirs(outside, exist_ok=True)
    folder = os.path.join(ctx.root, "mnist-links")
    os.makedirs(folder, exist_ok=True)
    for name in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                 "t10k-labels-idx1-ubyte"):
        with open(os.path.join(outside, name), "w") as f:
            f.write("not the data: outside the data root")
        os.symlink(os.path.join(outside, name), os.path.join(folder, name))
    status, job = ctx.submit(json.dumps({"model": "small_cnn", "dataset": "mnist", "epochs": 1,
                                         "data_dir": folder}).encode())
    if status != 201:
        return f"{status} at the submit"
    end = ctx.server.wait_final(job["id"])
    if not end or end["state"] not in ("succeeded", "failed", "cancelled"):
        return f"not ended within {ctx.server.timeout} s"
    logs = os.path.join(ctx.server.work, "jobs", str(job["id"]), "logs")
    text = (end.get("reason") or "")
    for name in sorted(os.listdir(logs)) if os.path.isdir(logs) else []:
        text += open(os.path.join(logs, name), errors="replace").read()
    if end["state"] == "failed" and folder in text and "leads outside the data root" in text:
        return "failed, names the path"
    return f"{end['state']}: {(end.get('reason') or '')[:70]}"
