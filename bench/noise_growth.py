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
mean is not positive (noise swamps the signal; or, never seen here, whose
tr(Sigma) mean is not) are kept in the rows without a B_noise and enter no
fit or error.

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

from bench_common import git_state, noise_step_estimates

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
# `ags-warmup2` at 8192; `tula analyze`'s run at 128 the first 2 epochs of the small_cnn accuracy run) is counted
# once: a held-out run stays before a fit run, then the longer, then the first by name.
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
    for run in sorted(runs, key=lambda r: (r["split"] != "held", -len(r["steps"]), r["name"])):
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
        # Each ran until the test accuracy reached 80% (docs/benchmarks/profiler-and-predictions.md, time to accuracy).
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
        estimates = noise_step_estimates(r)
        if estimates is None:
            continue
        g2, trace = estimates
        steps.append({"step": r["step"], "batch": r["global_batch"], "samples": samples, "loss": r["loss"], "g2": g2,
                      "trace": trace})
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
    batch does not divide the training set; a single short step after steps at one batch (and before more of them,
    or at the run's end) stays in their segment
    (its estimates use its own batch), so every segment is named by its steps' usual batch."""
    out = []
    for i, s in enumerate(steps):
        current = out[-1] if out else None
        same = current is not None and s["step"] > current[-1]["step"] and (
            s["batch"] == current[0]["batch"] or
            (s["batch"] < current[0]["batch"] and (i + 1 == len(steps) or steps[i + 1]["batch"] == current[0]["batch"])))
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
                "g2": g2, "trace": trace, "b_noise": trace / g2 if g2 > 0 and trace > 0 else None,
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
        w["progress"] = done + per_step * (w["steps"] + 1) / 2   # the mean over its steps of the count after each
        w["min_steps"] = per_step * w["steps"]   # the window's weight in a job average over progress
        done += per_step * w["steps"]


def axis_value(w, axis):
    return w[{"steps": "step", "epochs": "epoch", "progress": "progress", "loss": "loss"}[axis]]


def usable(windows):
    return [w for w in windows if w["b_noise"] is not None and w["b_noise"] > 0]


def horizon(windows, to):
    """The windows a job average runs over: up to the target crossing, or to the run's end."""
    return [w for w in windows if w["before_target"]] if to == "target" else list(windows)


# ---- the fit ----------------------------------------------------------------------------------------------------

def within_run_slope(per_run):
    """Weighted least squares slope of log B_noise on log x, each run its own intercept. per_run: lists of
    (log x, log B_noise, weight)."""
    sxy = sxx = 0.0
    for rows in per_run:
        a = np.array(rows)
        w = a[:, 2]
        xm, ym = np.average(a[:, 0], weights=w), np.average(a[:, 1], weights=w)
        sxy += float(np.sum(w * (a[:, 0] - xm) * (a[:, 1] - ym)))
        sxx += float(np.sum(w * (a[:, 0] - xm) ** 2))
    return sxy / sxx


def fit_rows(windows, axis):
    return [(math.log(axis_value(w, axis)), math.log(w["b_noise"]), w["steps"])
            for w in usable(windows) if w["before_target"] and axis_value(w, axis) > 0]


def anchored_slope(per_run):
    """Weighted least squares through the origin of log(B_noise / B_noise at the first window) on log(x / x at the
    first window): the law as it is used, anchored at an early read. per_run: as within_run_slope's, first window
    first."""
    sxy = sxx = 0.0
    for rows in per_run:
        x0, y0, _ = rows[0]
        for x, y, w in rows[1:]:
            sxy += w * (x - x0) * (y - y0)
            sxx += w * (x - x0) ** 2
    return sxy / sxx


FITS = {"intercepts": within_run_slope, "anchored": anchored_slope, "use": None}
USE_GRID = np.round(np.arange(0.0, 1.5001, 0.01), 2)
LOSS_GRID = -np.round(np.arange(0.0, 3.0001, 0.01), 2)   # B_noise ~ loss^-beta


def fit_for_use(fit_runs, axis):
    """The exponent that minimises the fit runs' squared log error of the plan-time job average to the target
    (predicted from each run's first window, as the plan uses the law), over a grid of 0.01; jackknife over runs."""
    grid = LOSS_GRID if axis == "loss" else USE_GRID
    table = []
    for r in fit_runs:
        errs = [plan_average_error(r, axis, a) for a in grid]
        if errs[0] is not None:
            table.append(np.array(errs) ** 2)
    table = np.array(table)
    total = table.sum(axis=0)
    alpha = float(grid[np.argmin(total)])
    k = len(table)
    jack = [float(grid[np.argmin(total - table[i])]) for i in range(k)]
    se = math.sqrt((k - 1) / k * sum((j - np.mean(jack)) ** 2 for j in jack))
    return {"axis": axis, "fit": "use", "alpha": alpha, "se": se, "runs": k,
            "windows": sum(len(horizon(usable(r["windows"]), "target")) for r in fit_runs
                           if plan_average_error(r, axis, 0.0) is not None)}


def fit_exponent(fit_runs, axis, method):
    if method == "use":
        return fit_for_use(fit_runs, axis)
    slope = FITS[method]
    per_run = [rows for rows in (fit_rows(r["windows"], axis) for r in fit_runs) if len(rows) >= 3]
    alpha = slope(per_run)
    k = len(per_run)
    jack = [slope(per_run[:i] + per_run[i + 1:]) for i in range(k)]
    se = math.sqrt((k - 1) / k * sum((j - np.mean(jack)) ** 2 for j in jack))
    return {"axis": axis, "fit": method, "alpha": alpha, "se": se, "runs": k,
            "windows": sum(len(r) for r in per_run)}


def run_exponent(run, axis):
    """One run's exponent: weighted least squares slope of log B_noise on log x over its windows up to its target
    (all of them when it has none), weights the windows' steps normalised to mean 1, and the slope's standard
    error. src/predict/noise_growth.cpp fits the same on the progress axis."""
    job = usable(run["windows"])
    job = [w for w in (horizon(job, "target") if run["target_step"] else job) if axis_value(w, axis) > 0]
    if len(job) < 3:
        return None
    x = np.log([axis_value(w, axis) for w in job])
    y = np.log([w["b_noise"] for w in job])
    wt = np.array([w["steps"] for w in job], dtype=float)
    wt /= wt.mean()
    xm, ym = np.average(x, weights=wt), np.average(y, weights=wt)
    sxx = float(np.sum(wt * (x - xm) ** 2))
    slope = float(np.sum(wt * (x - xm) * (y - ym))) / sxx
    resid = y - ym - slope * (x - xm)
    se = math.sqrt(float(np.sum(wt * resid ** 2)) / (len(job) - 2) / sxx)
    return {"alpha": slope, "se": se, "windows": len(job)}


# ---- predictions ------------------------------------------------------------------------------------------------

def read_of(windows):
    """A B_noise read over some windows: the ratio of their step-weighted |G|^2 and tr(Sigma) means, placed at the
    windows' step-weighted mean position on every axis."""
    n = np.array([w["steps"] for w in windows], dtype=float)
    g2 = float(np.sum(n * [w["g2"] for w in windows]))
    trace = float(np.sum(n * [w["trace"] for w in windows]))
    if not g2 > 0:
        return None
    read = {"b_noise": trace / g2, "batch": windows[-1]["batch"]}
    for axis in AXES:
        read[axis] = float(np.average([axis_value(w, axis) for w in windows], weights=n))
    return read


def grown(read, axis, alpha, x):
    return read["b_noise"] * (x / read[axis]) ** alpha


def progress_along(read, alpha, job, from_step=0.0, from_progress=0.0, substeps=50):
    """Minimum steps at each of the job's window centres as the law predicts them: ds/dstep = 1 / (1 + B_noise(s) /
    B), integrated from (from_step, from_progress)."""
    out, k, s = [], from_step, from_progress
    for w in job:
        h = (w["step"] - k) / substeps
        for _ in range(substeps):
            bn = grown(read, "progress", alpha, max(s, 1e-9))
            s += h / (1 + bn / w["batch"])
        k = w["step"]
        out.append(s)
    return out


def predict_windows(read, axis, alpha, job, start=None):
    """Predicted B_noise at each job window. `start`: (step, progress) where the job's progress count begins
    (the read's own window centre for the run the read came from; (0, 0) for a fresh run)."""
    if axis != "progress":
        return [grown(read, axis, alpha, axis_value(w, axis)) for w in job]
    k0, s0 = start if start else (read["steps"], read["progress"])
    return [grown(read, "progress", alpha, s) for s in progress_along(read, alpha, job, k0, s0)]


def job_average(values, job):
    weights = [w["min_steps"] for w in job]
    return float(np.average(values, weights=weights))


def rel_error(predicted, measured):
    return predicted / measured - 1


def plan_average_error(run, axis, alpha):
    """log(predicted / measured) job-average B_noise up to the target, read from the first window; None when the
    run has fewer than 3 windows before its target."""
    windows = usable(run["windows"])
    job = horizon(windows, "target")
    if len(job) < 3:
        return None
    pred = predict_windows(read_of(windows[:1]), axis, alpha, job)
    return math.log(job_average(pred, job) / job_average([w["b_noise"] for w in job], job))


def errors_of_run(run, axis, alpha):
    """The plan and refit errors of one held-out run under one law (see the module's docstring)."""
    windows = usable(run["windows"])
    out = {"plan_window": [], "plan_target": [], "plan_end": [], "refit": []}
    read = read_of(windows[:1])
    for to in ("target", "end"):
        job = horizon(windows, to)
        if len(job) < 3:
            continue
        pred = predict_windows(read, axis, alpha, job)
        measured = [w["b_noise"] for w in job]
        if to == "target":
            out["plan_window"] = [rel_error(p, m) for p, m in zip(pred[1:], measured[1:])]
        out["plan_" + to].append(rel_error(job_average(pred, job), job_average(measured, job)))
    job = horizon(windows, "target") if run["target_step"] else windows
    k = len(job) // 2
    if k >= 2 and len(job) - k >= 1:
        read_now = read_of(job[k // 2:k])
        rest = job[k:]
        if read_now:
            start = (job[k - 1]["step"], job[k - 1]["progress"])
            pred = predict_windows(read_now, axis, alpha, rest, start)
            out["refit"].append(rel_error(job_average(pred, rest), job_average([w["b_noise"] for w in rest], rest)))
    return out


def cross_batch_errors(groups, axis, alpha):
    """Job averages of each run of a group read from the first window of its smallest-batch run."""
    errs = []
    for runs in groups.values():
        pilot = min(runs, key=lambda r: r["batch"])
        read = read_of(usable(pilot["windows"])[:1])
        for run in runs:
            if run is pilot:
                continue
            job = usable(run["windows"])
            job = horizon(job, "target") if run["target_step"] else job
            if not job:
                continue
            pred = predict_windows(read, axis, alpha, job, start=(0.0, 0.0))
            errs.append(rel_error(job_average(pred, job), job_average([w["b_noise"] for w in job], job)))
    return errs


# ---- steps to a target, end to end ------------------------------------------------------------------------------

def steps_to_progress(read, axis, alpha, batch, s_end, train_samples, n=400):
    """Optimizer steps a fresh run at `batch` takes to cover `s_end` minimum steps when B_noise follows the law
    from `read`: S = integral over s of (1 + B_noise / B). Progress axis: closed form; steps and epochs: the
    step count k is integrated over s (RK4), x = k or k B / D."""
    b0 = read["b_noise"]
    if alpha == 0:
        return s_end * (1 + b0 / batch)
    if axis == "progress":
        return s_end + b0 * s_end ** (alpha + 1) / ((alpha + 1) * read["progress"] ** alpha * batch)
    scale = 1.0 if axis == "steps" else batch / train_samples

    def rate(k):
        return 1 + b0 * (max(k, 0.0) * scale / read[axis]) ** alpha / batch

    k, h = 0.0, s_end / n
    for _ in range(n):
        a = rate(k)
        b = rate(k + h / 2 * a)
        c = rate(k + h / 2 * b)
        d = rate(k + h * c)
        k += h / 6 * (a + 2 * b + 2 * c + d)
    return k


def s_min_from_pilot(read, axis, alpha, batch, steps, train_samples):
    """The minimum steps whose run at the pilot's batch takes the pilot's measured steps (bisection)."""
    lo, hi = 0.0, float(steps)
    for _ in range(60):
        mid = (lo + hi) / 2
        if steps_to_progress(read, axis, alpha, batch, mid, train_samples) < steps:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def profile_read(run):
    """What `tula profile` reads from a pilot run to the target: the later half of its steps up to the target."""
    steps = [s for s in run["steps"] if s["step"] <= run["target_step"]]
    later = steps[len(steps) // 2:]
    g2 = float(np.mean([s["g2"] for s in later]))
    trace = float(np.mean([s["trace"] for s in later]))
    read = {"b_noise": trace / g2, "batch": later[-1]["batch"], "steps": float(np.mean([s["step"] for s in later])),
            "epochs": float(np.mean([s["samples"] for s in later])) / run["train_samples"]}
    # Progress at the read as Tula places it (src/predict/noise_scale.cpp): the mean over the read's steps of the
    # minimum steps made by each, counted at the read's own B_noise.
    count = np.cumsum([1 / (1 + read["b_noise"] / s["batch"]) for s in steps])
    read["progress"] = float(np.mean(count[len(steps) // 2:]))
    return read


def end_to_end(groups, laws):
    rows = []
    for group, runs in sorted(groups.items()):
        runs = [r for r in runs if r["target_step"]]
        if len(runs) < 2:
            continue
        pilot = min(runs, key=lambda r: r["batch"])
        reads = {"early": read_of(usable(pilot["windows"])[:1]), "profile": profile_read(pilot)}
        for run in sorted(runs, key=lambda r: r["batch"]):
            row = {"group": group, "run": run["name"], "batch": run["batch"], "pilot_batch": pilot["batch"],
                   "pilot": run is pilot, "measured_steps": run["target_step"], "target": run["target"]}
            for read_name, read in reads.items():
                row[f"{read_name}_b_noise"] = read["b_noise"]
                for law_name, (axis, alpha) in laws.items():
                    s_min = s_min_from_pilot(read, axis, alpha, pilot["batch"], pilot["target_step"],
                                             pilot["train_samples"])
                    steps = steps_to_progress(read, axis, alpha, run["batch"], s_min, run["train_samples"])
                    row[f"{read_name}_{law_name}_steps"] = steps
                    row[f"{read_name}_{law_name}_b_noise_effective"] = run["batch"] * (steps / s_min - 1)
            rows.append(row)
    return rows


# ---- rows and tables --------------------------------------------------------------------------------------------

def summary(errs):
    a = np.abs(np.array(errs, dtype=float))
    return {"n": int(a.size), "median": float(np.median(a)) if a.size else None,
            "max": float(np.max(a)) if a.size else None}


def write_rows(path, rows):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def measure():
    state = git_state()
    runs = [load_run(p) for p in metrics_files()]
    runs = drop_repeats(runs)
    for r in runs:
        r["windows"] = windows_of(r)
    fit_runs = [r for r in runs if r["split"] == "fit"]
    held = [r for r in runs if r["split"] == "held" and trained(r["windows"]) and len(usable(r["windows"])) >= 3]
    groups = {}
    for r in runs:
        if r["split"] == "held" and trained(r["windows"]) and usable(r["windows"]):
            groups.setdefault(r["group"], []).append(r)
    groups = {g: rs for g, rs in groups.items() if len({r["batch"] for r in rs}) >= 2}

    fits = [fit_exponent(fit_runs, axis, method) for method in FITS for axis in AXES]
    laws = {"none": ("steps", 0.0, None)}
    laws.update({f"{f['axis']}-{f['fit']}": (f["axis"], f["alpha"], f["fit"]) for f in fits})
    error_rows = []
    for law, (axis, alpha, method) in laws.items():
        per_use = {"plan_window": [], "plan_target": [], "plan_end": [], "refit": []}
        for r in held:
            for use, errs in errors_of_run(r, axis, alpha).items():
                per_use[use] += errs
        per_use["cross_batch"] = cross_batch_errors(groups, axis, alpha)
        for use, errs in per_use.items():
            error_rows.append({"law": law, "axis": axis, "fit": method, "alpha": alpha, "use": use, **summary(errs),
                               "errors": [round(e, 4) for e in errs], **state})
    # End to end with the fit fixed before the first look (run intercepts); the loss axis needs a loss forecast.
    e2e_laws = {k: v[:2] for k, v in laws.items() if v[0] != "loss" and v[2] in (None, "intercepts")}
    e2e = [dict(row, **state) for row in end_to_end(groups, e2e_laws)]

    window_rows = []
    for r in runs:
        for i, w in enumerate(r["windows"]):
            window_rows.append({"run": r["name"], "split": r["split"], "window": i,
                                **{k: (float(f"{v:.6g}") if isinstance(v, float) else v) for k, v in w.items()},
                                "commit": state["commit"]})
    run_rows = []
    for r in runs:
        row = {"run": r["name"], "path": r["path"], "split": r["split"], "group": r["group"], "model": r["model"],
               "batch": r["batch"], "target_step": r["target_step"], "trained": trained(r["windows"])}
        for axis in AXES:
            row[axis] = run_exponent(r, axis)
        run_rows.append(dict(row, **state))
    os.makedirs(OUT_DIR, exist_ok=True)
    write_rows(os.path.join(OUT_DIR, "runs.jsonl"), run_rows)
    write_rows(os.path.join(OUT_DIR, "windows.jsonl"), window_rows)
    write_rows(os.path.join(OUT_DIR, "fits.jsonl"), [dict(f, **state) for f in fits])
    write_rows(os.path.join(OUT_DIR, "errors.jsonl"), error_rows)
    write_rows(os.path.join(OUT_DIR, "steps_to_target.jsonl"), e2e)
    print(f"{len(runs)} runs ({len(fit_runs)} fit, {len(held)} held out with errors), {len(window_rows)} windows; "
          f"rows in {os.path.relpath(OUT_DIR)}", file=sys.stderr)


def read_rows(name):
    with open(os.path.join(OUT_DIR, name)) as f:
        return [json.loads(line) for line in f]


def pct(v):
    return "-" if v is None else f"{100 * v:.0f}%"


USES = [("plan_window", "plan: each window to the target"), ("plan_target", "plan: job average to the target"),
        ("plan_end", "plan: job average to the end"), ("cross_batch", "plan, pilot at another batch"),
        ("refit", "re-fit at half way: the rest")]


def print_tables():
    fits = {f"{f['axis']}-{f['fit']}": f for f in read_rows("fits.jsonl")}
    errors = read_rows("errors.jsonl")
    print("| law | fit | alpha (fit runs) | " + " | ".join(title for _, title in USES) + " |")
    print("|---|---|---|" + "---|" * len(USES))
    for law in ["none"] + [f"{axis}-{method}" for method in FITS for axis in AXES]:
        cells = []
        for use, _ in USES:
            e = next(e for e in errors if e["law"] == law and e["use"] == use)
            cells.append(f"{pct(e['median'])} / {pct(e['max'])} ({e['n']})")
        f = fits.get(law)
        if f is None:
            head = "no growth | - | 0"
        else:
            head = f"{f['axis']} | {f['fit']} | {f['alpha']:+.2f} ± {f['se']:.2f} ({f['runs']} runs, {f['windows']} windows)"
        print(f"| {head} | " + " | ".join(cells) + " |")
    print()
    print_scatter()
    print_run_exponents()
    rows = read_rows("steps_to_target.jsonl")
    laws = [k[len("early_"):-len("_steps")] for k in rows[0] if k.startswith("early_") and k.endswith("_steps")]
    print("| group | batch | measured steps | " +
          " | ".join(f"{read} read, {law}" for read in ("early", "profile") for law in laws) + " |")
    print("|---|---|---|" + "---|" * (2 * len(laws)))
    for r in rows:
        cells = []
        for read in ("early", "profile"):
            for law in laws:
                s = r[f"{read}_{law}_steps"]
                cells.append(f"{s:.0f} ({100 * (s / r['measured_steps'] - 1):+.0f}%)")
        label = f"{r['batch']}{' (pilot)' if r['pilot'] else ''}"
        print(f"| {r['group']} | {label} | {r['measured_steps']} | " + " | ".join(cells) + " |")
    print()
    for read in ("early", "profile"):
        for law in laws:
            errs = [abs(r[f"{read}_{law}_steps"] / r["measured_steps"] - 1) for r in rows if not r["pilot"]]
            print(f"{read} read, {law}: held-out steps error median {pct(float(np.median(errs)))}, "
                  f"mean {pct(float(np.mean(errs)))}, max {pct(max(errs))} ({len(errs)} configurations)")


def print_scatter():
    """How far one window strays from its neighbours: |B_noise / geometric mean of the two beside it - 1| over the
    held-out runs' inner windows, the floor under any law's window errors."""
    by_run = {}
    for w in read_rows("windows.jsonl"):
        if w["split"] == "held":
            by_run.setdefault(w["run"], []).append(w["b_noise"])
    dev = [abs(b / math.sqrt(a * c) - 1) for bs in by_run.values() for a, b, c in zip(bs, bs[1:], bs[2:])
           if a and b and c]
    print(f"window scatter (held-out runs): |B_noise / geometric mean of its neighbours - 1| median {pct(float(np.median(dev)))}, "
          f"90th percentile {pct(float(np.percentile(dev, 90)))} ({len(dev)} windows)")


def print_run_exponents():
    rows = read_rows("runs.jsonl")
    for split in ("fit", "held"):
        a = [r["progress"]["alpha"] for r in rows if r["split"] == split and r["trained"] and r["progress"]]
        print(f"per-run exponents on the progress axis, {split} runs: median {np.median(a):.2f}, "
              f"range {min(a):.2f} to {max(a):.2f} ({len(a)} runs)")
    print()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--table", action="store_true", help="print the tables from the rows already written")
    args = p.parse_args()
    if args.table:
        print_tables()
    else:
        measure()


if __name__ == "__main__":
    main()
