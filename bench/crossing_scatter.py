#!/usr/bin/python3
"""How much a job's own curve, before half its run, says about where it crosses its target (docs/benchmarks/decisions.md,
"What the curve says at half"). The remaining time at half a run can only be as good as what is known then about
the crossing; the seeds' scatter is the rest.

  bench/crossing_scatter.py --collect DIR ...   appends one row per job folder (its metrics.jsonl) that trained
                                                --model with AGS at --global-batch throughout and reached --target,
                                                skipping jobs already in --out
  bench/crossing_scatter.py --collect-reports REPORT.json ...
                                                the same from the reports the rounds keep in bench/results (no
                                                training loss there: the loss reads are left empty)
  bench/crossing_scatter.py [--reads 0.25,0.5,...] [--jobs PATTERN ...] [--beside ROWS.jsonl ...]
                                                prints the tables from the rows, the validation accuracy read at
                                                --reads epochs (all before the earliest crossing)

Each row keeps the job's evaluations (epochs, accuracy), its mean training loss per quarter epoch, where it crossed
the target (history_crossings.crossing_epochs: interpolated in samples between the evaluations around it, as the job
history keeps it) and where it stopped (the
first evaluation at or above it). Runs with the same seed and configuration train the same curve (round 13's pairs);
the tables count each curve once.
"""
import argparse
import fnmatch
import json
import math
import os
import statistics

from bench_common import ROOT, append_row, rows_done
from history_crossings import crossing_between, crossing_epochs

OUT = os.path.join(ROOT, "bench", "results", "crossing_scatter.jsonl")
QUARTERS = [0.25, 0.5, 0.75, 1.0]  # small_cnn's evaluations before its crossings (the earliest seen: 1.23 epochs)


def read_job(folder, model, target, global_batch):
    """The row of one job folder, or None where it is not one of the population (model, optimizer, batch, target)."""
    path = os.path.join(folder, "metrics.jsonl")
    if not os.path.exists(path):
        return None
    starts, evals, losses = [], [], []
    for line in open(path):
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        kind = r.get("type")
        if kind == "start":
            starts.append(r)
        elif kind in ("eval", "epoch") and "test_accuracy" in r:
            evals.append((r["step"], r["test_accuracy"]))
        elif kind == "iter" and "loss" in r:
            losses.append((r["step"], r["loss"]))
    if not starts or any(s.get("model") != model or s.get("optimizer") != "ags" or s.get("global_batch") != global_batch
                         for s in starts):
        return None
    per_epoch = starts[0]["steps_per_epoch"]
    curve = [(step / per_epoch, accuracy) for step, accuracy in sorted(evals)]
    crossing = crossing_epochs(path, target, global_batch)  # as the job history keeps it
    if crossing is None:
        return None
    stop = next(epochs for epochs, accuracy in curve if accuracy >= target)
    loss = []
    for q in QUARTERS:
        window = [x for step, x in losses if q - 0.25 <= step / per_epoch < q]
        loss.append(statistics.mean(window) if window else None)
    return {"job": os.path.relpath(os.path.abspath(folder), "/tmp"), "model": model, "target": target,
            "global_batch": global_batch, "launches": [[s["workers"], s["batch_size"]] for s in starts],
            "evaluations": [[round(e, 4), a] for e, a in curve], "loss_by_quarter": loss,
            "crossing_epochs": crossing, "stop_epochs": stop}


def read_report(path, model, target, global_batch):
    """The row of one job's report (tula tune's report.json, as the rounds keep it in bench/results), or None as
    for read_job; also None for a job toward another target. A report keeps the
    evaluations' epochs but not the steps' losses; at one global batch throughout, its crossing interpolated in
    epochs is the one read_job interpolates in samples."""
    report = json.load(open(path))
    job = report.get("job") or {}
    batches = {s["config"]["global_batch"] for s in report.get("segments") or []}
    if (job.get("model") != model or job.get("optimizer") != "ags" or job.get("target_accuracy") != target
            or batches != {global_batch}):
        return None  # a job toward another target stopped where it reached that one
    curve = [(e["epoch"], e["test_accuracy"]) for e in report.get("evaluations") or []]
    crossing = crossing_between(curve, target)
    if crossing is None:
        return None
    stop = next(epochs for epochs, accuracy in curve if accuracy >= target)
    # Rounds reused their work folders, so the report's own path names the job.
    return {"job": os.path.relpath(os.path.abspath(path), os.path.join(ROOT, "bench", "results")), "model": model,
            "target": target,
            "global_batch": global_batch, "launches": [[s["config"]["nodes"] * s["config"]["workers_per_node"],
                                                        s["config"]["batch_per_worker"]] for s in report["segments"]],
            "evaluations": [[round(e, 4), a] for e, a in curve], "loss_by_quarter": [None] * len(QUARTERS),
            "crossing_epochs": crossing, "stop_epochs": stop, "from": "report"}


def collect(paths, model, target, global_batch, read):
    done = {key[0] for key in rows_done(OUT, ["job"])}
    for path in sorted(paths):
        row = read(path, model, target, global_batch)
        if row and row["job"] not in done:
            append_row(OUT, row)
            done.add(row["job"])


def distinct_curves(rows):
    seen, kept = set(), []
    for r in sorted(rows, key=lambda r: r["job"]):
        key = tuple(a for _, a in r["evaluations"])
        if key not in seen:
            seen.add(key)
            kept.append(r)
    return kept


def accuracy_at(row, epochs):
    return next((a for e, a in row["evaluations"] if abs(e - epochs) < 0.01), None)


def correlation(xs, ys):
    mx, my = statistics.mean(xs), statistics.mean(ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    return sxy / math.sqrt(sum((x - mx) ** 2 for x in xs) * sum((y - my) ** 2 for y in ys))


def leave_one_out(xs, ys):
    """The sd of the errors in log crossing of a straight line fitted to the others, and of the others' median."""
    line, median = [], []
    for i in range(len(ys)):
        ox, oy = xs[:i] + xs[i + 1:], ys[:i] + ys[i + 1:]
        mx, my = statistics.mean(ox), statistics.mean(oy)
        slope = sum((x - mx) * (y - my) for x, y in zip(ox, oy)) / sum((x - mx) ** 2 for x in ox)
        line.append(my + slope * (xs[i] - mx) - ys[i])
        median.append(statistics.median(oy) - ys[i])
    rms = lambda e: math.sqrt(sum(x * x for x in e) / len(e))
    return rms(line), rms(median)


def predictability_table(rows, reads):
    log_crossing = [math.log(r["crossing_epochs"]) for r in rows]
    print("| read | curves | correlation with log crossing | leave-one-out error in log crossing: a line on the read "
          "| the others' median |")
    print("|---|---|---|---|---|")
    for q in reads:
        reads_here = [(f"validation accuracy at {q:g} epochs", lambda r: accuracy_at(r, q))]
        if q in QUARTERS:  # the loss is kept by quarter epoch
            i = QUARTERS.index(q)
            reads_here.append((f"mean training loss over epochs {q - 0.25:g}-{q:g}", lambda r: r["loss_by_quarter"][i]))
        for name, read in reads_here:
            pairs = [(read(r), y) for r, y in zip(rows, log_crossing) if read(r) is not None]
            if len(pairs) < 3:
                continue
            xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
            line, median = leave_one_out(xs, ys)
            print(f"| {name} | {len(xs)} | {correlation(xs, ys):+.2f} | {line:.3f} | {median:.3f} |")


def whole_run_table(rows):
    """Each run's stop (its training epochs), predicted before it starts from the other curves' stops: what a plan
    that knows the seeds' spread but nothing of this seed can do."""
    print()
    print("| rule before the run (epochs to the stop) | curves | median \\|error\\| | largest | within 10% | "
          "signed median |")
    print("|---|---|---|---|---|---|")
    for name, pick in (("the others' median stop", statistics.median), ("their mean stop", statistics.mean)):
        errors = [pick([o["stop_epochs"] for j, o in enumerate(rows) if j != i]) / r["stop_epochs"] - 1
                  for i, r in enumerate(rows)]
        size = sorted(abs(e) for e in errors)
        print(f"| {name} | {len(errors)} | {100 * statistics.median(size):.1f}% | {100 * size[-1]:.1f}% | "
              f"{sum(e <= 0.10 for e in size)} of {len(size)} | {100 * statistics.median(errors):+.1f}% |")


def floor_table(rows):
    """The remaining epochs at half each run (its stop / 2), predicted from the other curves' stops beyond that
    point, as a rule that knows their spread but nothing of this curve would; and from the ten curves nearest to
    this one's last evaluation before half."""
    print()
    print("| rule at half the run (epochs) | curves | median \\|error\\| | largest | within 10% | signed median |")
    print("|---|---|---|---|---|---|")
    for name, pick in (("the others' median stop beyond it", "median"), ("their mean stop beyond it", "mean"),
                       ("the mean stop of the 10 curves nearest at the last evaluation before it", "nearest")):
        errors = []
        for i, r in enumerate(rows):
            half = r["stop_epochs"] / 2
            others = [o for j, o in enumerate(rows) if j != i and o["stop_epochs"] > half]
            if pick == "nearest":
                last = max(e for e, _ in r["evaluations"] if e <= half + 1e-9)
                mine = accuracy_at(r, last)
                others = sorted((o for o in others if accuracy_at(o, last) is not None),
                                key=lambda o: abs(accuracy_at(o, last) - mine))[:10]
            stops = [o["stop_epochs"] for o in others]
            predicted = (statistics.median(stops) if pick == "median" else statistics.mean(stops)) - half
            errors.append(predicted / (r["stop_epochs"] - half) - 1)
        size = sorted(abs(e) for e in errors)
        print(f"| {name} | {len(errors)} | {100 * statistics.median(size):.1f}% | {100 * size[-1]:.1f}% | "
              f"{sum(e <= 0.10 for e in size)} of {len(size)} | {100 * statistics.median(errors):+.1f}% |")


def jobs_at_half(paths, model, target):
    """What the tune jobs themselves said at half their run: the error of their remaining time (seconds, the
    watch's forecast against the run) in decision_oracle.py's rows, to set beside the floor in epochs."""
    errors = []
    for path in paths:
        for row in map(json.loads, open(path)):
            if row.get("phase") != "tune" or row.get("model") != model or row.get("target") != target:
                continue
            errors += [e["error"] for e in row.get("remaining_error") or [] if e["fraction"] == 0.5]
    if not errors:
        return
    size = sorted(abs(e) for e in errors)
    print()
    print("| the tune jobs at half their run (seconds) | jobs | median \\|error\\| | largest | within 10% | "
          "signed median |")
    print("|---|---|---|---|---|---|")
    print(f"| the watch's remaining time | {len(errors)} | {100 * statistics.median(size):.1f}% | "
          f"{100 * size[-1]:.1f}% | {sum(e <= 0.10 for e in size)} of {len(size)} | "
          f"{100 * statistics.median(errors):+.1f}% |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--collect", nargs="+", metavar="DIR", help="job folders to add")
    ap.add_argument("--collect-reports", nargs="+", metavar="REPORT", help="job reports (report.json) to add")
    ap.add_argument("--reads", default=",".join(f"{q:g}" for q in QUARTERS),
                    help="epochs at which the validation accuracy is read (comma-separated)")
    ap.add_argument("--model", default="small_cnn")
    ap.add_argument("--target", type=float, default=0.83)
    ap.add_argument("--global-batch", type=int, default=128)
    ap.add_argument("--jobs", nargs="+", metavar="PATTERN",
                    help="only rows whose job matches one of these fnmatch patterns (one setup's rounds: a setup "
                         "changed between rounds moves the crossing, and its seeds are another population)")
    ap.add_argument("--beside", nargs="+", metavar="ROWS",
                    help="decision_oracle.py rows whose tune jobs' remaining time at half is printed beside")
    args = ap.parse_args()
    if args.collect:
        collect(args.collect, args.model, args.target, args.global_batch, read_job)
    if args.collect_reports:
        collect(args.collect_reports, args.model, args.target, args.global_batch, read_report)
    rows = [r for r in map(json.loads, open(OUT))
            if r["model"] == args.model and r["target"] == args.target and r["global_batch"] == args.global_batch
            and (not args.jobs or any(fnmatch.fnmatch(r["job"], p) for p in args.jobs))]
    rows = distinct_curves(rows)
    crossings = sorted(r["crossing_epochs"] for r in rows)
    stops = [r["stop_epochs"] for r in rows]
    print(f"{args.model} to {args.target:g} at global batch {args.global_batch}, AGS: {len(rows)} distinct curves; "
          f"crossing {crossings[0]:.2f}-{crossings[-1]:.2f} epochs (median {statistics.median(crossings):.2f}, "
          f"sd of log {statistics.stdev(math.log(c) for c in crossings):.3f}); stop "
          + ", ".join(f"{s:.2f}: {stops.count(s)}" for s in sorted(set(stops))))
    print()
    predictability_table(rows, [float(q) for q in args.reads.split(",")])
    whole_run_table(rows)
    floor_table(rows)
    if args.beside:
        jobs_at_half(args.beside, args.model, args.target)


if __name__ == "__main__":
    main()
