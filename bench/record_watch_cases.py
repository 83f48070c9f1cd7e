#!/usr/bin/env python3
"""Records `tula tune` jobs whose watches decided something, for the watch-decision tests
(tests/tune/watch_test.cpp) to replay: each case keeps the job's profile.json, tune.json, report.json and its
metrics.jsonl (gzipped) under bench/results/watch_cases/NAME/, with case.json saying how it ran and at which
commit. A case already recorded is skipped (delete its folder to record it again).

  /usr/bin/python3 bench/record_watch_cases.py --tula build/src/tula [--cases resize,stop]

Cases (small_cnn on Fashion-MNIST, this machine, seed 0):
  resize  started by hand at 2 workers x 4 (--start-at 2x4), far from the knee: a re-plan should move it
  stop    a target above what small_cnn reaches within --max-epochs: the forecast should give it up
"""
import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

from bench_common import ROOT, git_state

CASES = {
    "resize": ["--target-accuracy", "0.80", "--max-epochs", "4", "--start-at", "2x4"],
    "stop": ["--target-accuracy", "0.93", "--max-epochs", "3"],
}


def record(tula, name, extra, out_root):
    dest = os.path.join(out_root, name)
    if os.path.exists(os.path.join(dest, "case.json")):
        print(f"{name}: recorded already ({dest})")
        return
    work = tempfile.mkdtemp(prefix=f"tula-watch-{name}-")
    job = os.path.join(work, "job")
    cmd = [tula, "tune", "--model", "small_cnn", "--dataset", "fashion-mnist", "--resources", "local",
           "--objective", "knee", "--seed", "0", "--progress", "lines", "--out", job] + extra
    print(f"{name}: {' '.join(cmd)}", flush=True)
    rc = subprocess.run(cmd, stdout=sys.stdout, stderr=sys.stderr).returncode
    os.makedirs(dest, exist_ok=True)
    for f in ("profile.json", "tune.json", "report.json"):
        shutil.copy(os.path.join(job, f), os.path.join(dest, f))
    with open(os.path.join(job, "metrics.jsonl"), "rb") as src, gzip.open(os.path.join(dest, "metrics.jsonl.gz"), "wb") as out:
        shutil.copyfileobj(src, out)
    with open(os.path.join(dest, "report.json")) as f:
        report = json.load(f)
    case = {"name": name, "command": " ".join(cmd[1:]), "exit_code": rc, "state": report["state"],
            "reason": report["reason"], "replans": [[r["step"], r["applied"]] for r in report["replans"]],
            **git_state()}
    with open(os.path.join(dest, "case.json"), "w") as f:
        json.dump(case, f, indent=2)
        f.write("\n")
    shutil.rmtree(work, ignore_errors=True)
    print(f"{name}: {report['state']} ({report['reason']}); re-plans {case['replans']}", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tula", default=os.path.join(ROOT, "build", "src", "tula"))
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "watch_cases"))
    args = p.parse_args()
    git_state()  # taken as the script starts
    for name in args.cases.split(","):
        record(os.path.abspath(args.tula), name, CASES[name], args.out)


if __name__ == "__main__":
    main()
