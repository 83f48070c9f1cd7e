#!/usr/bin/python3
"""Predicted against measured time to a test accuracy on Fashion-MNIST.

1. Runs `tula train` (small_cnn, 2 workers, SGD with square-root scaling of
   the rate from the reference batch 128, constant after a half-epoch warmup)
   at each global batch until the test accuracy reaches --target, evaluating
   every ~1/8 epoch; training time excludes the evaluations (the engine's
   `train_s`). Runs already in --out are reused.
2. Profiles the model (`tula profile --quick`) with ONE of those runs as the
   pilot (--pilot, default 512): gradient-noise samples and steps to target.
3. Predicts steps and time to the target at every batch with `tula predict`
   and prints measured against predicted; the pilot's own row is marked.

  bench/time_to_accuracy.py --tula build/src/tula [--batches 64,512,2048,8192] [--target 0.80]
  bench/time_to_accuracy.py ... --pilot 1024 --compute-from bench/results/tta/profile-pilot256.json   (another pilot)
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

from bench_common import free_port, git_state

HERE = os.path.dirname(os.path.abspath(__file__))
WORKERS = 2
TRAIN_SAMPLES = 60000



def train(tula, batch, target, max_epochs, metrics, seed):
    steps_per_epoch = math.ceil(math.ceil(TRAIN_SAMPLES / WORKERS) / (batch // WORKERS))
    cmd = [tula, "train", "--nproc", str(WORKERS), "--master-port", str(free_port()), "--model", "small_cnn",
           "--dataset", "fashion-mnist", "--batch-size", str(batch // WORKERS), "--epochs", str(max_epochs),
           "--lr", "0.05", "--lr-scaling", "sqrt", "--reference-batch", "128", "--warmup-epochs", "0.5",
           "--schedule", "constant", "--momentum", "0.9", "--weight-decay", "5e-4", "--seed", str(seed),
           "--eval-every", str(max(1, steps_per_epoch // 8)), "--target-accuracy", str(target),
           "--progress", "none", "--tensor-stats-every", "0", "--metrics", metrics]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def run_profile(tula, pilot, target, out):
    subprocess.run([tula, "profile", "--model", "small_cnn", "--dataset", "fashion-mnist", "--quick", "--workers",
                    str(WORKERS), "--pilot-metrics", pilot, "--target-accuracy", str(target), "--out", out],
                   check=True, stdout=subprocess.DEVNULL)


def measured(metrics, target):
    rows = [json.loads(line) for line in open(metrics)]
    for r in rows:
        if r.get("type") in ("eval", "epoch") and r.get("test_accuracy", 0) >= target:
            return {"steps": r["step"], "train_s": r["train_s"], "accuracy": r["test_accuracy"]}
    best = max((r.get("test_accuracy", 0) for r in rows if r.get("type") in ("eval", "epoch")), default=0)
    return {"steps": None, "train_s": None, "accuracy": best}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tula", required=True)
    p.add_argument("--batches", default="64,512,2048,8192")
    p.add_argument("--target", type=float, default=0.80)
    p.add_argument("--pilot", type=int, default=512)
    p.add_argument("--max-epochs", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dir", default=os.path.join(HERE, "results", "tta"))
    p.add_argument("--reuse-profile", action="store_true",
                   help="predict from the pilot's profile already in --dir (tula predict refits its raw samples)")
    p.add_argument("--compute-from", metavar="PROFILE",
                   help="take the timing samples from PROFILE and only the pilot's statistical samples from a new "
                        "profile (to try other pilots without re-timing the hardware)")
    p.add_argument("--no-pilot-calibration", action="store_true",
                   help="predict from the profiled compute times as measured (tula predict --no-pilot-calibration)")
    p.add_argument("--out", default=os.path.join(HERE, "results", "time_to_accuracy.jsonl"))
    args = p.parse_args()
    tula = os.path.abspath(args.tula)
    git_state()  # the commit the runs start at, recorded in each row
    os.makedirs(args.dir, exist_ok=True)
    batches = [int(b) for b in args.batches.split(",")]
    runs = {}
    for b in batches:
        path = os.path.join(args.dir, f"small_cnn-B{b}-seed{args.seed}.jsonl")
        if not os.path.exists(path) or measured(path, args.target)["steps"] is None:
            if os.path.exists(path):
                os.remove(path)
            train(tula, b, args.target, args.max_epochs, path, args.seed)
        runs[b] = measured(path, args.target)
        print(json.dumps({"global_batch": b, **runs[b]}), file=sys.stderr, flush=True)
    profile = os.path.join(args.dir, f"profile-pilot{args.pilot}.json")
    pilot = os.path.join(args.dir, f"small_cnn-B{args.pilot}-seed{args.seed}.jsonl")
    if args.compute_from:
        # Only the statistical samples are new: the pilot's gradient noise and
        # steps do not depend on how busy the machine is, the timings do.
        raw = os.path.join(args.dir, f"profile-pilot{args.pilot}-raw.json")
        run_profile(tula, pilot, args.target, raw)
        merged = json.load(open(args.compute_from))
        fresh = json.load(open(raw))
        for key in ("pilots", "gradient_noise"):
            merged["samples"][key] = fresh["samples"][key]
        merged["target_accuracy"] = fresh.get("target_accuracy", args.target)
        merged.pop("fitted", None)
        with open(profile + ".tmp", "w") as f:
            json.dump(merged, f)
        os.replace(profile + ".tmp", profile)
    elif not (args.reuse_profile and os.path.exists(profile)):
        run_profile(tula, pilot, args.target, profile)
    print(f"| global batch | measured steps | predicted steps | measured time (s) | predicted time (s) [95%] | error |")
    print("|---|---|---|---|---|---|")
    errors = []
    for b in batches:
        out = subprocess.run([tula, "predict", "--profile", profile, "--workers", str(WORKERS), "--batch-size",
                              str(b // WORKERS), "--test-size", "0", "--json"]
                             + (["--no-pilot-calibration"] if args.no_pilot_calibration else []),
                             check=True, capture_output=True, text=True).stdout
        pred = json.loads(out)
        m = runs[b]
        row = {"global_batch": b, "target": args.target, "pilot": b == args.pilot, "pilot_batch": args.pilot,
               "compute_from": os.path.basename(args.compute_from) if args.compute_from else None,
               "pilot_calibration": not args.no_pilot_calibration, "measured": m,
               "predicted_steps": pred["steps"]["estimate"], "predicted_time_s": pred["time_s"]["estimate"],
               "predicted_time_lo": pred["time_s"]["lo"], "predicted_time_hi": pred["time_s"]["hi"], **git_state()}
        with open(args.out, "a") as f:
            f.write(json.dumps(row) + "\n")
        if m["train_s"] is None:
            print(f"| {b} | never (best {100 * m['accuracy']:.1f}%) | {pred['steps']['estimate']:.0f} | - | "
                  f"{pred['time_s']['estimate']:.0f} | - |")
            continue
        err = (pred["time_s"]["estimate"] - m["train_s"]) / m["train_s"]
        if b != args.pilot:
            errors.append(abs(err))
        mark = " (pilot)" if b == args.pilot else ""
        print(f"| {b}{mark} | {m['steps']} | {pred['steps']['estimate']:.0f} | {m['train_s']:.0f} | "
              f"{pred['time_s']['estimate']:.0f} [{pred['time_s']['lo']:.0f}, {pred['time_s']['hi']:.0f}] | "
              f"{100 * err:+.1f}% |")
    if errors:
        print(f"\nmean absolute error over the held-out batches: {100 * sum(errors) / len(errors):.1f}%")


if __name__ == "__main__":
    main()
