#!/usr/bin/python3
"""Smooth against instant learning-rate change at a resize of the global batch.

Trains small_cnn on Fashion-MNIST (2 workers, SGD with momentum, linear
scaling of the rate from the reference batch 128, constant schedule) with
`--batch-schedule 0:128,1:512`: the rate goes from 0.05 to 0.2 at the start of
epoch 1, either along a line over --lr-transition-steps 100 (smooth) or at
once (0). Records the training loss of each of the 200 steps after the change
and the final test accuracy; appends one JSON line per run to --out and
prints a table of window means.

  bench/resize_transition.py --tula build/src/tula [--seeds 0,1] [--table]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from bench_common import free_port

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEDULE = "0:128,1:512"
EPOCHS = 3            # 1 epoch at 128, then 2 at 512: 236 steps after the change
AFTER = 200           # steps compared after the change
WINDOWS = [(1, 10), (11, 50), (51, 200)]
VARIANTS = {"smooth-100": 100, "instant": 0}


def run(tula, variant, seed):
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "m.jsonl")
        cmd = [tula, "train", "--nproc", "2", "--master-port", str(free_port()), "--model", "small_cnn",
               "--dataset", "fashion-mnist", "--epochs", str(EPOCHS), "--batch-schedule", SCHEDULE,
               "--lr", "0.05", "--lr-scaling", "linear", "--reference-batch", "128", "--schedule", "constant",
               "--momentum", "0.9", "--weight-decay", "5e-4", "--seed", str(seed),
               "--lr-transition-steps", str(VARIANTS[variant]), "--progress", "none", "--tensor-stats-every", "0",
               "--metrics", metrics]
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if proc.returncode:
            raise RuntimeError(f"tula train failed: {proc.stderr.strip()[-500:]}")
        rows = [json.loads(line) for line in open(metrics)]
    change = next(r["step"] for r in rows if r.get("type") == "resize")
    iters = {r["step"]: r for r in rows if r.get("type") == "iter"}
    after = [iters[s] for s in sorted(iters) if change < s <= change + AFTER]
    epochs = [r for r in rows if r.get("type") == "epoch"]
    return {"variant": variant, "seed": seed, "schedule": SCHEDULE, "epochs": EPOCHS,
            "lr_transition_steps": VARIANTS[variant], "change_step": change,
            "loss_before": statistics.mean(iters[s]["loss"] for s in sorted(iters) if change - 20 < s <= change),
            "loss_after": [r["loss"] for r in after], "lr_after": [r["lr"] for r in after],
            "test_accuracy": epochs[-1]["test_accuracy"], "accuracy_by_epoch": [r["test_accuracy"] for r in epochs]}


def table(rows):
    print("| variant | seed | loss, 20 steps before | " +
          " | ".join(f"loss, steps {a}-{b} after" for a, b in WINDOWS) +
          " | worst loss, first 50 | final test accuracy |")
    print("|---|---|---|" + "---|" * len(WINDOWS) + "---|---|")
    for r in sorted(rows, key=lambda r: (r["seed"], r["variant"])):
        loss = r["loss_after"]
        cells = [f"{statistics.mean(loss[a - 1:b]):.3f}" for a, b in WINDOWS]
        print(f"| {r['variant']} | {r['seed']} | {r['loss_before']:.3f} | " + " | ".join(cells) +
              f" | {max(loss[:50]):.3f} | {100 * r['test_accuracy']:.2f}% |")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tula", default=None)
    p.add_argument("--seeds", default="0")
    p.add_argument("--out", default=os.path.join(HERE, "results", "resize_transition.jsonl"))
    p.add_argument("--table", action="store_true")
    args = p.parse_args()
    done = [json.loads(line) for line in open(args.out)] if os.path.exists(args.out) else []
    if not args.table:
        for seed in (int(s) for s in args.seeds.split(",")):
            for variant in VARIANTS:
                if any(r["variant"] == variant and r["seed"] == seed for r in done):
                    continue
                row = run(os.path.abspath(args.tula), variant, seed)
                with open(args.out, "a") as f:
                    f.write(json.dumps(row) + "\n")
                done.append(row)
                print(json.dumps({k: v for k, v in row.items() if not k.endswith("_after")}), file=sys.stderr,
                      flush=True)
    table(done)


if __name__ == "__main__":
    main()
