#!/usr/bin/env python3
"""Does `tula tune` give up on a target the plain default reaches? Held-out cases (models and targets no tune bench
and no change to the give-up rule used), each run twice on this machine:

  default  `tula train`, 1 worker, batch 128, SGD 0.05 (momentum 0.9, weight decay 5e-4), constant rate, to the
           target or --max-epochs
  tune     `tula tune --objective knee --on-out-of-reach continue`: a verdict of out of reach is written into the
           report (give_up) and the job trains on, so each verdict is checked by the same job

A give-up is wrong when the job that gave it (or the default) reaches the target within --max-epochs.
One row per case and method in bench/results/give_up/heldout.jsonl; rows already there are skipped.

  /usr/bin/python3 bench/give_up_heldout.py --tula build/src/tula [--cases NAME,...]
  /usr/bin/python3 bench/give_up_heldout.py --table
"""
import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time

from bench_common import ROOT, append_row, git_state

# Fixed before the first run. lenet5 to 87% is the case that gave up wrongly under the rule before (stopped at 82%
# after about a minute, "forecast at 32.7 epochs"); the others are held out the same way.
CASES = {
    "lenet5-87": {"model": "lenet5", "target": 0.87, "max_epochs": 30, "seed": 0},
    "lenet5-91": {"model": "lenet5", "target": 0.91, "max_epochs": 12, "seed": 1},
}
RESULTS = os.path.join(ROOT, "bench", "results", "give_up", "heldout.jsonl")


def done(case, method):
    if not os.path.exists(RESULTS):
        return False
    with open(RESULTS) as f:
        return any(json.loads(l)["case"] == case and json.loads(l)["method"] == method for l in f if l.strip())


def evaluations(metrics):
    out = []
    for line in open(metrics):
        r = json.loads(line)
        if r.get("type") in ("eval", "epoch") and "test_accuracy" in r:
            out.append(r)
    return out


def run_default(tula, c, work):
    metrics = os.path.join(work, "metrics.jsonl")
    cmd = [tula, "train", "--model", c["model"], "--dataset", "fashion-mnist", "--epochs", str(c["max_epochs"]),
           "--target-accuracy", str(c["target"]), "--batch-size", "128", "--optimizer", "sgd", "--lr", "0.05",
           "--momentum", "0.9", "--weight-decay", "5e-4", "--schedule", "constant", "--seed", str(c["seed"]),
           "--metrics", metrics, "--progress", "none"]
    start = time.time()
    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    evals = evaluations(metrics)
    reached = next((e for e in evals if e["test_accuracy"] >= c["target"]), None)
    return {"exit": rc, "wall_s": time.time() - start, "best_accuracy": max((e["test_accuracy"] for e in evals), default=0),
            "reached": reached is not None, "reached_epoch": (reached["step"] / 469) if reached else None,
            "give_up": None, "command": " ".join(cmd[1:])}


def run_tune(tula, c, work):
    out = os.path.join(work, "job")
    cmd = [tula, "tune", "--model", c["model"], "--dataset", "fashion-mnist", "--target-accuracy", str(c["target"]),
           "--max-epochs", str(c["max_epochs"]), "--objective", "knee", "--resources", "local", "--seed",
           str(c["seed"]), "--on-out-of-reach", "continue", "--progress", "lines", "--out", out]
    start = time.time()
    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    rep = json.load(open(os.path.join(out, "report.json")))
    m = rep.get("measured") or {}
    reached = rep.get("state") == "succeeded"
    kept = os.path.join(os.path.dirname(RESULTS), f"{c['model']}-{int(round(c['target'] * 100))}-tune.report.json")
    shutil.copyfile(os.path.join(out, "report.json"), kept)
    return {"exit": rc, "wall_s": time.time() - start, "best_accuracy": m.get("best_accuracy"), "reached": reached,
            "reached_epoch": m.get("epochs") if reached else None, "give_up": rep.get("give_up"),
            "chosen": rep.get("chosen"), "state": rep.get("state"), "reason": rep.get("reason"),
            "command": " ".join(cmd[1:])}


def table():
    rows = [json.loads(l) for l in open(RESULTS)] if os.path.exists(RESULTS) else []
    print("| case | method | reached | epochs | best | verdict of out of reach | right? | wall |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        g = r.get("give_up")
        verdict = f"epoch {g['epoch']:.2f} (best {g['best_accuracy']:.1%})" if g else "none"
        right = "-" if not g else ("wrong" if r["reached"] else "right")
        ep = f"{r['reached_epoch']:.2f}" if r.get("reached_epoch") is not None else "-"
        print(f"| {r['case']} | {r['method']} | {'yes' if r['reached'] else 'no'} | {ep} | {r['best_accuracy']:.1%} | "
              f"{verdict} | {right} | {r['wall_s']:.0f} s |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tula", default=os.path.join(ROOT, "build", "src", "tula"))
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--methods", default="default,tune")
    p.add_argument("--table", action="store_true")
    args = p.parse_args()
    if not args.table:
        os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
        state = git_state()
        for name in args.cases.split(","):
            for method in args.methods.split(","):
                if done(name, method):
                    continue
                work = tempfile.mkdtemp(prefix=f"tula-giveup-{name}-{method}-")
                run = run_default if method == "default" else run_tune
                row = {"case": name, "method": method, **CASES[name], **run(os.path.abspath(args.tula), CASES[name], work),
                       **state}
                append_row(RESULTS, row)
                print(json.dumps({k: row[k] for k in ("case", "method", "reached", "reached_epoch", "best_accuracy",
                                                      "wall_s")}), flush=True)
                shutil.rmtree(work, ignore_errors=True)
    table()


if __name__ == "__main__":
    main()
