#!/usr/bin/python3
"""The day's front at equal epochs: each grid configuration's median time and cost per epoch trained (the grid rows'
time and cost over their epochs), its Pareto front and knee by the planner's rule (build/bench/tula_front_knee), and
each knee job's configuration placed on it. The oracle's front as measured carries where each run's crossing fell,
a quarter epoch apart between seeds; per epoch that is taken out, which is what the plan's time and cost models
predict (the epochs are the statistical model's part, and at one global batch they are the same for every
configuration).
  /usr/bin/python3 bench/front_per_epoch.py --grid bench/results/decision_oracle_round30_grid.jsonl \
      --jobs bench/results/decision_oracle_round30.jsonl"""
import argparse
import json
import os

from bench_common import below_chord
from decision_oracle import ROOT, chosen_config, describe, oracle_choices


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--grid", dest="grid_file", required=True, help="grid rows")
    p.add_argument("--jobs", help="rows with knee jobs to place on the front")
    p.add_argument("--front-knee", default=os.path.join(ROOT, "build", "bench", "tula_front_knee"))
    args = p.parse_args()
    # Per epoch, then the oracle's own medians, front and picks over every configuration the rows hold.
    rows = [dict(r, time_s=r["time_s"] / r["epochs"], cost=r["cost"] / r["epochs"])
            for r in map(json.loads, open(args.grid_file)) if r["phase"] == "grid"]
    args.grid = sorted({(r["machine"], r["nodes"], r["batch"]) for r in rows})
    configs, points, picks, by_config = oracle_choices(args, rows)
    front = [points[i] for i in picks["front"]]
    print("| configuration | seeds | epochs | time per epoch | cost per epoch (USD) | on the front | below the chord |")
    print("|---|---|---|---|---|---|---|")
    for i, c in enumerate(configs):
        rows = by_config[c]
        role = [name for name in ("fastest", "knee", "cheapest") if picks.get(name) == i]
        on = ("yes" + (f" ({', '.join(role)})" if role else "")) if i in picks["front"] else "no"
        d = below_chord(front, points[i]["time_s"], points[i]["cost"]) if len(front) > 1 else float("nan")
        print(f"| {describe(c)} | {', '.join(str(r['seed']) for r in rows)} | "
              f"{', '.join(format(r['epochs'], '.2f') for r in rows)} | {points[i]['time_s']:.1f} s | "
              f"{points[i]['cost']:.6f} | {on} | {d:+.3f} |")
    if args.jobs:
        knee = [r for r in map(json.loads, open(args.jobs)) if r["phase"] == "tune" and r.get("objective") == "knee"]
        chosen = sorted({chosen_config(r) for r in knee})
        print("\nknee jobs ran " + "; ".join(f"{describe(c)} ({sum(chosen_config(r) == c for r in knee)} jobs)"
                                            + ("" if c in configs else ": not in the grid") for c in chosen)
              + f"; the knee at equal epochs: {describe(configs[picks['knee']])}")


if __name__ == "__main__":
    main()
