#!/usr/bin/env python3
"""The headline of `tula tune`: wall time, cost and final accuracy to a fixed
test accuracy on Fashion-MNIST, for
  (a) a common default: one worker, batch 128, SGD;
  (b) standard large batch: 2 workers x 4096 (global 8192), SGD with linear
      scaling from 128 and a 0.5-epoch warmup (Goyal et al.);
  (c) tula tune --objective knee (profile and pilot included);
  (d) tula tune --objective fastest / cheapest;
  (r) a re-plan that pays: tune started at 2x4 (global batch 8) with and
      without re-planning; two workers, so the job measures its own noise scale.
Every run appends one row to --out (JSON lines); rows already there (same
model, target, method) are skipped, so the script resumes. Cost is the wall
time at --price per machine-hour (this machine is billed whole)."""
import argparse
import json
import math
import os
import shutil
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def done(out, key):
    if not os.path.exists(out):
        return False
    with open(out) as f:
        return any(all(json.loads(l).get(k) == v for k, v in key.items()) for l in f if l.strip())


def append(out, row):
    with open(out, "a") as f:
        f.write(json.dumps(row) + "\n")
        f.flush()
        os.fsync(f.fileno())


def train_row(args, method, extra, workers):
    run_dir = os.path.join(args.work, f"{args.model}-{method}")
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    metrics = os.path.join(run_dir, "metrics.jsonl")
    cmd = [args.tula, "train", "--model", args.model, "--dataset", "fashion-mnist", "--epochs", str(args.max_epochs),
           "--target-accuracy", str(args.target), "--metrics", metrics, "--progress", "none",
           "--momentum", "0.9", "--weight-decay", "5e-4", "--schedule", "constant", "--seed", "0"] + extra
    if workers > 1:
        cmd += ["--nproc", str(workers)]
    start = time.time()
    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=open(os.path.join(run_dir, "log"), "w")).returncode
    wall = time.time() - start
    best, steps, epochs = 0.0, 0, 0.0
    for line in open(metrics):
        r = json.loads(line)
        if r.get("type") == "iter":
            steps = r["step"]
        if "test_accuracy" in r:
            best = max(best, r["test_accuracy"])
            epochs = r.get("epoch", epochs)
    return {"wall_s": wall, "exit": rc, "best_accuracy": best, "reached": best >= args.target, "steps": steps,
            "cost": wall / 3600 * args.price, "command": " ".join(cmd)}


def tune_row(args, method, extra):
    out_dir = os.path.join(args.work, f"{args.model}-{method}")
    shutil.rmtree(out_dir, ignore_errors=True)
    cmd = [args.tula, "tune", "--model", args.model, "--dataset", "fashion-mnist", "--target-accuracy",
           str(args.target), "--max-epochs", str(args.max_epochs), "--resources", "local", "--price-per-hour",
           str(args.price), "--progress", "lines", "--out", out_dir] + extra
    start = time.time()
    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=open(out_dir + ".log", "w")).returncode
    wall = time.time() - start
    rep = json.load(open(os.path.join(out_dir, "report.json")))
    m = rep.get("measured") or {}
    return {"wall_s": wall, "exit": rc, "best_accuracy": m.get("best_accuracy") or 0.0,
            "reached": rep.get("state") == "succeeded", "steps": m.get("steps"), "cost": m.get("cost"),
            "chosen": rep.get("chosen"), "predicted": rep.get("predicted"), "phases": rep.get("phases"),
            "remaining_error": rep.get("remaining_error"),
            "replans": [r for r in rep.get("replans", []) if r.get("applied")], "state": rep.get("state"),
            "reason": rep.get("reason"), "report": os.path.join(out_dir, "report.json"), "command": " ".join(cmd)}


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--tula", default=os.path.join(HERE, "..", "build", "src", "tula"))
    p.add_argument("--model", default="small_cnn")
    p.add_argument("--target", type=float, default=0.85)
    p.add_argument("--max-epochs", type=int, default=10)
    p.add_argument("--price", type=float, default=0.10)
    p.add_argument("--methods", default="a,b,c,d-fastest,d-cheapest,r-replan,r-fixed")
    p.add_argument("--work", default="/tmp/tula-headline")
    p.add_argument("--out", default=os.path.join(HERE, "results", "tune_headline.jsonl"))
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    half_epoch = lambda b: str(max(1, math.ceil(60000 / b / 2)))
    runs = {
        "a": lambda: train_row(args, "a", ["--batch-size", "128", "--optimizer", "sgd", "--lr", "0.05",
                                           "--eval-every", half_epoch(128)], 1),
        "b": lambda: train_row(args, "b", ["--batch-size", "4096", "--optimizer", "sgd", "--lr", "0.05",
                                           "--lr-scaling", "linear", "--reference-batch", "128",
                                           "--warmup-epochs", "0.5", "--eval-every", half_epoch(8192)], 2),
        "c": lambda: tune_row(args, "c", ["--objective", "knee"]),
        "d-fastest": lambda: tune_row(args, "d-fastest", ["--objective", "fastest"]),
        "d-cheapest": lambda: tune_row(args, "d-cheapest", ["--objective", "cheapest"]),
        "r-replan": lambda: tune_row(args, "r-replan", ["--start-at", "2x4"]),
        "r-fixed": lambda: tune_row(args, "r-fixed", ["--start-at", "2x4", "--no-replan"]),
    }
    for method in args.methods.split(","):
        key = {"model": args.model, "target": args.target, "method": method}
        if done(args.out, key):
            print(f"skip {method}: already in {args.out}")
            continue
        print(f"run {method} ...", flush=True)
        row = dict(key, **runs[method]())
        row["price_per_hour"] = args.price
        row["commit"] = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"], capture_output=True,
                                       text=True).stdout.strip()
        append(args.out, row)
        print(json.dumps({k: row[k] for k in ("method", "wall_s", "best_accuracy", "reached", "cost")}), flush=True)


if __name__ == "__main__":
    main()
