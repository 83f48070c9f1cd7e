#!/usr/bin/python3
"""The plan's step time on the default's configuration against the default's run beside it: for each knee job of
the rounds named, the step time its plan (made after the pilot, on two nodes) gave one emu-one node at 128 (the
default's layout; the plan's front carries it), against the median of the watches' step times of the default (a)
run at the same seed, minutes apart. The one-node step is what the knee weighs against the pilot's two nodes.

  bench/default_step.py ROUND_ROWS.jsonl ...   e.g. bench/results/decision_oracle_round2{1_lenet86,6_lenet86,7,8,8_lenet86}.jsonl
"""
import json
import os
import statistics
import sys

from decision_oracle import step_in_run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = {"machine": "emu-one", "nodes": 1, "batch_per_worker": 128}


def one_node_step(report):
    """The plan's step for the default's layout, where its front has that point; None where not."""
    for point in (report.get("plan") or {}).get("front") or []:
        if all(point.get(k) == v for k, v in DEFAULT.items()):
            return point["iteration_s"]
    return None


def main(paths):
    print("| rows | seed | plan's one-node step | the default's run | error | the plan's compute factor |")
    print("|---|---|---|---|---|---|")
    errors = []
    for path in paths:
        rows = [json.loads(l) for l in open(path) if l.strip()]
        defaults = {r["seed"]: r for r in rows if r.get("phase") == "a"}
        for r in sorted((r for r in rows if r.get("phase") == "tune" and r.get("objective") == "knee"),
                        key=lambda r: r["seed"]):
            a = defaults.get(r["seed"])
            if not a:
                continue
            report = json.load(open(os.path.join(ROOT, r["report"])))
            planned = one_node_step(report)
            measured = step_in_run(json.load(open(os.path.join(ROOT, a["report"]))))
            if not planned or not measured:
                continue
            notes = (report.get("plan") or {}).get("assumptions") or []
            factor = next((n.split(" x ")[1].split()[0] for n in notes if n.startswith("compute: profiled times x ")), "-")
            errors.append(planned / measured - 1)
            print(f"| {os.path.basename(path)} | {r['seed']} | {planned * 1e3:.1f} ms | {measured * 1e3:.1f} ms | "
                  f"{planned / measured - 1:+.1%} | {factor} |")
    if errors:
        a = sorted(abs(e) for e in errors)
        print(f"\n{len(errors)} jobs: {min(errors):+.1%} to {max(errors):+.1%}, median |error| {statistics.median(a):.1%}, "
              f"signed median {statistics.median(errors):+.1%}, within 10%: {sum(x <= 0.10 for x in a)}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
