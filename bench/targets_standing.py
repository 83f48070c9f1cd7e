#!/usr/bin/python3
"""Where each of the decisions issue's targets stands over held-out rounds, every tune job of the named round
files pooled (docs/benchmarks/decisions.md, "Where the decisions targets end"). Each file holds tune jobs and the oracle's
configuration for their objective, (d), run beside them at the same seeds (and (a), the default, where the round
ran it). Per job: the whole job's time and cost predicted at the plan against measured, the time left at half the
run, the time and cost regret against (d) at its seed (the job's profile and pilot included, and with its profile
taken out), time x cost against (d), whether it reached its target and whether it judged it out of reach. Then
the pooled figures beside each target's threshold, (d) against its own repeat where the round ran one, and the
floor under the prediction targets that the same rounds' repeated (d) runs put there (bench/prediction_floor.py:
each run predicted by the median of the other runs of its configuration in its round).

  /usr/bin/python3 bench/targets_standing.py bench/results/decision_oracle_round5[89]_*.jsonl \
      bench/results/decision_oracle_round6[01]_*.jsonl
"""
import argparse
import os
import re
import statistics

import prediction_floor
from bench_common import read_rows

HERE = os.path.dirname(os.path.abspath(__file__))


def case_of(path, row):
    """'round 58 first_small_cnn knee' from the file's name and the job's objective."""
    m = re.search(r"decision_oracle_round(\d+)_(.*)\.jsonl$", os.path.basename(path))
    return f"round {m.group(1)} {m.group(2)}" if m else os.path.basename(path)


def jobs(paths):
    """Per tune job of each file: its row, its case and (d) at its seed in the same file (None where the file has
    none). A *_repeat or *_two_nodes file holds only (d) runs: it is another arm, not a case."""
    out = []
    for path in paths:
        rows = read_rows(path)
        d = {r["seed"]: r for r in rows if r["phase"] == "d"}
        out += [{"case": case_of(path, r), "row": r, "d": d.get(r["seed"])} for r in rows if r["phase"] == "tune"]
    return out


def half_error(row):
    half = next((e for e in row.get("remaining_error") or [] if e["fraction"] == 0.5), None)
    return half["error"] if half else None


def measures(job):
    """The job's figures, None where the row cannot give one."""
    r, d = job["row"], job["d"]
    m = {"reached": bool(r.get("reached")), "gave_up": bool(r.get("give_up")), "half": half_error(r),
         "plan": None, "plan_cost": None, "regret": None, "regret_cost": None, "regret_no_profile": None,
         "product": None}
    if r.get("predicted"):
        m["plan"] = r["predicted"]["time_s"] / r["total_s"] - 1
        m["plan_cost"] = r["predicted"]["cost"] / r["cost"] - 1
    if d:
        m["regret"] = r["total_s"] / d["time_s"] - 1
        m["regret_cost"] = r["cost"] / d["cost"] - 1
        m["regret_no_profile"] = (r["total_s"] - (r.get("profile_s") or 0)) / d["time_s"] - 1
        m["product"] = r["total_s"] * r["cost"] / (d["time_s"] * d["cost"])
    return m


def pct(x):
    return "-" if x is None else f"{x:+.1%}"


def spread(values, threshold):
    """'median |x| m (largest l; k of n within threshold, j beyond 25%)' over the values that exist."""
    a = sorted(abs(v) for v in values if v is not None)
    if not a:
        return "no values"
    return (f"median |error| {statistics.median(a):.1%}, largest {a[-1]:.1%}; {sum(v <= threshold for v in a)} of "
            f"{len(a)} within {threshold:.0%}, {sum(v > 0.25 for v in a)} beyond 25%")


def floor_rows(paths):
    """bench/prediction_floor.py's leave-one-out errors of the (d) runs of the rounds these files belong to, each
    round's runs of a configuration apart."""
    rounds = {prediction_floor.round_of(p) for p in paths} - {None}
    groups = prediction_floor.runs(os.path.join(HERE, "results"), min(rounds), {"d"}, by_round=True)
    whole, half = [], []
    for key, runs in groups.items():
        if key[-1] not in rounds or len(runs) < prediction_floor.MIN_RUNS:
            continue
        times = [r[2] for r in runs]
        whole += prediction_floor.leave_one_out(times)
        half += prediction_floor.left_at_half(times)
    return whole, half


def repeat_ratios(paths):
    """(d)'s time over its repeat's at the same seed, for each file beside which the round kept a *_repeat file
    (the oracle's configuration run twice): how far the oracle's own measurement moves between two runs."""
    out = []
    for path in paths:
        twin = path.replace(".jsonl", "_repeat.jsonl")
        if twin == path or not os.path.exists(twin):
            continue
        again = {r["seed"]: r for r in read_rows(twin) if r["phase"] == "d"}
        out += [r["time_s"] / again[r["seed"]]["time_s"] - 1 for r in read_rows(path)
                if r["phase"] == "d" and r["seed"] in again]
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="+")
    args = p.parse_args()
    all_jobs = jobs(args.results)
    ms = [measures(j) for j in all_jobs]
    print("| case | objective | seed | (c)'s choice | whole job at the plan: time, cost | time left at half | "
          "regret against (d): time, cost | time regret without the profile | time x cost / (d)'s | reached | "
          "judged out of reach |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for job, m in zip(all_jobs, ms):
        r = job["row"]
        c = r.get("chosen") or {}
        product = "-" if m["product"] is None else f"{m['product']:.2f}"
        print(f"| {job['case']} | {r['objective']} | {r['seed']} | {c.get('nodes')} x {c.get('machine')} at "
              f"{c.get('batch_per_worker')} | {pct(m['plan'])}, {pct(m['plan_cost'])} | {pct(m['half'])} | "
              f"{pct(m['regret'])}, {pct(m['regret_cost'])} | {pct(m['regret_no_profile'])} | {product} | "
              f"{'yes' if m['reached'] else 'no'} | {'yes' if m['gave_up'] else 'no'} |")
    print(f"\nOver the {len(ms)} jobs:")
    print(f"- whole job's time at the plan: {spread([m['plan'] for m in ms], 0.10)}")
    print(f"- whole job's cost at the plan: {spread([m['plan_cost'] for m in ms], 0.10)}")
    print(f"- time left at half: {spread([m['half'] for m in ms], 0.10)}")
    regrets = [m for m in ms if m["regret"] is not None]
    within = sum(m["regret"] <= 0.05 and m["regret_cost"] <= 0.05 for m in regrets)
    within_np = sum(m["regret_no_profile"] <= 0.05 for m in regrets)
    print(f"- regret against (d) within 5% in time and in cost: {within} of {len(regrets)} jobs (time regret "
          f"{min(m['regret'] for m in regrets):+.1%} to {max(m['regret'] for m in regrets):+.1%}, median "
          f"{statistics.median(m['regret'] for m in regrets):+.1%}); time regret within 5% with the profile taken "
          f"out: {within_np} of {len(regrets)}")
    knee = [m for j, m in zip(all_jobs, ms) if j["row"]["objective"] == "knee" and m["product"] is not None]
    if knee:
        print(f"- knee jobs' time x cost against (d): {sum(m['product'] <= 1.05 for m in knee)} of {len(knee)} "
              f"within 1.05 (median {statistics.median(m['product'] for m in knee):.2f})")
    print(f"- reached the target: {sum(m['reached'] for m in ms)} of {len(ms)}; judged out of reach: "
          f"{sum(m['gave_up'] for m in ms)}")
    repeats = repeat_ratios(args.results)
    if repeats:
        print(f"- the oracle against itself: (d)'s time over its repeat at the same seed, {len(repeats)} pairs: "
              f"{min(repeats):+.1%} to {max(repeats):+.1%}; {sum(abs(x) <= 0.05 for x in repeats)} of {len(repeats)} "
              f"within 5%")
    whole, half = floor_rows(args.results)
    if whole:
        print(f"\nThe floor, the same rounds' (d) runs each predicted by the median of its configuration's other "
              f"runs that round ({len(whole)} runs): whole job {spread(whole, 0.10)}; time left at half, blind to "
              f"the run's curve: {spread(half, 0.10)}")


if __name__ == "__main__":
    main()
