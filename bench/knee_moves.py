#!/usr/bin/python3
"""Where the knee's jobs ran against what their plan chose: per `tula tune
--objective knee` report of the given rounds' folders (bench/results/
decision_oracle_round*/tune-knee-s*.report.json), the plan's knee after the
pilot, the configuration the job ran, and, where the move was declined, the
time left at each as the plan priced them and the money the move would save
as a share of what is left to spend here (`weigh_move`; until ac94000 a knee
move had to gain --min-saving on one side without losing more than that on
the other, since then it is weighed on the chord of what is left to run).

  bench/knee_moves.py [--rounds 24,25,26_lenet86,27,28,28_lenet86]   (round 29: --rounds 29,29_lenet86)
"""
import argparse
import json
import os

from decision_oracle import is_plan_move

HERE = os.path.dirname(os.path.abspath(__file__))
CATALOG = os.path.join(HERE, "..", "catalogs", "emulated.json")
PRICES = {m["name"]: m["price_per_hour"] for m in json.load(open(CATALOG))["machine_types"]}


def config_text(c):
    return f"{c['nodes']} x {c['machine']}, b {c['batch_per_worker']}"


def moved_after_pilot(report):
    """Whether the job left the pilot's placement when the plan was made (its second segment's configuration)."""
    segments = report.get("segments") or []
    return len(segments) > 1 and segments[0].get("label") == "pilot" and segments[1]["config"] != segments[0]["config"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", default="24,25,26_lenet86,27,28,28_lenet86")
    args = p.parse_args()
    print("| round | seed | the plan's knee | ran | time left there / here (s) | money saved there | declined |")
    print("|---|---|---|---|---|---|---|")
    moved = declined = kept = 0
    for rnd in args.rounds.split(","):
        folder = os.path.join(HERE, "results", f"decision_oracle_round{rnd}")
        reports = sorted(f for f in os.listdir(folder) if f.startswith("tune-knee-s") and f.endswith(".report.json"))
        for name in reports:
            r = json.load(open(os.path.join(folder, name)))
            planned, ran = r["plan"]["chosen"], r["chosen"]
            pilot_move = [x for x in r.get("replans") or [] if is_plan_move(x)]
            left = saved = "-"
            if pilot_move and not pilot_move[0].get("applied"):
                move = pilot_move[0]
                n = move["numbers"]
                left = f"{n['remaining_s_there']:.0f} / {n['remaining_s_here']:.0f}"
                # What is left to spend here: the running configuration's nodes at its type's price.
                here = n["remaining_s_here"] * ran["nodes"] * PRICES[ran["machine"]] / 3600
                saved = f"{move['predicted_saving_cost'] / here:.1%}"
                declined += 1
            elif pilot_move or moved_after_pilot(r):
                # An applied move: a row of `replans` since 9114c82; before it only the report's segments show it.
                moved += 1
            else:
                kept += 1
            seed = name[len("tune-knee-s"):-len(".report.json")]
            print(f"| {rnd} | {seed} | {config_text(planned)} | {config_text(ran)} | {left} | {saved} "
                  f"| {'yes' if left != '-' else 'no'} |")
    print(f"\n{kept + moved + declined} knee jobs: the plan kept the pilot's placement in {kept}, moved in {moved}, "
          f"chose elsewhere and was declined in {declined}")


if __name__ == "__main__":
    main()
