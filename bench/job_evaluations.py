#!/usr/bin/python3
"""The evaluation times of `tula tune` jobs as planned and as run: per job
directory, the pilot's evaluation (the first launch's), the evaluation the
plan predicted for its chosen configuration, and the chosen launch's
evaluations (its first, the cold one if any, and the median of the later
ones). One JSON row per job, appended to --out (a job already there is
skipped), so that the figures outlive the job directories.
--per-launch keeps instead every launch of each job: its global batch, its
evaluations (step, the epoch it fell in, seconds) and its steps' seconds;
--launch-table prints their ranges by arm and launch: the launch's first
evaluation, those before the job's first epoch ended, and the others.

  bench/job_evaluations.py --arm NAME --out F [--per-launch] JOB_DIR...
  bench/job_evaluations.py --out F --table | --launch-table
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
    if pilot and report["segments"][0]["exit"] == "planned here; the workers went on":
        chosen = dict(pilot, evals=pilot["evals"][1:])  # one launch: the training's evaluations follow the pilot's
    else:
        chosen = next((l for l in launches[1 if pilot else 0:] if l["evals"]), None)
    planned = (report.get("plan") or {}).get("chosen") or {}
    return {"job": os.path.basename(os.path.normpath(job_dir)), "model": report["job"].get("model"),
            "pilot_eval_s": pilot["evals"][0] if pilot and pilot["evals"] else None,
            "planned_eval_s": (planned.get("eval_s") or {}).get("estimate"),
            "chosen_workers": chosen["workers"] if chosen else None,
            "first_eval_s": chosen["evals"][0] if chosen else None,
            "later_eval_median_s": statistics.median(chosen["evals"][1:]) if chosen and len(chosen["evals"]) > 1 else None,
            "evals": len(chosen["evals"]) if chosen else 0}


def launches_row(job_dir):
    out = []
    for l in launches_of(os.path.join(job_dir, "metrics.jsonl")):
        per_epoch = l["train_samples"] / l["global_batch"]  # steps in an epoch at this launch's batch
        out.append({"global_batch": l["global_batch"], "workers": l["workers"],
                    "evals": [[step, step / per_epoch, s] for step, s in l["evals"]],
                    "steps": len(l["iter_s"]), "steps_s": sum(l["iter_s"])})
    return {"job": os.path.basename(os.path.normpath(job_dir)), "launches": out}


def launch_table(out):
    groups = {}
    for r in map(json.loads, open(out)):
        for i, l in enumerate(r["launches"]):
            g = groups.setdefault((r["arm"], i + 1, l["global_batch"]), {"first": [], "epoch0": [], "later": []})
            for k, (_, epoch, s) in enumerate(l["evals"]):
                g["first" if k == 0 else "epoch0" if epoch < 1 - 1e-9 else "later"].append(s)
    rng = lambda xs: f"{min(xs):.2f}-{max(xs):.2f} s ({len(xs)})" if xs else "-"
    print("| arm | launch | global batch | its first evaluation | others before epoch 1 | the rest |")
    print("|---|---|---|---|---|---|")
    for (arm, i, b), g in sorted(groups.items()):
        print(f"| {arm} | {i} | {b} | {rng(g['first'])} | {rng(g['epoch0'])} | {rng(g['later'])} |")
    print("\n| arm | jobs | seconds in steps | seconds in evaluations | evaluations |")
    print("|---|---|---|---|---|")
    totals = {}
    for r in map(json.loads, open(out)):
        t = totals.setdefault(r["arm"], {"steps": [], "evals": [], "n": []})
        t["steps"].append(sum(l["steps_s"] for l in r["launches"]))
        t["evals"].append(sum(e[2] for l in r["launches"] for e in l["evals"]))
        t["n"].append(sum(len(l["evals"]) for l in r["launches"]))
    for arm, t in sorted(totals.items()):
        print(f"| {arm} | {len(t['n'])} | {min(t['steps']):.1f}-{max(t['steps']):.1f} | "
              f"{min(t['evals']):.1f}-{max(t['evals']):.1f} | {min(t['n'])}-{max(t['n'])} |")


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
    p.add_argument("--per-launch", action="store_true", help="keep every launch's evaluations and steps")
    p.add_argument("--launch-table", action="store_true")
    p.add_argument("jobs", nargs="*")
    args = p.parse_args()
    if args.table:
        table(args.out)
        return
    if args.launch_table:
        launch_table(args.out)
        return
    if args.per_launch:
        done = rows_done(args.out, ("arm", "job"))
        for job_dir in args.jobs:
            row = dict(arm=args.arm, **launches_row(job_dir))
            if (row["arm"], row["job"]) not in done:
                append_row(args.out, row)
        return
    done = rows_done(args.out, ("arm", "job", "model"))
    for job_dir in args.jobs:
        row = dict(arm=args.arm, **job_row(job_dir))
        if (row["arm"], row["job"], row["model"]) not in done:
            append_row(args.out, row)


if __name__ == "__main__":
    main()
