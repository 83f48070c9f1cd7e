#!/usr/bin/python3
"""Fills in the training curve of job-history lines written before each line named it (tune::history_curve: the
seed and each launch's workers and global batch from its first step), from the decision_oracle.py rows that ran
those jobs, so that a history copied from an earlier round counts each curve once as a new job's would.

  bench/history_curves.py --history IN.jsonl --out OUT.jsonl ROWS.jsonl ...

A line's job is the row whose command wrote to it (--out). A job that moved (an applied re-plan) or that no row
names keeps an empty curve, a curve of its own, as tune reads a line written before. Lines that name a curve
already are copied as they are. Prints how many lines were filled in.
"""
import argparse
import json
import os

from bench_common import command_option


def curve_of(row):
    if any(p.get("applied") for p in row.get("replans") or []):
        return ""
    c = row["chosen"]
    workers = c["nodes"] * c["workers_per_node"]
    return f"seed {row['seed']}; {workers} x {c['global_batch'] // workers} from step 0"


def rows_by_job(rows_paths):
    """The tune rows of `rows_paths`, by the job folder each wrote to."""
    by_job = {}
    for path in rows_paths:
        for r in map(json.loads, open(path)):
            if r.get("phase") == "tune" and r.get("chosen"):
                by_job[command_option(r["command"], "--out")] = r
    return by_job


def filled_lines(history, by_job):
    """The history's lines, each without a curve given the curve of the row that ran its job; and how many were."""
    lines = [json.loads(line) for line in open(history) if line.strip()]
    filled = 0
    for line in lines:
        if line.get("curve") or line.get("job") not in by_job:
            continue
        line["curve"] = curve_of(by_job[line["job"]])
        filled += bool(line["curve"])
    return lines, filled


def write_lines(lines, out):
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.writelines(json.dumps(line) + "\n" for line in lines)
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--history", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("rows", nargs="+")
    args = ap.parse_args()
    lines, filled = filled_lines(args.history, rows_by_job(args.rows))
    write_lines(lines, args.out)
    curves = {line["curve"] for line in lines if line.get("curve")}
    print(f"{args.out}: {len(lines)} lines, {filled} curves filled in ({len(curves)} distinct), "
          f"{len(lines) - filled} left empty")

if __name__ == "__main__":
    main()
