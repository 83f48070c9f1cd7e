#!/usr/bin/python3
"""Round 7's table (docs/benchmarks.md, "The oracle, round 7"): per case and
seed, `tula tune --objective knee` with the pilot's workers going on where
the plan keeps them (after) against the code before (the pilot stopped, the
job relaunched), and the default (a): the chosen configuration, whether the
pilot's launch went on, profile, pilot and restart seconds, the whole job;
then the ratios (ratio of medians, median of pair ratios).

  bench/pilot_goes_on.py [--rows bench/results]
"""
import argparse
import json
import os
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = [("small_cnn to 83%", "decision_oracle_round7"), ("LeNet-5 to 86%", "decision_oracle_round7_lenet86")]
WENT_ON = "planned here; the workers went on"


def rows(path):
    return [json.loads(l) for l in open(path)] if os.path.exists(path) else []


def went_on(row):
    report = json.load(open(os.path.join(HERE, "..", row["report"])))
    return report["segments"][0]["exit"] == WENT_ON


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
    a = p.parse_args()
    print("| case | seed | arm | chosen | pilot's launch went on | profile | pilot | restarts | whole job | (a) default |")
    print("|---|---|---|---|---|---|---|---|---|---|")
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
                    print(f"| {name} | {seed} | {arm} | {placement(r['chosen'])} | {'yes' if went_on(r) else 'no'} | "
                          f"{r['profile_s']:.1f} s | {r['pilot_s']:.1f} s | {r['restart_s']:.1f} s | "
                          f"{r['total_s']:.1f} s{'' if r['reached'] else ' (not reached)'} | {a_text} |")
        summary.append((name, ratios(totals["before"], totals["after"]), ratios(default, totals["after"]),
                        ratios(default, totals["before"])))
    print("\n| case | before / after: whole job | (a) / after | (a) / before |")
    print("|---|---|---|---|")
    for s in summary:
        print("| " + " | ".join(s) + " |")


if __name__ == "__main__":
    main()
