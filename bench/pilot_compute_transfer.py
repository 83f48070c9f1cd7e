#!/usr/bin/python3
"""Does a pilot's compute carry over to the job where the plan sends it? (docs/notebook/round-12.md, "The oracle, round
12"). Round 10 placed the cheapest objective's pilot on two emu-half nodes and its jobs ran on one: the plan's
calibration (one factor on compute, fitted so the pilot's whole step is predicted) carried the pilot's allreduce over
the slow link into the one node's compute, and the planned seconds per epoch erred -11.6% to +17.1%. A calibration
that fitted the compute to the pilot's own compute time would carry only what compute does not share between the
two layouts. This measures that from the workers' per-step records: per launch of each tune job, the median
compute, exposed allreduce and whole step, per sample of a worker's batch; then, per job, the job's launch against
its pilot on the same type. Then the clock: every launch on two emu-one nodes (rounds 11-12's grid and tune jobs) in
the order it ran, with its compute per sample.

  bench/pilot_compute_transfer.py            (appends the launches of round 9 and 10's tune jobs to
                                              bench/results/pilot_compute_transfer.jsonl, skipping those there;
                                              prints the table from the rows)

The metrics files are the jobs' own (the --out of each row's command, kept on the machine that ran them); the rows
keep what the table needs.
"""
import json
import os
import statistics
import time

from bench_common import ROOT, append_row, launches_of, rows_done

RESULTS = os.path.join(ROOT, "bench", "results")
OUT = os.path.join(RESULTS, "pilot_compute_transfer.jsonl")
CLOCK_SOURCES = ["decision_oracle_round11_grid.jsonl", "decision_oracle_round12.jsonl"]  # one day's rows
SOURCES = ["decision_oracle_round9.jsonl", "decision_oracle_round10.jsonl", "decision_oracle_round10_before.jsonl"] + CLOCK_SOURCES


def out_dir(row):
    """The job's folder: the --out of the row's command."""
    argv = row["command"].split()
    return argv[argv.index("--out") + 1]


def launches(metrics_path):
    """Per launch its per-step medians: compute, exposed allreduce, optimizer and whole step (s)."""
    med = statistics.median
    return [{"batch_per_worker": l["batch_per_worker"], "workers": l["workers"], "started": l["started"],
             "steps": len(l["steps"]),
             "compute_s": med(s["compute_s"] for s in l["steps"]),
             "comm_exposed_s": med(s["comm_exposed_s"] for s in l["steps"]),
             "optimizer_s": med(s["optimizer_s"] for s in l["steps"]),
             "iter_s": med(s["iter_s"] for s in l["steps"])} for l in launches_of(metrics_path) if l["steps"]]


def collect():
    done = rows_done(OUT, ["source", "case"])
    for name in SOURCES:
        for row in map(json.loads, open(os.path.join(RESULTS, name))):
            if row["phase"] not in ("tune", "grid") or (name, row["case"]) in done:
                continue
            metrics = os.path.join(out_dir(row), "metrics.jsonl")
            if not os.path.exists(metrics):
                continue
            report = json.load(open(os.path.join(ROOT, row["report"])))
            segments = [{"label": s["label"], "machine": s["config"]["machine"], "nodes": s["config"]["nodes"],
                         "first_step": s["first_step"], "last_step": s["last_step"]} for s in report["segments"]]
            chosen = (report.get("plan") or {}).get("chosen") or {}
            append_row(OUT, {"source": name, "case": row["case"], "model": row["model"], "seed": row["seed"],
                             "segments": segments, "launches": launches(metrics),
                             "planned_iteration_s": (chosen.get("iteration_s") or {}).get("estimate"),
                             "planned_machine": chosen.get("machine"), "planned_nodes": chosen.get("nodes"),
                             "planned_batch_per_worker": chosen.get("batch_per_worker")})


def per_sample(launch, key):
    return launch[key] / launch["batch_per_worker"] * 1e6


def main():
    collect()
    print("| rows | job | pilot | job's launch | compute per sample, pilot / job (us) | job / pilot | whole step per "
          "sample, pilot / job (us) | job / pilot | pilot's exposed allreduce | planned step / run |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    rows = list(map(json.loads, open(OUT)))
    for row in rows:
        segs, runs = row["segments"], row["launches"]
        if len(segs) < 2 or len(runs) != len(segs):
            continue
        pilot, job = runs[0], runs[-1]
        where = lambda s, l: f"{s['nodes']} x {s['machine']}, b {l['batch_per_worker']}"
        same = segs[0]["machine"] == segs[-1]["machine"]
        ratio = per_sample(job, "compute_s") / per_sample(pilot, "compute_s")
        step_ratio = per_sample(job, "iter_s") / per_sample(pilot, "iter_s")
        print(f"| {row['source'].replace('decision_oracle_', '').replace('.jsonl', '')} | {row['case']} | "
              f"{where(segs[0], pilot)} | {where(segs[-1], job)} | {per_sample(pilot, 'compute_s'):.0f} / "
              f"{per_sample(job, 'compute_s'):.0f} | {ratio:.3f}{'' if same else ' (other type)'} | "
              f"{per_sample(pilot, 'iter_s'):.0f} / {per_sample(job, 'iter_s'):.0f} | {step_ratio:.3f} | "
              f"{pilot['comm_exposed_s'] / pilot['iter_s']:.0%} of its step | "
              f"{row['planned_iteration_s'] / job['iter_s'] - 1:+.1%} |")


    clock(rows)


def clock(rows):
    """Every launch on two emu-one nodes of rounds 11-12, in the order it started (UTC), compute per sample."""
    runs = [(l["started"], row, l) for row in rows if row["source"] in CLOCK_SOURCES
            for seg, l in zip(row["segments"], row["launches"])
            if seg["machine"] == "emu-one" and seg["nodes"] == 2 and l.get("started")]
    print("\n| started (UTC) | rows | job | per-worker batch | steps | compute per sample (us) | whole step per sample (us) |")
    print("|---|---|---|---|---|---|---|")
    for started, row, l in sorted(runs, key=lambda x: x[0]):
        print(f"| {time.strftime('%Y-%m-%d %H:%M', time.gmtime(started))} | "
              f"{row['source'].replace('decision_oracle_', '').replace('.jsonl', '')} | {row['case']} | "
              f"{l['batch_per_worker']} | {l['steps']} | {per_sample(l, 'compute_s'):.0f} | {per_sample(l, 'iter_s'):.0f} |")


if __name__ == "__main__":
    main()
