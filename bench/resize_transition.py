#!/usr/bin/python3
"""Smooth against instant learning-rate change at a resize of the global batch.

Two workers, Fashion-MNIST, SGD with momentum 0.9, linear scaling of the rate
from the reference batch 128; `--batch-schedule` raises the global batch once,
and the rate follows either along a line over --lr-transition-steps 100
(smooth) or at once (0: instant). Records the training loss of each of the 200
steps after the change and the final test accuracy; appends one JSON line per
run to --out (a run already there is skipped) and prints a table of window
means. Settings (--setting):

  lenet5-gap      the generalization-gap protocol (docs/ags.md): LeNet-5, 80
                  epochs, cosine schedule, the reference's tuned rate 0.1 at
                  B = 128 with a 2-epoch warmup; 0:128,40:512, so the rate
                  goes from 0.05 to 0.2 (cosine at its midpoint) at step 18,760
  small_cnn-3ep   the first measurement: small_cnn, 3 epochs, constant rate
                  0.05 at B = 128; 0:128,1:512 (0.05 to 0.2 at step 469)

  bench/resize_transition.py --tula build/src/tula [--setting lenet5-gap] [--seeds 0,1,2] [--table]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from bench_common import append_row, free_port, git_state

HERE = os.path.dirname(os.path.abspath(__file__))
SETTINGS = {
    "lenet5-gap": {"model": "lenet5", "schedule": "0:128,40:512", "epochs": 80,
                   "flags": ["--lr", "0.1", "--schedule", "cosine", "--warmup-epochs", "2"]},
    "small_cnn-3ep": {"model": "small_cnn", "schedule": "0:128,1:512", "epochs": 3,
                      "flags": ["--lr", "0.05", "--schedule", "constant"]},
}
AFTER = 200           # steps compared after the change
WINDOWS = [(1, 10), (11, 50), (51, 200)]
VARIANTS = {"smooth-100": 100, "instant": 0}


def setting_of(row):
    return row.get("setting", "small_cnn-3ep")  # the first rows were written before there were settings


def run(tula, setting, variant, seed):
    s = SETTINGS[setting]
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "m.jsonl")
        cmd = [tula, "train", "--nproc", "2", "--master-port", str(free_port()), "--model", s["model"],
               "--dataset", "fashion-mnist", "--epochs", str(s["epochs"]), "--batch-schedule", s["schedule"],
               *s["flags"], "--lr-scaling", "linear", "--reference-batch", "128",
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
    return {"setting": setting, "model": s["model"], "variant": variant, "seed": seed, "schedule": s["schedule"],
            "epochs": s["epochs"], "lr_transition_steps": VARIANTS[variant], "change_step": change,
            "loss_before": statistics.mean(iters[s]["loss"] for s in sorted(iters) if change - 20 < s <= change),
            "loss_after": [r["loss"] for r in after], "lr_after": [r["lr"] for r in after],
            "test_accuracy": epochs[-1]["test_accuracy"], "accuracy_by_epoch": [r["test_accuracy"] for r in epochs],
            "command": " ".join(cmd)}


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
    for variant in VARIANTS:
        runs = [r for r in rows if r["variant"] == variant]
        if len(runs) < 2:
            continue
        cells = [f"{statistics.mean([statistics.mean(r['loss_after'][a - 1:b]) for r in runs]):.3f}"
                 for a, b in WINDOWS]
        accuracy = [100 * r["test_accuracy"] for r in runs]
        print(f"| {variant}, mean of {len(runs)} | | {statistics.mean([r['loss_before'] for r in runs]):.3f} | " +
              " | ".join(cells) + f" | {statistics.mean([max(r['loss_after'][:50]) for r in runs]):.3f} "
              f"| {statistics.mean(accuracy):.2f} +- {statistics.stdev(accuracy):.2f}% |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tula", default=os.path.join(HERE, "..", "build", "src", "tula"))
    p.add_argument("--setting", choices=list(SETTINGS), default="lenet5-gap")
    p.add_argument("--seeds", default="0")
    p.add_argument("--out", default=os.path.join(HERE, "results", "resize_transition.jsonl"))
    p.add_argument("--table", action="store_true")
    args = p.parse_args()
    done = [json.loads(line) for line in open(args.out)] if os.path.exists(args.out) else []
    if not args.table:
        git_state()  # the commit the runs start at, recorded in each row
        for seed in (int(s) for s in args.seeds.split(",")):
            for variant in VARIANTS:
                if any(setting_of(r) == args.setting and r["variant"] == variant and r["seed"] == seed for r in done):
                    continue
                row = dict(run(os.path.abspath(args.tula), args.setting, variant, seed), **git_state())
                append_row(args.out, row)
                done.append(row)
                print(json.dumps({k: v for k, v in row.items() if not k.endswith("_after")}), file=sys.stderr,
                      flush=True)
    table([r for r in done if setting_of(r) == args.setting])


if __name__ == "__main__":
    main()
