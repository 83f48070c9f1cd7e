#!/usr/bin/python3
"""Round 8's table (docs/notebook/round-08.md, "The oracle, round 8"): per case and
seed, `tula tune --objective knee` with the plan after the pilot weighed as
a move from the running pilot (after) against the code before (the plan's
choice taken as is), and the default (a): the planner's choice, where the
job ran, whether the pilot's launch went on, the whole job's time and cost;
then time and cost ratios (ratio of medians, median of pair ratios).

  bench/first_move.py [--rows bench/results]
  bench/first_move.py --declined   the with-change jobs' declined moves: the time there (with the restart) against
                                   here, and the share of the money it would have saved
"""
import argparse
import json
import os

from pilot_goes_on import HERE, placement, ratios, rows, went_on

CASES = [("small_cnn to 83%", "decision_oracle_round8"), ("LeNet-5 to 86%", "decision_oracle_round8_lenet86")]


def planned(row):
    """The planner's choice at the plan after the pilot (what the job ran at may differ: a declined move)."""
    c = json.load(open(os.path.join(HERE, "..", row["report"])))["plan"]["chosen"]
    return placement(c)


def declined(rows_dir):
    prices = {m["name"]: m["price_per_hour"]
              for m in json.load(open(os.path.join(HERE, "..", "catalogs", "emulated.json")))["machine_types"]}
    print("| case | seed | step | declined move | time there / here | money saved |")
    print("|---|---|---|---|---|---|")
    for name, stem in CASES:
        for r in (r for r in rows(os.path.join(rows_dir, stem + ".jsonl")) if r["phase"] == "tune"):
            for x in json.load(open(os.path.join(HERE, "..", r["report"])))["replans"]:
                if x["applied"]:
                    continue
                n, here = x["numbers"], x["from"]
                cost_here = n["remaining_s_here"] / 3600 * here["nodes"] * prices[here["machine"]]
                print(f"| {name} | {r['seed']} | {x['step']} | {placement(here)} -> {placement(x['to'])} | "
                      f"{(n['remaining_s_there'] + x['restart_cost_s']) / n['remaining_s_here']:.2f}x | "
                      f"{100 * x['predicted_saving_cost'] / cost_here:.1f}% |")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rows", default=os.path.join(HERE, "results"))
    p.add_argument("--declined", action="store_true")
    a = p.parse_args()
    if a.declined:
        declined(a.rows)
        return
    print("| case | seed | arm | planner's choice | ran at | pilot's launch went on | whole job | cost | (a) default |")
    print("|---|---|---|---|---|---|---|---|---|")
    summary = []
    for name, stem in CASES:
        arms = {"after": [r for r in rows(os.path.join(a.rows, stem + ".jsonl")) if r["phase"] == "tune"],
                "before": [r for r in rows(os.path.join(a.rows, stem + "_before.jsonl")) if r["phase"] == "tune"]}
        default = {r["seed"]: r for r in rows(os.path.join(a.rows, stem + ".jsonl")) if r["phase"] == "a" and r["reached"]}
        time = {arm: {r["seed"]: r["total_s"] for r in rs if r["reached"]} for arm, rs in arms.items()}
        cost = {arm: {r["seed"]: r["cost"] for r in rs if r["reached"]} for arm, rs in arms.items()}
        for seed in sorted({r["seed"] for rs in arms.values() for r in rs}):
            d = default.get(seed)
            a_text = f"{d['time_s']:.1f} s, ${d['cost']:.4f}" if d else "-"
            for arm in ("after", "before"):
                for r in (r for r in arms[arm] if r["seed"] == seed):
                    print(f"| {name} | {seed} | {arm} | {planned(r)} | {placement(r['chosen'])} | "
                          f"{'yes' if went_on(r) else 'no'} | {r['total_s']:.1f} s"
                          f"{'' if r['reached'] else ' (not reached)'} | ${r['cost']:.4f} | {a_text} |")
        a_time = {s: r["time_s"] for s, r in default.items()}
        a_cost = {s: r["cost"] for s, r in default.items()}
        summary.append((name, ratios(time["before"], time["after"]), ratios(cost["before"], cost["after"]),
                        ratios(a_time, time["after"]), ratios(a_cost, cost["after"]),
                        ratios(a_time, time["before"]), ratios(a_cost, cost["before"])))
    print("\n| case | before / after: time | cost | (a) / after: time | cost | (a) / before: time | cost |")
    print("|---|---|---|---|---|---|---|")
    for s in summary:
        print("| " + " | ".join(s) + " |")


if __name__ == "__main__":
    main()
