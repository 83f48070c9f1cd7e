#!/usr/bin/env python3
"""The knee's two rules on round 9's knee jobs (docs/notebook/round-10.md, "The oracle, round 10"): the plan's knee (Kneedle on
the predicted front of the work left; where Kneedle declares none, the point farthest below the chord) against the rule
that weighs the move there from the running pilot (`resize_pays`: more than --min-saving saved on one side, net of the
restart, without losing more than that on the other).

For each job: each front point's distance below the chord (Kneedle's difference, 1 - x - y on the front's normalized
time x and cost y), the same measure for the move the plan proposed computed from the move's own numbers (time left
here and there, the restart, the money), and where the knee goes when the fastest point's time (and its money with
it) is 10% lower or higher: the size of the planned step-time errors the rounds measured (round 9: -17.7% to +13.9%
per epoch).

  /usr/bin/python3 bench/knee_rules.py
"""
import json
import os

from bench_common import ROOT, below_chord

REPORTS = [os.path.join(ROOT, "bench", "results", "decision_oracle_round9", f"tune-knee-s{s}.report.json")
           for s in (29, 30, 31)]


def describe(p):
    return f"{p['nodes']} x {p['machine']} b {p['batch_per_worker']}"


def main():
    print("| seed | front (time, cost) | distance below the chord | the knee | the proposed move on its own numbers "
          "| the point farthest below the chord with the fastest point's time and money 10% lower / higher |")
    print("|---|---|---|---|---|---|")
    for path in REPORTS:
        rep = json.load(open(path))
        front = rep["plan"]["front"]
        seed = path.rsplit("-s", 1)[1].split(".")[0]
        points = "; ".join(f"{describe(p)}: {p['time_s']:.1f} s, {p['cost']:.5f}" for p in front)
        dist = ", ".join(f"{below_chord(front, p['time_s'], p['cost']):+.3f}" for p in front)
        knee = next(p for p in front if "knee" in p["marks"])
        move = "none proposed (the knee is the running configuration)"
        for r in rep["replans"]:
            n = r["numbers"]
            here = n["remaining_s_here"]
            there = n["remaining_s_there"] + r["restart_cost_s"]
            price = {p["machine"]: p["cost"] / p["time_s"] / p["nodes"] for p in front}
            cost_here = here * r["from"]["nodes"] * price[r["from"]["machine"]]
            cost_there = there * r["to"]["nodes"] * price[r["to"]["machine"]]
            gain = below_chord(front, there, cost_there) - below_chord(front, here, cost_here)
            move = (f"{describe(r['from'])} -> {describe(r['to'])}: {here:.1f} s -> {there:.1f} s, "
                    f"{cost_here:.5f} -> {cost_there:.5f}; gain below the chord {gain:+.3f}")
        moved_knees = []
        for scale in (0.9, 1.1):
            moved = [dict(p) for p in front]
            moved[0]["time_s"] *= scale
            moved[0]["cost"] *= scale
            d = [below_chord(moved, p["time_s"], p["cost"]) for p in moved]
            at = max(range(len(d)), key=lambda i: d[i])
            moved_knees.append(f"{scale - 1:+.0%}: {describe(moved[at])} ({d[at]:+.3f})")
        print(f"| {seed} | {points} | {dist} | {describe(knee)} | {move} | {' / '.join(moved_knees)} |")


if __name__ == "__main__":
    main()
