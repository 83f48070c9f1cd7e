#!/usr/bin/python3
"""AGS's factors at the reference batch, as jobs ran them: per AGS run at a
global batch of 128 (the rate's reference) in the oracle's work folders, the
mean factor over the run and over its first 200 steps, and the mean share of
tensors clipped at the upper bound (B / B_ref = 1 there). Before 4ec9395 the
trust and trend terms acted under that bound and could only lower steps;
since, the factor there is the noise gain alone, 1.

The per-step values are extracted once from the runs' metrics (kept in the
job folders while they exist) into a compact gzipped file in bench/results:

  bench/ags_at_reference.py --extract /tmp/tula-oracle-round24 /tmp/tula-oracle-round26-lenet ...
  bench/ags_at_reference.py [--runs]    # the table, from --steps (one row per folder, or per run)
"""
import argparse
import glob
import gzip
import json
import os
import statistics

from bench_common import write_gzipped_lines

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = os.path.join(HERE, "results", "ags_at_reference_steps.jsonl.gz")
REFERENCE = 128
EARLY = 200


def extract(works, out):
    """One line per step of every AGS run at the reference batch: its folder, the step, the factors' mean and the
    share clipped at the upper bound (factors rounded to 1e-4)."""
    lines = []
    for work in works:
        for metrics in sorted(glob.glob(os.path.join(work, "*", "metrics.jsonl"))):
            run = os.path.relpath(os.path.dirname(metrics), os.path.dirname(work.rstrip("/")))
            for l in open(metrics):
                if '"type":"iter"' not in l or '"ags_factors"' not in l:
                    continue
                r = json.loads(l)
                if r["global_batch"] != REFERENCE:
                    continue
                lines.append(json.dumps({"run": run, "step": r["step"],
                                         "mean": round(r["ags_factors"]["mean"], 4),
                                         "clipped_high": round(r["ags_clipped_high"], 4)}, separators=(",", ":")))
    write_gzipped_lines(out, lines)
    print(f"{len(lines)} steps into {os.path.relpath(out)}")


def table(path, per_run):
    runs = {}
    for l in gzip.open(path, "rt"):
        r = json.loads(l)
        runs.setdefault(r["run"], []).append(r)
    summary = {}
    for run, rows in sorted(runs.items()):
        summary[run] = (len(rows), statistics.mean(x["mean"] for x in rows),
                        statistics.mean(x["mean"] for x in rows[:EARLY]),
                        statistics.mean(x["clipped_high"] for x in rows))
    if per_run:
        print(f"| run | steps at B = {REFERENCE} | mean factor | over the first {EARLY} steps | clipped at the upper bound |")
        print("|---|---|---|---|---|")
        for run, (n, mean, early, clipped) in summary.items():
            print(f"| {run} | {n} | {mean:.3f} | {early:.3f} | {clipped:.1%} |")
        return
    # One row per work folder (a round): the ranges over its runs.
    print(f"| work folder | AGS runs at B = {REFERENCE} | mean factor over a run | over its first {EARLY} steps "
          "| tensors clipped at the upper bound |")
    print("|---|---|---|---|---|")
    by_folder = {}
    for run, values in summary.items():
        by_folder.setdefault(run.split("/")[0], []).append(values)
    span = lambda xs, f: f"{f(min(xs))}-{f(max(xs))}" if f(min(xs)) != f(max(xs)) else f(min(xs))
    for folder, values in by_folder.items():
        cols = list(zip(*values))
        print(f"| {folder} | {len(values)} | {span(cols[1], '{:.3f}'.format)} | {span(cols[2], '{:.3f}'.format)} "
              f"| {span(cols[3], '{:.1%}'.format)} |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", default=STEPS, help="the extracted per-step rows")
    p.add_argument("--extract", nargs="+", metavar="WORK", help="extract the rows from these oracle work folders")
    p.add_argument("--runs", action="store_true", help="one row per run instead of per work folder")
    args = p.parse_args()
    if args.extract:
        extract(args.extract, args.steps)
    table(args.steps, args.runs)


if __name__ == "__main__":
    main()
