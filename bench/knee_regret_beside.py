#!/usr/bin/python3
"""The knee job's regret against the oracle's knee configuration run beside it at the same seed (the headline's (d)):
per seed, (c)'s whole job (profile and pilot included) over (d)'s training time, in time and in cost, with (c)'s
profile, pilot and restart seconds and both runs' epochs. (d) is trained as the oracle's grid trains it (AGS, the
profile left out), so this is the regret with the seed's own crossing on both sides.
  /usr/bin/python3 bench/knee_regret_beside.py bench/results/decision_oracle_round31.jsonl \
      bench/results/decision_oracle_round31_lenet86.jsonl"""
import json
import statistics
import sys


def main():
    for path in sys.argv[1:]:
        rows = [json.loads(line) for line in open(path)]
        knee = {r["seed"]: r for r in rows if r.get("headline") and r["phase"] == "tune"}
        oracle = {r["seed"]: r for r in rows if r.get("headline") and r["phase"] == "d"}
        seeds = sorted(set(knee) & set(oracle))
        print(f"{path}:\n")
        print("| seed | (c) time / (d) time | time regret | (c) cost / (d) cost | cost regret | (c) profile, pilot, "
              "restart | epochs (c) / (d) |")
        print("|---|---|---|---|---|---|---|")
        times, costs = [], []
        for s in seeds:
            c, d = knee[s], oracle[s]
            times.append(c["total_s"] / d["time_s"] - 1)
            costs.append(c["cost"] / d["cost"] - 1)
            print(f"| {s} | {c['total_s']:.1f} / {d['time_s']:.1f} s | {times[-1]:+.1%} | {c['cost']:.5f} / "
                  f"{d['cost']:.5f} | {costs[-1]:+.1%} | {c['profile_s']:.1f}, {c['pilot_s']:.1f}, "
                  f"{c['restart_s']:.1f} s | {c['epochs']:.2f} / {d['epochs']:.2f} |")
        print(f"\n{len(seeds)} seeds: time regret {min(times):+.1%} to {max(times):+.1%} (median "
              f"{statistics.median(times):+.1%}), cost regret {min(costs):+.1%} to {max(costs):+.1%} (median "
              f"{statistics.median(costs):+.1%}); within 5% in both at {sum(t <= 0.05 and c <= 0.05 for t, c in zip(times, costs))} of "
              f"{len(seeds)}\n")


if __name__ == "__main__":
    main()
