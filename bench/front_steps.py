#!/usr/bin/python3
"""Takes apart the oracle's front configurations' measured time (round 24):
per kept metrics file (bench/results/decision_oracle_round24/metrics/
CASE.metrics.jsonl.gz, gzipped copies of the grid runs' metrics) the steps
run, the median step time, the evaluation passes and their seconds, and the
rest of the run (launch, first steps, the final test); beside each, the step
time the knee job's plan of the same seed predicted for that configuration
(its report's front), where there is one.

  bench/front_steps.py [--round-dir bench/results/decision_oracle_round24]
"""
import argparse
import functools
import glob
import gzip
import json
import os
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))


@functools.cache
def planned_steps(round_dir, seed):
    """{(machine, nodes, per-worker batch): planned step seconds} from the knee job's plan at `seed`."""
    path = os.path.join(round_dir, f"tune-knee-s{seed}.report.json")
    if not os.path.exists(path):
        return {}
    front = json.load(open(path))["plan"]["front"]
    return {(c["machine"], c["nodes"], c["batch_per_worker"]): c["iteration_s"] for c in front}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--round-dir", default=os.path.join(HERE, "results", "decision_oracle_round24"))
    args = p.parse_args()
    rows = [json.loads(l) for l in open(args.round_dir + ".jsonl") if l.strip()]
    by_case = {r["case"]: r for r in rows}
    print("| configuration | seed | steps | median step, measured / planned | evaluation passes (s each) "
          "| steps + passes | run (time_s) | rest |")
    print("|---|---|---|---|---|---|---|---|")
    for path in sorted(glob.glob(os.path.join(args.round_dir, "metrics", "*.metrics.jsonl.gz"))):
        machine, nodes, batch, seed = os.path.basename(path)[len("grid-"):-len(".metrics.jsonl.gz")].rsplit("-", 3)
        case = f"grid:{machine}:{nodes}:{batch}:{seed}"
        row = by_case[case]
        steps, evals = [], []
        with gzip.open(path, "rt") as f:
            for line in f:
                r = json.loads(line)
                if r.get("type") == "iter" and r.get("iter_s"):
                    steps.append(r["iter_s"])
                if r.get("type") == "eval" and r.get("eval_s"):
                    evals.append(r["eval_s"])
        config = (row["machine"], row["nodes"], row["batch"])
        planned = planned_steps(args.round_dir, row["seed"]).get(config)
        step = statistics.median(steps)
        accounted = sum(steps) + sum(evals)
        planned_text = f"{planned * 1000:.1f}" if planned else "-"
        print(f"| {config[1]} x {config[0]}, b {config[2]} | {row['seed']} | {len(steps)} | {step * 1000:.1f} / "
              f"{planned_text} ms | {len(evals)} ({', '.join(f'{e:.2f}' for e in evals)}) | {accounted:.1f} s | "
              f"{row['time_s']:.1f} s | {row['time_s'] - accounted:.1f} s |")


if __name__ == "__main__":
    main()
