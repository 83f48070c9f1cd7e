#!/usr/bin/python3
"""Which configuration three knee rules name on the fronts the oracle measured (docs/notebook/round-45-46.md, "The oracle,
round 45"): a development analysis of grid rows already measured, which led to 20a2182; the held-out test of the
rule it led to is round 46.

For each grid file: per configuration the median time and cost over its seeds (a configuration with a seed that
missed the target is left out, as decision_oracle.py's oracle does), the Pareto front, and the knee by
  kneedle   the planner's rule until 20a2182: Kneedle's difference on the front's linearly normalized time and cost,
            the point farthest below the chord (on these fronts of two to four points the point Kneedle declared, or
            its own fallback; two points: the cheaper)
  log       the same with both axes log-scaled (relative changes weigh alike at every scale)
  product   the front's point of least time x cost, the planner's rule since 20a2182 (tula_front_knee, the planner's
            own code, is run too and must agree)
and for each the time against the default's layout (1 x emu-one at 128) on the same front, and what the next faster
point of the front saves and costs from Kneedle's knee.

  /usr/bin/python3 bench/knee_on_fronts.py bench/results/decision_oracle_round40_grid.jsonl ...
  /usr/bin/python3 bench/knee_on_fronts.py --repeat bench/results/decision_oracle_round45_resnet20_grid_repeat.jsonl \
      bench/results/decision_oracle_round45_resnet20_grid.jsonl
"""
import argparse
import json
import math
import os

from decision_oracle import oracle_choices

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
DEFAULT = ("emu-one", 1, 128)


def fronts_of(path, repeats, front_knee):
    """The grid's configurations (sorted), their median points and the planner's picks, as decision_oracle.py's
    oracle makes them (oracle_choices), with --repeat's rows in place of the ones they measured again."""
    rows = []
    for r in map(json.loads, (l for l in open(path) if l.strip())):
        if r.get("phase") == "grid":
            rows.append(repeats.get((r["machine"], r["nodes"], r["batch"], r["seed"]), r))
    grid = sorted({(r["machine"], r["nodes"], r["batch"]) for r in rows})
    configs, points, picks, _ = oracle_choices(argparse.Namespace(grid=grid, front_knee=front_knee), rows)
    return configs, points, picks, sorted({r["seed"] for r in rows})


def farthest_below_chord(points, front, scale=lambda v: v):
    lt = [scale(points[i]["time_s"]) for i in front]
    lc = [scale(points[i]["cost"]) for i in front]
    if len(front) < 3:
        return front[-1]  # two points: the cheaper, as Kneedle's fallback did
    d = [1 - (t - min(lt)) / (max(lt) - min(lt)) - (c - min(lc)) / (max(lc) - min(lc)) for t, c in zip(lt, lc)]
    return front[max(range(len(front)), key=lambda k: d[k])]


def describe(c):
    return f"{c[1]} x {c[0]} at {c[2]}"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("grids", nargs="+")
    p.add_argument("--front-knee", default=os.path.join(ROOT, "build", "bench", "tula_front_knee"))
    p.add_argument("--repeat", action="append", default=[],
                   help="grid rows measured again: each replaces the row of its configuration and seed")
    args = p.parse_args()
    repeats = {(r["machine"], r["nodes"], r["batch"], r["seed"]): r
               for f in args.repeat for r in map(json.loads, (l for l in open(f) if l.strip())) if r.get("phase") == "grid"}
    print("| grid (seeds) | front, fastest first: median time, cost | Kneedle's knee | next faster from it: time, "
          "money | log-axes knee | least time x cost | each knee's time / the default's (1 x emu-one at 128) |")
    print("|---|---|---|---|---|---|---|")
    for path in args.grids:
        configs, points, picks, seeds = fronts_of(path, repeats, args.front_knee)
        front = picks["front"]
        rules = {"kneedle": farthest_below_chord(points, front), "log": farthest_below_chord(points, front, math.log),
                 "product": min(front, key=lambda i: points[i]["time_s"] * points[i]["cost"])}
        if picks["knee"] != rules["product"]:
            raise SystemExit(f"{path}: tula_front_knee names {configs[picks['knee']]}, not the least time x cost")
        k = front.index(rules["kneedle"])
        if k > 0:
            faster = points[front[k - 1]]
            here = points[rules["kneedle"]]
            step = (f"{faster['time_s'] / here['time_s'] - 1:+.0%}, {faster['cost'] / here['cost'] - 1:+.0%} "
                    f"({describe(configs[front[k - 1]])})")
        else:
            step = "none (the knee is the fastest)"
        shown = "; ".join(f"{describe(configs[i])}: {points[i]['time_s']:.0f} s, {points[i]['cost']:.5f}" for i in front)
        if DEFAULT in configs:
            base = points[configs.index(DEFAULT)]["time_s"]
            ratios = ", ".join(f"{name} {points[i]['time_s'] / base:.2f}" for name, i in rules.items())
        else:
            ratios = "the default's layout not in the grid"
        print(f"| {os.path.relpath(path, ROOT)} ({', '.join(map(str, seeds))}) | {shown} | "
              f"{describe(configs[rules['kneedle']])} | {step} | {describe(configs[rules['log']])} | "
              f"{describe(configs[rules['product']])} | {ratios} |")


if __name__ == "__main__":
    main()
