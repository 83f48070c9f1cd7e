#!/usr/bin/python3
"""Round 7's table (docs/notebook/round-07.md, "The oracle, round 7"): per case and
seed, `tula tune --objective knee` with the pilot's workers going on where
the plan keeps them (after) against the code before (the pilot stopped, the
job relaunched), and the default (a): the chosen configuration, whether the
pilot's launch went on, profile, pilot and restart seconds, the whole job;
then the ratios (ratio of medians, median of pair ratios). --gaps keeps,
per job directory, the seconds between its steps beyond the steps and
evaluations themselves (a relaunch's stop and start, from the metrics: the
first launch's start is not between steps), as rows in --gaps-out (a job
already there is skipped), so that they outlive the job directories; the
table shows them where they are kept.

  bench/pilot_goes_on.py [--rows bench/results]
  bench/pilot_goes_on.py --gaps ARM JOB_DIR...
"""
import argparse
import json
import os
import statistics

from bench_common import append_row, rows_done

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = [("small_cnn to 83%", "decision_oracle_round7"), ("LeNet-5 to 86%", "decision_oracle_round7_lenet86")]
WENT_ON = "planned here; the workers went on"


def rows(path):
    return [json.loads(l) for l in open(path)] if os.path.exists(path) else []


def went_on(row):
    report = json.load(open(os.path.join(HERE, "..", row["report"])))
    return report["segments"][0]["exit"] == WENT_ON


def between_steps(job_dir):
    """The wall seconds between consecutive steps beyond each step's own time and the evaluations between them."""
    recs = [json.loads(l) for l in open(os.path.join(job_dir, "metrics.jsonl"))]
    lost, last, evals = 0.0, None, 0.0
    for r in recs:
        if r["type"] == "eval":
            evals += r["eval_s"]
        elif r["type"] == "iter":
            if last is not None:
                lost += max(0.0, r["time"] - last - r["iter_s"] - evals)
            last, evals = r["time"], 0.0
    return lost


def placement(c):
    return f"{c['nodes']} x {c['machine']}, {c['batch_per_worker']}"


def ratios(num, den):
    """Ratio of medians and median of pair ratios over the seeds both have."""
    seeds = sorted(set(num) & set(den))
    if not seeds:
        return "-"
    rm = statistics.median(num[s] for s in seeds) / statistics.median(den[s] for s in seeds)
    mp = statistics.median(num[s] / den[s] for s in seeds)
    return f"{rm:.2f}x, {mp:.2f}x ({len(seeds)} seeds)"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rows", default=os.path.join(HERE, "results"))
    p.add_argument("--gaps", nargs="+", metavar=("ARM", "JOB_DIR"))
    p.add_argument("--gaps-out", default=os.path.join(HERE, "results", "round7_gaps.jsonl"))
    a = p.parse_args()
    if a.gaps:
        arm, done = a.gaps[0], rows_done(a.gaps_out, ["arm", "job"])
        for d in a.gaps[1:]:
            job = os.path.basename(os.path.normpath(d))
            if (arm, job) not in done:
                append_row(a.gaps_out, {"arm": arm, "job": job, "between_steps_s": between_steps(d)})
        return
    gaps = {(r["arm"], r["job"]): r["between_steps_s"] for r in rows(a.gaps_out)}
    print("| case | seed | arm | chosen | pilot's launch went on | profile | pilot | restarts | between steps | whole job "
          "| (a) default |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    summary = []
    for name, stem in CASES:
        arms = {"after": [r for r in rows(os.path.join(a.rows, stem + ".jsonl")) if r["phase"] == "tune"],
                "before": [r for r in rows(os.path.join(a.rows, stem + "_before.jsonl")) if r["phase"] == "tune"]}
        default = {r["seed"]: r["time_s"] for r in rows(os.path.join(a.rows, stem + ".jsonl"))
                   if r["phase"] == "a" and r["reached"]}
        totals = {arm: {r["seed"]: r["total_s"] for r in rs if r["reached"]} for arm, rs in arms.items()}
        for seed in sorted({r["seed"] for rs in arms.values() for r in rs}):
            for arm in ("after", "before"):
                a_text = f"{default[seed]:.1f} s" if seed in default else "-"
                for r in (r for r in arms[arm] if r["seed"] == seed):
                    gap = gaps.get((arm, os.path.basename(r["report"]).replace(".report.json", "")))
                    print(f"| {name} | {seed} | {arm} | {placement(r['chosen'])} | {'yes' if went_on(r) else 'no'} | "
                          f"{r['profile_s']:.1f} s | {r['pilot_s']:.1f} s | {r['restart_s']:.1f} s | "
                          f"{'-' if gap is None else f'{gap:.1f} s'} | "
                          f"{r['total_s']:.1f} s{'' if r['reached'] else ' (not reached)'} | {a_text} |")
        summary.append((name, ratios(totals["before"], totals["after"]), ratios(default, totals["after"]),
                        ratios(default, totals["before"])))
    print("\n| case | before / after: whole job | (a) / after | (a) / before |")
    print("|---|---|---|---|")
    for s in summary:
        print("| " + " | ".join(s) + " |")


if __name__ == "__main__":
    main()
