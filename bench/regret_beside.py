#!/usr/bin/python3
"""A tune job's regret against the oracle's configuration for its objective run beside it at the same seed (the
headline's (d), --headline-knee naming that configuration): per seed, the job's whole time (profile and pilot
included) over (d)'s training time, in time and in cost, with the job's profile, pilot and restart seconds, its
prediction's error at the plan, and both runs' epochs. (d) is trained as the oracle's grid trains it (AGS, the
profile left out), so this is the regret with the seed's own crossing on both sides. --oracle-from reads (d) from
another file (a second arm of tune jobs run beside the same (d)). The pilot's and the training's machine types are
read from each job's kept report. --profile-s S also prints the time regret of a first job of its setup: the job's
time with S seconds of measured profile in place of its cache read (the round's profile fill). --pairs-with FILE
compares each row of the results with the row of the same case in FILE (two arms of a round, or (d) and its repeat):
time and cost ratios, the median of pair ratios and the ratio of medians, and each run's median step (the watches'
iteration_s, from the kept reports).
  /usr/bin/python3 bench/regret_beside.py bench/results/decision_oracle_round31.jsonl \
      bench/results/decision_oracle_round31_lenet86.jsonl
  /usr/bin/python3 bench/regret_beside.py --objective cheapest bench/results/decision_oracle_round31_cheapest.jsonl
  /usr/bin/python3 bench/regret_beside.py --objective cheapest --oracle-from bench/results/decision_oracle_round32.jsonl \
      bench/results/decision_oracle_round32_before.jsonl
  /usr/bin/python3 bench/regret_beside.py --objective cheapest --profile-s 5.66 bench/results/decision_oracle_round32.jsonl
  /usr/bin/python3 bench/regret_beside.py --pairs-with bench/results/decision_oracle_round32_before.jsonl \
      bench/results/decision_oracle_round32.jsonl"""
import argparse
import json
import os
import statistics

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def report_of(row):
    """The run's report as the round kept it in bench/results."""
    return json.load(open(os.path.join(ROOT, row["report"])))


def placements(job):
    """The job's segments as 'pilot type -> training type', one entry per launch, from its kept report."""
    report = report_of(job)
    types = [seg["config"]["machine"] for seg in report.get("segments", [])]
    return " -> ".join(t for i, t in enumerate(types) if i == 0 or t != types[i - 1]) or "?"


def time_of(row):
    """A run's time as the regret reads it: (d)'s training, a tune job's whole job."""
    return row["time_s"] if row["phase"] == "d" else row["total_s"]


def median_step_ms(row):
    return 1000 * statistics.median(t["iteration_s"] for t in report_of(row)["timeline"])


def print_pairs(path, rows, other_path):
    """Each case in both files: this file's run over the other's, in time and cost."""
    other = {r["case"]: r for r in (json.loads(line) for line in open(other_path))}
    pairs = [(r, other[r["case"]]) for r in rows if r["case"] in other]
    print(f"{path} / {other_path}:\n")
    print("| case | time | time ratio | cost ratio | median step (ms) |")
    print("|---|---|---|---|---|")
    for a, b in pairs:
        print(f"| {a['case']} | {time_of(a):.1f} / {time_of(b):.1f} s | {time_of(a) / time_of(b):.3f} | "
              f"{a['cost'] / b['cost']:.3f} | {median_step_ms(a):.1f} / {median_step_ms(b):.1f} |")
    for name, of in (("time", time_of), ("cost", lambda r: r["cost"])):
        ratios = [of(a) / of(b) for a, b in pairs]
        print(f"\n{name}: median of pair ratios {statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f}), "
              f"ratio of medians {statistics.median(of(a) for a, _ in pairs) / statistics.median(of(b) for _, b in pairs):.3f}")
    print()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--objective", default="knee", help="the tune jobs' objective")
    p.add_argument("--oracle-from", help="decision_oracle.py rows holding (d) (default: each results file)")
    p.add_argument("--profile-s", type=float, help="a measured profile's seconds, for a first job's time regret")
    p.add_argument("--pairs-with", help="decision_oracle.py rows to pair with each results file's by case")
    p.add_argument("results", nargs="+", help="decision_oracle.py rows")
    args = p.parse_args()
    for path in args.results:
        rows = [json.loads(line) for line in open(path)]
        if args.pairs_with:
            print_pairs(path, rows, args.pairs_with)
            continue
        jobs = {r["seed"]: r for r in rows if r["phase"] == "tune" and r.get("objective") == args.objective}
        beside = [json.loads(line) for line in open(args.oracle_from)] if args.oracle_from else rows
        oracle = {r["seed"]: r for r in beside if r.get("headline") and r["phase"] == "d"}
        seeds = sorted(set(jobs) & set(oracle))
        print(f"{path}:\n")
        print("| seed | (c) on | (c) time / (d) time | time regret | (c) cost / (d) cost | cost regret | (c) profile, pilot, "
              "restart | (c) predicted at the plan: time / cost error | epochs (c) / (d) |")
        print("|---|---|---|---|---|---|---|---|---|")
        times, costs = [], []
        for s in seeds:
            c, d = jobs[s], oracle[s]
            times.append(c["total_s"] / d["time_s"] - 1)
            costs.append(c["cost"] / d["cost"] - 1)
            print(f"| {s} | {placements(c)} | {c['total_s']:.1f} / {d['time_s']:.1f} s | {times[-1]:+.1%} | {c['cost']:.5f} / "
                  f"{d['cost']:.5f} | {costs[-1]:+.1%} | {c['profile_s']:.1f}, {c['pilot_s']:.1f}, "
                  f"{c['restart_s']:.1f} s | {c['predicted']['time_s'] / c['total_s'] - 1:+.1%} / "
                  f"{c['predicted']['cost'] / c['cost'] - 1:+.1%} | {c['epochs']:.2f} / {d['epochs']:.2f} |")
        print(f"\n{len(seeds)} seeds: time regret {min(times):+.1%} to {max(times):+.1%} (median "
              f"{statistics.median(times):+.1%}), cost regret {min(costs):+.1%} to {max(costs):+.1%} (median "
              f"{statistics.median(costs):+.1%}); within 5% in both at {sum(t <= 0.05 and c <= 0.05 for t, c in zip(times, costs))} of "
              f"{len(seeds)}\n")
        if args.profile_s is not None:
            first = [(jobs[s]["total_s"] - jobs[s]["profile_s"] + args.profile_s) / oracle[s]["time_s"] - 1 for s in seeds]
            print(f"A first job of its setup (a {args.profile_s:g} s profile in place of the cache read): time regret "
                  + ", ".join(f"{r:+.1%}" for r in first) + f"; within 5% at {sum(r <= 0.05 for r in first)} of "
                  f"{len(seeds)}\n")


if __name__ == "__main__":
    main()
