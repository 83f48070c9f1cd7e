#!/usr/bin/env python3
"""Round 10 (docs/notebook/round-10.md, "The oracle, round 10"): the pilot placed by the objective against the code before
it, `tula tune --objective cheapest`, seed by seed. For each pair: where the pilot ran, its seconds and money (the
profile's included: it is billed at the pilot's type), the whole job's time and money in both arms, and the after/before
ratios; then the medians of the pair ratios over every pair of a case.

  /usr/bin/python3 bench/pilot_placement_pairs.py
"""
import json
import os
import statistics

from bench_common import ROOT
from pilot_goes_on import rows

with open(os.path.join(ROOT, "catalogs", "emulated.json")) as f:
    PRICES = {m["name"]: m["price_per_hour"] for m in json.load(f)["machine_types"]}
CASES = [("small_cnn to 83%", "decision_oracle_round10"), ("LeNet-5 to 86%", "decision_oracle_round10_lenet86")]


def tune_rows(name):
    """The tune rows of bench/results/NAME.jsonl by case (none where the file is not there yet)."""
    return {r["case"]: r for r in rows(os.path.join(ROOT, "bench", "results", name + ".jsonl")) if r["phase"] == "tune"}


def pilot_of(row):
    """(type, seconds, money) of the profile and pilot: the money spent when the first training segment began."""
    rep = json.load(open(os.path.join(ROOT, row["report"])))
    pilot = next(s for s in rep["segments"] if s["label"] == "pilot")
    train = next(s for s in rep["segments"] if s["label"] == "train")
    # The timeline's points are the watch's; the money at the pilot's end is the first point's less what the
    # training segment accrued up to it (its nodes at its price).
    first = next(t for t in rep["timeline"] if t["t_s"] >= train["start_t_s"])
    price = PRICES[train["config"]["machine"]]
    money = first["cost_so_far"] - (first["t_s"] - train["start_t_s"]) / 3600 * train["config"]["nodes"] * price
    return pilot["config"]["machine"], pilot["end_t_s"], money


def main():
    for title, name in CASES:
        after, before = tune_rows(name), tune_rows(name + "_before")
        pairs = sorted(set(after) & set(before), key=lambda c: int(c.rsplit(":s", 1)[1]))
        if not pairs:
            continue
        print(f"**{title}**, `tula tune --objective cheapest` (after: {name}.jsonl; before: {name}_before.jsonl)\n")
        print("| seed | pilot after / before | profile + pilot s | profile + pilot money | job time after / before "
              "| job money after / before | time ratio | money ratio | epochs | reached |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        time_ratios, money_ratios = [], []
        for case in pairs:
            a, b = after[case], before[case]
            pa, pb = pilot_of(a), pilot_of(b)
            tr, mr = a["total_s"] / b["total_s"], a["cost"] / b["cost"]
            time_ratios.append(tr)
            money_ratios.append(mr)
            print(f"| {case.rsplit(':s', 1)[1]} | 2 x {pa[0]} / 2 x {pb[0]} | {pa[1]:.0f} / {pb[1]:.0f} | "
                  f"{pa[2]:.5f} / {pb[2]:.5f} | {a['total_s']:.0f} s / {b['total_s']:.0f} s | "
                  f"{a['cost']:.5f} / {b['cost']:.5f} | {tr:.3f} | {mr:.3f} | {a['epochs']:.2f} / {b['epochs']:.2f} | "
                  f"{'yes' if a['reached'] else 'no'} / {'yes' if b['reached'] else 'no'} |")
        print(f"\nMedian of pair ratios over {len(pairs)} seeds: time {statistics.median(time_ratios):.3f} "
              f"({min(time_ratios):.3f}-{max(time_ratios):.3f}), money {statistics.median(money_ratios):.3f} "
              f"({min(money_ratios):.3f}-{max(money_ratios):.3f})\n")


if __name__ == "__main__":
    main()
