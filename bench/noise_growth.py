#!/usr/bin/python3
"""How the gradient noise scale B_noise grows along whole runs, and which law predicts it.

Reads the metrics already recorded under bench/results (no training): every
run whose iter records carry the two squared gradient norms (local_grad_sq at
the per-worker batch b = B / workers, global_grad_sq at the global batch B;
src/predict/noise_scale.cpp, noise_sample_of). Each run is cut into windows
of consecutive steps at one global batch, one epoch long but at least
WINDOW_MIN_STEPS and at most WINDOW_MAX_STEPS steps; a window's B_noise is
the ratio of the window means of the unbiased |G|^2 and tr(Sigma) estimates,
as src/predict/noise_scale.hpp does over a whole run. Windows whose |G|^2
mean is not positive (noise swamps the signal) are kept in the rows without
a B_noise and enter no fit or error.

Candidate laws B_noise(x) = B0 (x / x0)^alpha, anchored at a read B0 taken
at x0, on four axes:
  steps     optimizer steps;
  epochs    samples seen (epochs x the training set);
  progress  minimum steps, sum over steps of 1 / (1 + B_noise / B): the
            progress axis of S(B) = S_min (1 + B_noise / B), the axis Tula's
            re-fit already counts (src/tune/accuracy_forecast.hpp);
  loss      the mean training loss (alpha < 0: B_noise ~ loss^-beta,
            McCandlish et al. 2018, section 3). At plan time the loss the job
            will reach is not known (Tula has no loss forecast), so its errors
            below use the measured loss of the later windows: an upper bound on
            what the loss axis could do, not a plan Tula could make.
alpha is fitted on the FIT runs only (see split_of), within runs (each run
its own intercept), on the windows each run spends before its target
accuracy, weighted by their steps; its standard error is the delete-one-run
jackknife's.

Held-out errors (HELD runs only), each |predicted / measured - 1|:
  plan_window   each later window's B_noise from the run's first window (the
                pilot's early read), windows up to the target;
  plan_target   the job-average B_noise up to the target: the mean over the
                job's progress in minimum steps (S = integral of
                (1 + B_noise(s) / B) ds), predicted from the first window;
  plan_end      the same up to the run's end;
  cross_batch   the job-average up to the target (or the end, for runs with
                no target) of a run at another global batch, read from the
                first window of the smallest-batch run of the same group (a
                pilot at one batch, the job at another);
  refit         half way to the target (or the end), the average over the
                rest, read from the later half of the windows so far (what
                src/tune/refit.cpp reads: the later half of the job's steps).
"no growth" (alpha = 0: the read is taken as the job's B_noise) is what Tula
did before; it is the baseline of every column.

Then end to end, on the held-out groups with steps to a target measured at
several batches: the steps to the target at each batch predicted from a
pilot run at the group's smallest batch (its measured steps to the target
and its B_noise read), with and without growth, against the measured steps.

  bench/noise_growth.py                 # measure, fit, write bench/results/noise_growth/*.jsonl
  bench/noise_growth.py --table         # print the tables from those rows
"""
import argparse
import glob
import gzip
import json
import math
import os
import re
import sys

import numpy as np

from bench_common import git_state

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
OUT_DIR = os.path.join(RESULTS, "noise_growth")

WINDOW_MIN_STEPS = 32    # fewer and a window's ratio is a few steps' noise
WINDOW_MAX_STEPS = 100   # the length of tula tune's pilot, whose read the plan uses
SHORTEST_WINDOW = 8      # a shorter segment (between resizes) makes no window
AXES = ("steps", "epochs", "progress", "loss")


# ---- the split: fixed before any law was fitted or any error looked at ----------------------------------------
#
# FIT:  the LeNet-5 gap runs of the screen, tune, ablation and warmup sets (Fashion-MNIST, 80 epochs, global
#       batch 1024-8192), except the lr 0.1 group.
# HELD: every LeNet-5 `final` run (3 batches x 3 seeds); the lr 0.1 group (tune-ags at 1024, 4096 and 8192 and
#       warmup-ags at 4096); and every run of another model: the small_cnn and ResNet-20 `tula tune` jobs, the
#       small_cnn time-to-accuracy runs, the `tula analyze` runs, the accuracy runs and the watch cases.

#
# A run that repeats another step for step (the same losses over its first REPEAT_STEPS steps: the final run at
# 8192, seed 0, is the ablation's `unbounded` run, and the screen's `ags1-floor0.25` at 8192 the warmup set's
# `ags-warmup2` at 8192) is counted once: a fit run that repeats a held-out run leaves the fit set; of two fit runs
# the first by name stays.
# A held-out run enters the errors only when it trained (its last window's mean loss below its first's: the
# diverged runs at 2048 of `tula analyze` and at 4096 of time to accuracy do not) and has 3 or more windows with a
# B_noise.

HELD_OUT_LR = 0.1
REPEAT_STEPS = 50


def split_of(run):
    if run["source"] != "gap":
        return "held"
    if run["set"] == "final" or run["lr"] == HELD_OUT_LR:
        return "held"
    return "fit"


def drop_repeats(runs):
    """The runs less those that repeat another (see the split above)."""
    kept, seen = [], {}
    for run in sorted(runs, key=lambda r: (r["split"] != "held", r["name"])):
        key = tuple(round(s["loss"], 6) for s in run["steps"][:REPEAT_STEPS])
        if key in seen:
            print(f"{run['name']}: repeats {seen[key]}; counted once", file=sys.stderr)
            continue
        seen[key] = run["name"]
        kept.append(run)
    return sorted(kept, key=lambda r: r["name"])


def trained(windows):
    return len(windows) >= 2 and windows[-1]["loss"] < windows[0]["loss"]


# ---- the runs ---------------------------------------------------------------------------------------------------

GAP_NAME = re.compile(r"lenet5-(?P<set>[a-z]+)-(?P<recipe>.+)-B(?P<batch>\d+)-lr(?P<lr>[0-9.]+)-s(?P<seed>\d+)-e80")


def read_records(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def describe_run(path):
    """Source, group and target accuracy of one metrics file, from its name and place."""
    rel = os.path.relpath(path, RESULTS)
    name = os.path.basename(path).split(".jsonl")[0]
    run = {"name": name, "path": rel, "set": None, "recipe": None, "lr": None, "seed": 0, "group": None}
    m = GAP_NAME.match(name)
    if rel.startswith("gap_metrics/") and m:
        run.update(source="gap", model="lenet5", set=m["set"], recipe=m["recipe"], lr=float(m["lr"]),
                   seed=int(m["seed"]), target=0.85)
        # One group per recipe and seed: the final runs change the rate with the batch, so their group is the
        # recipe; the tune sets keep the rate, so theirs is the recipe and rate.
        run["group"] = (f"final-s{run['seed']}" if run["set"] == "final"
                        else f"{run['set']}-{run['recipe']}-lr{m['lr']}-s{run['seed']}")
    elif rel.startswith("tune/"):
        run.update(source="tune", model=name.split("-")[0], target=0.85, group=name)
    elif rel.startswith("tta/"):
        # Each ran until the test accuracy reached 80% (docs/benchmarks.md, time to accuracy).
        run.update(source="tta", model="small_cnn", target=None if "stopped" in name else 0.80, group="tta")
    elif rel.startswith("analysis/"):
        run.update(source="analysis", model="small_cnn", target=None,
                   group="analysis-ags" if "ags" in name else "analysis-sgd")
    elif rel.startswith("watch_cases/"):
        run.update(source="watch", model="small_cnn", target=None, name="watch-" + rel.split("/")[1], group=rel)
    else:
        run.update(source="accuracy", model=name.split("_fmnist")[0].replace("accuracy_", ""), target=None,
                   group=name)
    return run


def metrics_files():
    pats = ["gap_metrics/*.jsonl.gz", "tune/*.metrics.jsonl.gz", "tta/*.jsonl", "analysis/*-metrics.jsonl",
            "watch_cases/*/metrics.jsonl.gz", "accuracy_*.jsonl"]
    return sorted(p for pat in pats for p in glob.glob(os.path.join(RESULTS, pat)))


def load_run(path):
    run = describe_run(path)
    records = read_records(path)
    start = next(r for r in records if r["type"] == "start")
    run["train_samples"] = start.get("train_samples", 60000)
    steps, samples = [], 0
    for r in records:
        if r["type"] != "iter":
            continue
        samples += r["global_batch"]
        workers, B = r.get("workers", 1), r["global_batch"]
        if r.get("skipped") or workers < 2 or B < workers:
            continue
        if not (r.get("local_grad_sq", 0) > 0 and r.get("global_grad_sq", 0) > 0):
            continue
        b = B // workers
        if not B > b:
            continue
        g2 = (B * r["global_grad_sq"] - b * r["local_grad_sq"]) / (B - b)
        trace = (r["local_grad_sq"] - r["global_grad_sq"]) / (1 / b - 1 / B)
        steps.append({"step": r["step"], "batch": B, "samples": samples, "loss": r["loss"], "g2": g2, "trace": trace})
    run["steps"] = steps
    segs = segments(steps)
    run["batch"] = segs[-1][0]["batch"] if segs else None   # the job's batch (tune jobs: after the pilot)
    evals = [(r["step"], r["test_accuracy"]) for r in records
             if r["type"] in ("eval", "epoch") and r.get("test_accuracy") is not None]
    run["target_step"] = next((s for s, a in sorted(evals) if run["target"] and a >= run["target"]), None)
    run["split"] = split_of(run)
    return run


# ---- windows ----------------------------------------------------------------------------------------------------

def segments(steps):
    """Consecutive steps at one global batch (a resize starts a new one). An epoch's last step is short when the
    batch does not divide the training set; a single short step between steps at one batch stays in their segment
    (its estimates use its own batch), so every segment is named by its steps' usual batch."""
    out = []
    for i, s in enumerate(steps):
        current = out[-1] if out else None
        same = current is not None and s["step"] > current[-1]["step"] and (
            s["batch"] == current[0]["batch"] or
            (s["batch"] < current[0]["batch"] and i + 1 < len(steps) and steps[i + 1]["batch"] == current[0]["batch"]))
        if same:
            current.append(s)
        else:
            out.append([s])
    return out


def window_length(batch, train_samples):
    return min(WINDOW_MAX_STEPS, max(WINDOW_MIN_STEPS, math.ceil(train_samples / batch)))


def windows_of(run):
    out = []
    for seg in segments(run["steps"]):
        k = window_length(seg[0]["batch"], run["train_samples"])
        n = len(seg) // k
        if n == 0:
            if len(seg) < SHORTEST_WINDOW:
                continue
            bounds = [(0, len(seg))]
        else:
            bounds = [(i * k, (i + 1) * k if i < n - 1 else len(seg)) for i in range(n)]  # the rest joins the last
        for lo, hi in bounds:
            part = seg[lo:hi]
            g2 = float(np.mean([s["g2"] for s in part]))
            trace = float(np.mean([s["trace"] for s in part]))
            out.append({
                "batch": seg[0]["batch"], "steps": len(part),
                "first_step": part[0]["step"], "last_step": part[-1]["step"],
                "step": float(np.mean([s["step"] for s in part])),
                "samples": float(np.mean([s["samples"] for s in part])),
                "epoch": float(np.mean([s["samples"] for s in part])) / run["train_samples"],
                "loss": float(np.mean([s["loss"] for s in part])),
                "g2": g2, "trace": trace, "b_noise": trace / g2 if g2 > 0 else None,
            })
    add_progress(out)
    for w in out:
        w["before_target"] = run["target_step"] is not None and w["step"] <= run["target_step"]
    return out


def add_progress(windows):
    """Minimum steps at each window's centre: sum of 1 / (1 + B_noise / B) over the steps before it, with each
    window's own B_noise (a window without one takes the last window's that had one)."""
    done, last_bn = 0.0, None
    for w in windows:
        bn = w["b_noise"] if w["b_noise"] is not None else last_bn
        last_bn = bn
        per_step = 1.0 / (1.0 + (bn or 0.0) / w["batch"])
        w["progress"] = done + per_step * w["steps"] / 2
        w["min_steps"] = per_step * w["steps"]   # the window's weight in a job average over progress
        done += per_step * w["steps"]
