#!/usr/bin/python3
"""Where a run's step went, from its workers' metrics: per run folder, the median over its steps after the first 20
of rank 0's iter_s, compute_s (forward+backward), comm_exposed_s (the allreduce left after backward), comm_busy_s and
data_wait_s, with the layout it ran at (the last launch's workers). One row per run into --out, beside the
configuration's predicted step where the run's report holds one (its first timeline entry). Rows already there
(by folder name) are skipped; the metrics live in the runs' work folders, so measure before they are cleared.

  bench/step_parts.py --runs /tmp/tula-oracle-round47-lenet5 --out bench/results/round47_step_parts.jsonl [--table]
"""
import argparse
import json
import os
import statistics

from bench_common import append_row, git_state, read_rows

PARTS = ["iter_s", "compute_s", "comm_exposed_s", "comm_busy_s", "data_wait_s"]


def step_parts(folder):
    """The medians of PARTS over the folder's steps past 20, the workers of its last launch, and the predicted step."""
    rows = []
    workers = None
    with open(os.path.join(folder, "metrics.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            if r.get("type") == "start":
                workers = r.get("workers")
            elif r.get("type") == "iter" and r.get("step", 0) > 20:
                rows.append(r)
    if not rows:
        return None
    row = {p: statistics.median(r[p] for r in rows) for p in PARTS}
    row["steps"] = len(rows)
    row["workers"] = workers
    report = os.path.join(folder, "report.json")
    if os.path.exists(report):
        with open(report) as f:
            timeline = json.load(f).get("timeline", [])
        if timeline:
            row["iteration_s_predicted"] = timeline[0].get("iteration_s_predicted")
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", action="append", required=True, help="a work folder of runs (repeatable)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--table", action="store_true", help="print the rows of --out as a table")
    args = ap.parse_args()
    state = git_state()
    done = {r["run"] for r in read_rows(args.out)}
    for runs in args.runs:
        for name in sorted(os.listdir(runs)):
            folder = os.path.join(runs, name)
            run = os.path.basename(runs.rstrip("/")) + "/" + name
            if run in done or not os.path.isfile(os.path.join(folder, "metrics.jsonl")):
                continue
            parts = step_parts(folder)
            if parts:
                append_row(args.out, {"run": run, **parts, **state})
    if args.table:
        print("| run | workers | step | compute | exposed allreduce | data wait | step predicted at the start |")
        print("|---|---|---|---|---|---|---|")
        for r in read_rows(args.out):
            ms = lambda v: "-" if v is None else f"{1000 * v:.2f} ms"
            print(f"| {r['run']} | {r['workers']} | {ms(r['iter_s'])} | {ms(r['compute_s'])} | "
                  f"{ms(r['comm_exposed_s'])} | {ms(r['data_wait_s'])} | {ms(r.get('iteration_s_predicted'))} |")


if __name__ == "__main__":
    main()
