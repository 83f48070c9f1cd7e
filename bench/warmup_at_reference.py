#!/usr/bin/python3
"""Epochs to the target at the reference batch with and without the warmup: small_cnn, 2 workers x 64 (B = 128,
the batch tune's rate is tuned at and its knee ran at in round 19), to 83% on the 5,000-sample validation split read
every quarter epoch, constant rate 0.05 after the warmup. Arms: AGS with tune's 0.5-epoch warmup from a rate of 0
(ags-w0.5), AGS without it (ags-w0), and the default's SGD without it (sgd-w0). Development seeds 100-103, each
running the three arms in turn. Each run appends its row to --out (a rerun skips rows already there); a run whose
metrics are already complete in --work is read, not run again.

  bench/warmup_at_reference.py [--seeds 100,101,102,103] [--out F] [--work D]
  bench/warmup_at_reference.py --table
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess

from bench_common import append_row, git_state, rows_done

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
ARMS = ("ags-w0.5", "ags-w0", "sgd-w0")
TARGET = 0.83


def command(args, arm, seed, metrics):
    optimizer, warmup = arm.split("-w")
    return [args.tula, "train", "--model", "small_cnn", "--dataset", "fashion-mnist", "--nproc", "2", "--batch-size",
            "64", "--optimizer", optimizer, "--lr", "0.05", "--reference-batch", "128", "--lr-scaling", "none",
            "--momentum", "0.9", "--weight-decay", "5e-4", "--warmup-epochs", warmup, "--schedule", "constant",
            "--epochs", "4", "--target-accuracy", str(TARGET), "--validation-size", "5000", "--eval-every", "108",
            "--seed", str(seed), "--progress", "none", "--tensor-stats-every", "0", "--metrics", metrics]


def run(args, arm, seed):
    metrics = os.path.join(args.work, f"{arm}-s{seed}.metrics.jsonl")
    cmd = command(args, arm, seed, metrics + ".tmp")
    if not os.path.exists(metrics):
        with open(metrics + ".log", "w") as log:
            subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, check=True)
        shutil.move(metrics + ".tmp", metrics)
    records = [json.loads(l) for l in open(metrics) if l.strip()]
    per_epoch = next(r["steps_per_epoch"] for r in records if r["type"] == "start")
    # The readings: every quarter epoch ("eval") and at each epoch's end (the "epoch" record, its step "steps").
    evals = [dict(r, step=r.get("step", r.get("steps"))) for r in records
             if r["type"] in ("eval", "epoch") and "test_accuracy" in r]
    reached = next((r for r in sorted(evals, key=lambda r: r["step"]) if r["test_accuracy"] >= TARGET), None)
    first_lr = next(r["lr"] for r in records if r["type"] == "iter")
    return {"arm": arm, "seed": seed, "reached": reached is not None,
            "epochs": reached["step"] / per_epoch if reached else None, "steps": reached["step"] if reached else None,
            "accuracy": reached["test_accuracy"] if reached else max(r["test_accuracy"] for r in evals),
            "evaluated_on": "validation", "first_step_lr": first_lr, "command": " ".join(cmd).replace(".tmp", "")}


def table(args):
    rows = [json.loads(l) for l in open(args.out) if l.strip()]
    seeds = sorted({r["seed"] for r in rows})
    by = {(r["arm"], r["seed"]): r for r in rows}
    print(f"Epochs to {TARGET:.0%} validation accuracy, small_cnn, 2 x 64 (B = 128), rate 0.05 "
          f"({os.path.relpath(args.out, ROOT)})\n")
    print("| arm | " + " | ".join(f"seed {s}" for s in seeds) + " | median |")
    print("|---" * (len(seeds) + 2) + "|")
    for arm in ARMS:
        epochs = [by[(arm, s)]["epochs"] for s in seeds if (arm, s) in by]
        cells = [f"{by[(arm, s)]['epochs']:.2f}" if (arm, s) in by and by[(arm, s)]["reached"] else "-" for s in seeds]
        print(f"| {arm} | " + " | ".join(cells) + f" | {statistics.median(e for e in epochs if e):.2f} |")
    pairs = [by[("ags-w0", s)]["epochs"] / by[("ags-w0.5", s)]["epochs"] for s in seeds
             if ("ags-w0", s) in by and ("ags-w0.5", s) in by]
    print(f"\nags-w0 / ags-w0.5 epochs per seed: {', '.join(f'{x:.2f}' for x in pairs)} "
          f"(median {statistics.median(pairs):.2f})")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tula", default=os.path.join(ROOT, "build", "src", "tula"))
    p.add_argument("--seeds", default="100,101,102,103")
    p.add_argument("--out", default=os.path.join(HERE, "results", "warmup_at_reference.jsonl"))
    p.add_argument("--work", default="/tmp/warmup")
    p.add_argument("--table", action="store_true", help="print the table from --out and run nothing")
    args = p.parse_args()
    if args.table:
        table(args)
        return
    os.makedirs(args.work, exist_ok=True)
    state = git_state()
    done = rows_done(args.out, ("arm", "seed"))
    for seed in map(int, args.seeds.split(",")):
        for arm in ARMS:
            if (arm, seed) in done:
                continue
            append_row(args.out, {**run(args, arm, seed), **state})


if __name__ == "__main__":
    main()
