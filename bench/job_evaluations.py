#!/usr/bin/python3
"""The evaluation times of `tula tune` jobs as planned and as run: per job
directory, the pilot's evaluation (the first launch's), the evaluation the
plan predicted for its chosen configuration, and the chosen launch's
evaluations (its first, the cold one if any, and the median of the later
ones). One JSON row per job, appended to --out (a job already there is
skipped), so that the figures outlive the job directories.

  bench/job_evaluations.py --arm NAME --out F JOB_DIR...
  bench/job_evaluations.py --out F --table
"""
import argparse
import json
import os
import statistics

from bench_common import append_row, launches_of, rows_done


def job_row(job_dir):
    report = json.load(open(os.path.join(job_dir, "report.json")))
    launches = [dict(l, evals=[t for _, t in l["evals"]]) for l in launches_of(os.path.join(job_dir, "metrics.jsonl"))]
    pilot = launches[0] if report["segments"][0]["label"] == "pilot" else None
    chosen = next((l for l in launches[1 if pilot else 0:] if l["evals"]), None)
    planned = (report.get("plan") or {}).get("chosen") or {}
    return {"job": os.path.basename(os.path.normpath(job_dir)), "model": report["job"].get("model"),
            "pilot_eval_s": pilot["evals"][0] if pilot and pilot["evals"] else None,
            "planned_eval_s": (planned.get("eval_s") or {}).get("estimate"),
            "chosen_workers": chosen["workers"] if chosen else None,
            "first_eval_s": chosen["evals"][0] if chosen else None,
            "later_eval_median_s": statistics.median(chosen["evals"][1:]) if chosen and len(chosen["evals"]) > 1 else None,
            "evals": len(chosen["evals"]) if chosen else 0}


def table(out):
    print("| arm | job | model | pilot's evaluation | planned for the chosen | run: first / later median | "
          "planned / later |")
    print("|---|---|---|---|---|---|---|")
    for r in map(json.loads, open(out)):
        ratio = r["planned_eval_s"] / r["later_eval_median_s"] if r["planned_eval_s"] and r["later_eval_median_s"] else None
        fmt = lambda x: "-" if x is None else f"{x:.3f} s"
        print(f"| {r['arm']} | {r['job']} | {r['model']} | {fmt(r['pilot_eval_s'])} | {fmt(r['planned_eval_s'])} | "
              f"{fmt(r['first_eval_s'])} / {fmt(r['later_eval_median_s'])} | "
              f"{'-' if ratio is None else f'{ratio - 1:+.1%}'} |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--arm", help="the name the rows carry (e.g. after, before)")
    p.add_argument("--out", required=True)
    p.add_argument("--table", action="store_true")
    p.add_argument("jobs", nargs="*")
    args = p.parse_args()
    if args.table:
        table(args.out)
        return
    done = rows_done(args.out, ("arm", "job", "model"))
    for job_dir in args.jobs:
        row = dict(arm=args.arm, **job_row(job_dir))
        if (row["arm"], row["job"], row["model"]) not in done:
            append_row(args.out, row)


if __name__ == "__main__":
    main()
