#!/usr/bin/python3
"""The test split's reading at the end, in the whole-job prediction (docs/benchmarks.md, "The oracle, round 14"). Jobs
from 6eda90a on count it in the time they predict at the plan (the chosen configuration's final_test_s); this sets, per
tune job of ROWS, the whole job as predicted at the plan with it and without it (the same prediction less the planned
final test: what the code before would have said, every other part equal) against the measured whole job, and the
final test as planned against as measured (the job's final_test record).

  bench/final_test_share.py ROWS.jsonl ...
"""
import argparse
import json
import os
import statistics

from bench_common import ROOT


def option(command, name):
    words = command.split()
    return words[words.index(name) + 1]


def measured_final_test(job_dir):
    for line in open(os.path.join(job_dir, "metrics.jsonl")):
        r = json.loads(line)
        if r.get("type") == "final_test":
            return r["eval_s"]
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("rows", nargs="+")
    a = p.parse_args()
    print("| rows | model | objective | seed | measured | predicted at the plan | error | less the planned final test "
          "| error | final test planned / measured |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    errors = {}
    for path in a.rows:
        for row in map(json.loads, open(path)):
            if row["phase"] != "tune" or not row.get("predicted"):
                continue
            report = json.load(open(os.path.join(ROOT, row["report"])))
            chosen = (report.get("plan") or {}).get("chosen") or {}
            planned = (chosen.get("final_test_s") or {}).get("estimate", 0.0)
            measured_test = measured_final_test(option(row["command"], "--out"))
            predicted, total = row["predicted"]["time_s"], row["total_s"]
            now, before = predicted / total - 1, (predicted - planned) / total - 1
            errors.setdefault(row["model"], []).append((now, before))
            print(f"| {os.path.basename(path)} | {row['model']} | {row['objective']} | {row['seed']} | {total:.0f} s | "
                  f"{predicted:.0f} s | {now:+.1%} | {predicted - planned:.0f} s | {before:+.1%} | {planned:.1f} / "
                  f"{measured_test:.1f} s |")
    print()
    for model, xs in errors.items():
        print(f"{model}, {len(xs)} jobs: median |error| with the final test {statistics.median(abs(n) for n, _ in xs):.1%} "
              f"(largest {max(abs(n) for n, _ in xs):.1%}, signed median {statistics.median(n for n, _ in xs):+.1%}), "
              f"without {statistics.median(abs(b) for _, b in xs):.1%} (largest {max(abs(b) for _, b in xs):.1%}, "
              f"signed median {statistics.median(b for _, b in xs):+.1%})")


if __name__ == "__main__":
    main()
