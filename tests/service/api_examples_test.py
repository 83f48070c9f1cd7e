#!/usr/bin/python3
"""Replays the examples of docs/api.md against a fresh `tula serve`.

Each example is a fenced ```http block after an `<!-- example -->` marker,
followed by `→ STATUS` and optionally a ```json block. The request is sent as
written; the status must match, and every key of the shown answer must be
present in the real one, recursively through objects (values that vary, such
as times, are not compared; a shown list is not compared element by element
unless it is non-empty, when its first element's keys are checked in the
real list's first element). A `<!-- wait: job N STATE -->` marker waits (up
to 300 s) for the job to reach that state before the next example.

  tests/service/api_examples_test.py TULA_BINARY docs/api.md
"""
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

EXAMPLE = re.compile(r"<!-- (example|wait: job (\d+) (\w+)) -->\n(?:```http\n(.*?)\n```\n→ (\d+)\n(?:```json\n(.*?)\n```)?)?",
                     re.S)


def keys_present(shown, real, where="answer"):
    if isinstance(shown, dict):
        if not isinstance(real, dict):
            return f"{where}: expected an object, got {json.dumps(real)[:200]}"
        for k, v in shown.items():
            if k not in real:
                return f"{where}: no key '{k}' in {json.dumps(real)[:300]}"
            problem = keys_present(v, real[k], f"{where}.{k}")
            if problem:
                return problem
    elif isinstance(shown, list) and shown:
        if not isinstance(real, list) or not real:
            return f"{where}: expected a non-empty list, got {json.dumps(real)[:200]}"
        return keys_present(shown[0], real[0], f"{where}[0]")
    return None


def request(port, text):
    head, _, body = text.partition("\n\n")
    lines = head.split("\n")
    method, path = lines[0].split(" ", 1)
    headers = dict(line.split(": ", 1) for line in lines[1:] if line)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request(method, path, body=body.encode() if body else None, headers=headers)
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, data


def main():
    tula, doc = sys.argv[1], sys.argv[2]
    text = open(doc, encoding="utf-8").read()
    examples = EXAMPLE.findall(text)
    if len([e for e in examples if e[0] == "example"]) < 10:
        sys.exit(f"{doc}: found only {len(examples)} examples; the marker format changed?")
    with tempfile.TemporaryDirectory() as tmp:
        ready = os.path.join(tmp, "ready.json")
        log = open(os.path.join(tmp, "server.log"), "w")
        server = subprocess.Popen([tula, "serve", "--listen", "127.0.0.1:0", "--db", os.path.join(tmp, "jobs.db"),
                                   "--workdir", os.path.join(tmp, "work"), "--ready-file", ready, "--poll", "0.2"],
                                  stdout=log, stderr=subprocess.STDOUT)
        failures = []
        try:
            deadline = time.time() + 60
            while not os.path.exists(ready):
                if time.time() > deadline or server.poll() is not None:
                    sys.exit("the server did not start:\n" + open(os.path.join(tmp, "server.log")).read())
                time.sleep(0.05)
            port = json.load(open(ready))["port"]
            for kind, wait_id, wait_state, req, status, answer in examples:
                if kind.startswith("wait"):
                    deadline = time.time() + 300
                    while True:
                        _, data = request(port, f"GET /v1/jobs/{wait_id}")
                        state = json.loads(data).get("state")
                        if state == wait_state:
                            break
                        if time.time() > deadline:
                            sys.exit(f"gave up after 300 s waiting for job {wait_id} to be {wait_state} (it is {state})")
                        time.sleep(0.2)
                    continue
                got, data = request(port, req)
                name = req.split("\n")[0]
                if got != int(status):
                    failures.append(f"{name}: status {got}, the docs say {status}: {data[:300]!r}")
                    continue
                if answer:
                    shown = json.loads(re.sub(r"\.\.\.", "", answer)) if answer.strip() else None
                    problem = keys_present(shown, json.loads(data))
                    if problem:
                        failures.append(f"{name}: {problem}")
                print(f"ok   {name} -> {got}")
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=120)
            except subprocess.TimeoutExpired:
                server.kill()
    for f in failures:
        print("FAIL " + f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
