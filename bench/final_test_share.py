#!/usr/bin/python3
"""The test split's reading at the end, in the whole-job prediction (docs/notebook/round-14.md, "The oracle, round 14"). Jobs
from 6eda90a on count it in the time they predict at the plan (the chosen configuration's final_test_s); this sets, per
tune job of ROWS, the whole job as predicted at the plan with it and without it (the same prediction less the planned
final test: what the code before would have said, every other part equal) against the measured whole job, and the
final test as planned against as measured (the job's final_test record); beside them the cost at the plan against
the measured, and one evaluation of the validation split as planned against the job's mean.

Where the plan's choice was declined as a move (the pilot's workers went on: LeNet-5's knee in round 14), the whole-job
prediction is the configuration the job ran, not the choice: its final test and evaluation are then read from the
replay of the job's first watch after the plan (bench/remaining_replay.cpp, same models, same calibration), marked so.

  bench/final_test_share.py [--replay build/bench/tula_remaining_replay] ROWS.jsonl ...
"""
import argparse
import json
import os
import statistics

from bench_common import ROOT, command_option, replay_watches


def same_config(chosen, segment):
    return all(chosen.get(k) == segment["config"].get(k) for k in ("machine", "nodes", "batch_per_worker"))


def first_watch(replay, job_dir):
    """The replay's first watch after the plan: the running configuration's final test and evaluation as predicted."""
    first = next(p for p in replay_watches(replay, job_dir) if "final_test_s_predicted" in p)
    return first["final_test_s_predicted"], first["eval_s_predicted"]


def measured_evaluations(job_dir):
    """(the final test's seconds, the mean seconds of the curve's evaluations) of the job's metrics."""
    final, curve = None, []
    for line in open(os.path.join(job_dir, "metrics.jsonl")):
        r = json.loads(line)
        if r.get("type") == "final_test":
            final = r["eval_s"]
        elif r.get("type") in ("eval", "epoch") and "eval_s" in r:
            curve.append(r["eval_s"])
    return final, statistics.mean(curve)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--replay", default=os.path.join(ROOT, "build", "bench", "tula_remaining_replay"))
    p.add_argument("rows", nargs="+")
    a = p.parse_args()
    print("| rows | model | objective | seed | measured | predicted at the plan | error | less the planned final test "
          "| error | final test planned / measured | cost error | evaluation planned / measured mean |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    errors = {}
    for path in a.rows:
        for row in map(json.loads, open(path)):
            if row["phase"] != "tune" or not row.get("predicted"):
                continue
            report = json.load(open(os.path.join(ROOT, row["report"])))
            chosen = (report.get("plan") or {}).get("chosen") or {}
            job_dir = command_option(row["command"], "--out")
            planned = (chosen.get("final_test_s") or {}).get("estimate", 0.0)
            planned_eval = chosen["eval_s"]["estimate"]
            ran = [seg for seg in report["segments"] if seg["label"] != "pilot"] or report["segments"][-1:]
            mark = ""
            if not same_config(chosen, ran[0]):
                planned, planned_eval = first_watch(a.replay, job_dir)
                mark = " (ran the pilot's placement: its first watch)"
            measured_test, measured_eval = measured_evaluations(job_dir)
            cost = row["predicted"]["cost"] / row["cost"] - 1
            predicted, total = row["predicted"]["time_s"], row["total_s"]
            now, before = predicted / total - 1, (predicted - planned) / total - 1
            errors.setdefault(row["model"], []).append((now, before, cost))
            print(f"| {os.path.basename(path)} | {row['model']} | {row['objective']} | {row['seed']} | {total:.0f} s | "
                  f"{predicted:.0f} s | {now:+.1%} | {predicted - planned:.0f} s | {before:+.1%} | {planned:.1f} / "
                  f"{measured_test:.1f} s{mark} | {cost:+.1%} | {planned_eval:.2f} / {measured_eval:.2f} s |")
    print()
    for model, xs in errors.items():
        print(f"{model}, {len(xs)} jobs: median |error| with the final test {statistics.median(abs(n) for n, _, _ in xs):.1%} "
              f"(largest {max(abs(n) for n, _, _ in xs):.1%}, signed median {statistics.median(n for n, _, _ in xs):+.1%}), "
              f"without {statistics.median(abs(b) for _, b, _ in xs):.1%} (largest {max(abs(b) for _, b, _ in xs):.1%}, "
              f"signed median {statistics.median(b for _, b, _ in xs):+.1%}); cost "
              f"{statistics.median(abs(c) for _, _, c in xs):.1%} (largest {max(abs(c) for _, _, c in xs):.1%})")


if __name__ == "__main__":
    main()
