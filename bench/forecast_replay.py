#!/usr/bin/env python3
"""How well does `tula tune` forecast where the target is crossed? Replays both target forecasts along recorded
runs at one batch size (bench/forecast_replay.cpp): at every evaluation before a target's crossing, the step each
forecast puts the crossing at, against the step it truly was (the first evaluation at or above the target).

Forecasts: "evaluations" fits a power law to the evaluations alone (tune/accuracy_forecast.hpp, what the watch used
until now); "loss" fits the per-step training loss and its link to the evaluations (tune/loss_forecast.hpp).

Round 1 (rows without "combined_forecast"): "evaluations" and "loss" as first written. On the development runs the
loss forecast alone erred more than the evaluations' (it crossed late where the evaluations' fit crossed early), so
the job's forecast became their geometric mean ("combined"), chosen on the development rows only; round 2 replays
every run again with it (rows with "combined_forecast"), the held-out runs included.

The runs were split before the loss forecast was first run, and it was not changed after seeing the held-out rows:
  development: bench/results/gap_metrics/*-validation.jsonl.gz (lenet5, batches 1024-8192, the rate screens);
  held out:    bench/results/gap_metrics/*-test.jsonl.gz (lenet5, the final and ablation runs) and
               bench/results/decision_oracle/metrics/*.jsonl.gz (small_cnn on the emulated cluster, the oracle's
               first grid: batches 32-2048, stopped at 83%); added later, runs made after the combination was
               chosen: bench/results/decision_oracle_round2/metrics/*.jsonl.gz (the oracle's second grid).

  /usr/bin/python3 bench/forecast_replay.py --replay build-notorch/bench/tula_forecast_replay   # rows, then the table
  /usr/bin/python3 bench/forecast_replay.py --table                                             # the table only

Round 3 (rows with "anchored_forecast"): every run replayed again, adding the power law with the exponent prior
(tune/accuracy_forecast.hpp, chosen on bench/forecast_on_curves.py's curves, none of them these runs) alone
("anchored") and in the geometric mean with the loss forecast ("anchored + loss"); its table also gives, by the
evaluations seen (from one), the root mean square log error of the crossing each forecast puts, which the job
takes as the forecast's spread.

The error of a forecast is that of the steps still to go: forecast steps left / true steps left - 1, grouped by how
far the run was toward the crossing (the share of its steps done). Rows: bench/results/forecast/replay.jsonl.gz (one
per run, target and evaluation; runs already there are skipped).
"""
import argparse
import glob
import math
import gzip
import json
import os
import statistics
import subprocess

from bench_common import ROOT, append_row, git_state, read_rows

RESULTS = os.path.join(ROOT, "bench", "results", "forecast", "replay.jsonl")
GAP = os.path.join(ROOT, "bench", "results", "gap_metrics")
ORACLE = os.path.join(ROOT, "bench", "results", "decision_oracle", "metrics")
ORACLE_ROUND2 = os.path.join(ROOT, "bench", "results", "decision_oracle_round2", "metrics")
SETS = {
    "development": (sorted(glob.glob(os.path.join(GAP, "*-validation.jsonl.gz"))), [0.85, 0.87, 0.88, 0.89, 0.90]),
    "held_out_lenet5": (sorted(glob.glob(os.path.join(GAP, "*-test.jsonl.gz"))), [0.85, 0.87, 0.88, 0.89, 0.90]),
    "held_out_oracle": (sorted(glob.glob(os.path.join(ORACLE, "*.jsonl.gz"))), [0.80, 0.81, 0.82, 0.83]),
    # Added after round 2 (runs that did not exist when the combination was chosen): the oracle's second grid,
    # a 5,000-sample validation split read every quarter epoch, stopped at 83%.
    "held_out_oracle_round2": (sorted(glob.glob(os.path.join(ORACLE_ROUND2, "*.jsonl.gz"))), [0.80, 0.81, 0.82, 0.83]),
}
SHARES = [(0.0, 0.25), (0.25, 0.5), (0.5, 0.75), (0.75, 1.0)]


def replay(tool):
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    done = set()
    done = {row["run"] for row in read_rows(RESULTS) if "anchored_forecast" in row}
    for name, (runs, targets) in SETS.items():
        for path in runs:
            run = os.path.relpath(path, ROOT)
            if run in done:
                continue
            with gzip.open(path, "rb") as f:
                out = subprocess.run([tool, "--targets", ",".join(map(str, targets))], input=f.read(),
                                     capture_output=True, check=True).stdout.decode()
            rows = [json.loads(line) for line in out.splitlines()]
            if not rows:  # no target reached: one row says so, so the run counts as done
                rows = [{"target": None, "combined_forecast": None, "anchored_forecast": None}]
            for row in rows:
                append_row(RESULTS, dict(row, set=name, run=run, **git_state()))


def error_of(row, key):
    forecast = row.get(key)
    left = row["crossing_step"] - row["step"]
    if forecast is None or left <= 0:
        return None
    return max(0.0, forecast - row["step"]) / left - 1


def round_of(row):
    return 3 if "anchored_forecast" in row else 2 if "combined_forecast" in row else 1


FORECASTS = {1: (("evaluations_forecast", "evaluations"), ("loss_forecast", "loss")),
             2: (("evaluations_forecast", "evaluations"), ("loss_forecast", "loss"), ("combined_forecast", "combined")),
             3: (("evaluations_forecast", "evaluations"), ("loss_forecast", "loss"), ("combined_forecast", "combined"),
                 ("anchored_forecast", "anchored"), ("anchored_combined_forecast", "anchored + loss"))}


def log_error(row, key):
    """log(forecast crossing / true crossing), the forecast held at the progress made (as the job takes it)."""
    forecast = row.get(key)
    if forecast is None:
        return None
    return math.log(max(forecast, row["step"]) / row["crossing_step"])


def spread_table(rows):
    print("| runs | evaluations seen | forecast | with a forecast | rms log error of the crossing | median log error |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name in SETS:
        these = [r for r in rows if r["set"] == name and r.get("target") is not None]
        for n in range(1, 7):
            at = [r for r in these if r["evaluations"] == n]
            for key, label in (("anchored_forecast", "anchored"), ("anchored_combined_forecast", "anchored + loss"),
                               ("combined_forecast", "combined")):
                errors = [e for e in (log_error(r, key) for r in at) if e is not None]
                if errors:
                    rms = math.sqrt(sum(e * e for e in errors) / len(errors))
                    print(f"| {name} | {n} | {label} | {len(errors)} of {len(at)} | {rms:.2f} | {statistics.median(errors):+.2f} |")
    print()


def table(round_):
    rows = read_rows(RESULTS)  # kept gzipped (RESULTS.gz): read_rows reads either
    print(f"Round {round_}:\n")
    print("| runs | share of the steps done | evaluations | forecast | with a forecast | median abs. error "
          "of the steps left | within 25% | median signed error |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in SETS:
        these = [r for r in rows if r["set"] == name and r.get("target") is not None and round_of(r) == round_]
        if not these:
            continue
        for lo, hi in SHARES:
            at = [r for r in these if lo <= r["step"] / r["crossing_step"] < hi and r["evaluations"] >= 3]
            for key, label in FORECASTS[round_]:
                errors = [e for e in (error_of(r, key) for r in at) if e is not None]
                if not errors:
                    print(f"| {name} | {lo:.2f}-{hi:.2f} | {len(at)} | {label} | 0 | | | |")
                    continue
                absolute = sorted(abs(e) for e in errors)
                within = sum(1 for e in absolute if e <= 0.25)
                print(f"| {name} | {lo:.2f}-{hi:.2f} | {len(at)} | {label} | {len(errors)} | "
                      f"{100 * statistics.median(absolute):.1f}% | {within} | {100 * statistics.median(errors):+.1f}% |")
    runs = {name: len({r["run"] for r in rows if r["set"] == name and round_of(r) == round_}) for name in SETS}
    print(f"\nRuns: {runs}; rows with at least three evaluations seen count.\n")
    if round_ == 3:
        spread_table([r for r in rows if round_of(r) == 3])


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--replay", metavar="TOOL", help="replay the runs not yet in the rows with this tool first")
    ap.add_argument("--table", action="store_true", help="print the table only")
    args = ap.parse_args()
    if args.replay:
        replay(args.replay)
    table(1)
    table(2)
    table(3)
