#!/usr/bin/python3
"""The remaining time at half the run, predicted two ways on the same held-out jobs (docs/notebook/round-13.md, "The
oracle, round 13"), each job's watch at half its run replayed on its own metrics (bench/remaining_replay.cpp):

  now     as the job predicted: a prior from a history of crossings (each earlier job's line at where it crossed
          its target), the remaining steps the mean stop over S*'s estimate;
  before  the replay with the prior a history of the evaluations' epochs would have given (the same earlier jobs,
          each at the evaluation that saw its target: the converted lines' evaluated_epochs, a later job's epochs)
          and the remaining steps to the evaluation after S*'s median.

The jobs ran as "now" planned them; only the prediction at half is replayed the other way. With --before-final-test
(round 14, "The oracle, round 14"), "before" is the rule before 6eda90a instead: the same replay without the test
split's reading at the end (its predicted seconds taken off); it also prints the stop after S*'s median (with the
final test) in place of the mean stop. With --known-crossing
also the replay with the job's own crossing as its prior (its own line of the history, log sd 0.01): what is left of
the error once the crossing is known, i.e. the part not in the crossing. With --crossings (jobs
that ran before the change, the rows its development saw): "before" is as the job predicted and
"now" the replay with the prior of the crossings file's lines before the job's own.

  bench/remaining_at_half.py [--replay build/bench/tula_remaining_replay] [--crossings HISTORY | --before-final-test]
                             [--known-crossing] ROWS.jsonl ...
"""
import argparse
import json
import math
import os
import statistics

from bench_common import ROOT, command_option, replay_watches

JOBS_USED, LOG_SD_FLOOR, LOG_SD_ASSUMED = 20, 0.10, 0.25  # tune/job_history.hpp


def prior_of(logs):
    """(epochs, log sd) as JobHistory::prior_for computes it from the lines' log reference epochs."""
    logs = logs[-JOBS_USED:]
    n = len(logs)
    spread = max(LOG_SD_FLOOR, statistics.stdev(logs)) if n >= 3 else LOG_SD_ASSUMED
    return math.exp(statistics.median(logs)), spread * math.sqrt(1 + 1 / n)


def lines_before(history, job_dir):
    for line in open(history):
        entry = json.loads(line)
        if entry["job"] == job_dir:
            return
        yield entry


def evaluations_prior(history, job_dir):
    """The prior from the lines before `job_dir`'s own, each at the epochs of the evaluation that saw its target."""
    logs = []
    for entry in lines_before(history, job_dir):
        if "evaluated_epochs" in entry:
            logs.append(math.log(entry["evaluated_epochs"]))
        elif entry["global_batch"] <= 128:  # at or below the reference batch its epochs are its reference epochs
            logs.append(math.log(entry["epochs"]))
        else:
            raise SystemExit(f"{entry['job']}: ran above the reference batch; its evaluated epochs are not in its line")
    return prior_of(logs)


def crossings_prior(history, job_dir):
    """The prior from a crossings file's lines before `job_dir`'s own."""
    return prior_of([math.log(e["reference_epochs"]) for e in lines_before(history, job_dir)])


def own_crossing(history, job_dir):
    """The reference epochs of `job_dir`'s own line: where it crossed its target."""
    return next(e["reference_epochs"] for e in map(json.loads, open(history)) if e["job"] == job_dir)


def replay_at(replay, job_dir, t_s, extra=()):
    return next(p for p in replay_watches(replay, job_dir, extra) if abs(p["t_s"] - t_s) < 1e-6)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--replay", default=os.path.join(ROOT, "build", "bench", "tula_remaining_replay"))
    p.add_argument("--crossings", help="rows from before the change: the crossings history their \"now\" replays with")
    p.add_argument("--before-final-test", action="store_true",
                   help="\"before\": the replay as the job ran less its final test's predicted seconds")
    p.add_argument("--known-crossing", action="store_true",
                   help="add the replay with each job's own crossing as its prior (from its history's line)")
    p.add_argument("rows", nargs="+")
    a = p.parse_args()
    print("| rows | model | objective | seed | left at half (measured) | now: predicted | error | prior replayed "
          "(epochs, log sd) | before: predicted | error |" + (" crossing known: predicted | error | less the final test |" if a.known_crossing else ""))
    print("|---|---|---|---|---|---|---|---|---|---|" + ("---|---|---|" if a.known_crossing else ""))
    errors, replay_off, known_errors, median_stop = {}, [], {}, {}
    for path in a.rows:
        for row in map(json.loads, open(path)):
            if row["phase"] != "tune" or not row.get("reached"):
                continue
            job_dir = command_option(row["command"], "--out")
            report = json.load(open(os.path.join(job_dir, "report.json")))
            half = next((e for e in report.get("remaining_error") or [] if e["fraction"] == 0.5), None)
            if not half:
                continue
            # Both ways from the replay, so they differ in the model alone; the replay of the way the job ran is
            # held against its record (they can differ by what arrived in the metrics around the watch's read).
            recorded = half["predicted_remaining_s"]
            if a.crossings:  # ran before the change: the record is "before"
                before = mine = replay_at(a.replay, job_dir, half["t_s"])["median_stop_remaining_s"]
                epochs, log_sd = crossings_prior(a.crossings, job_dir)
                predicted_now = replay_at(a.replay, job_dir, half["t_s"], ["--prior-epochs", str(epochs),
                                                                           "--prior-log-sd", str(log_sd)])["replayed_remaining_s"]
            elif a.before_final_test:
                as_ran = replay_at(a.replay, job_dir, half["t_s"])
                predicted_now = mine = as_ran["replayed_remaining_s"]
                before = predicted_now - as_ran["final_test_s_predicted"]
                median_stop.setdefault(row["model"], []).append(as_ran["median_stop_remaining_s"] / half["measured_remaining_s"] - 1)
                epochs, log_sd = crossings_prior(command_option(row["command"], "--history"), job_dir)
            else:
                predicted_now = mine = replay_at(a.replay, job_dir, half["t_s"])["replayed_remaining_s"]
                epochs, log_sd = evaluations_prior(command_option(row["command"], "--history"), job_dir)
                before = replay_at(a.replay, job_dir, half["t_s"], ["--prior-epochs", str(epochs), "--prior-log-sd",
                                                                     str(log_sd)])["median_stop_remaining_s"]
            replay_off.append(abs(mine / recorded - 1))
            measured = half["measured_remaining_s"]
            e_now, e_before = predicted_now / measured - 1, before / measured - 1
            errors.setdefault(row["model"], []).append((e_now, e_before))
            known_cell = ""
            if a.known_crossing:
                own = own_crossing(command_option(row["command"], "--history"), job_dir)
                at = replay_at(a.replay, job_dir, half["t_s"], ["--prior-epochs", str(own), "--prior-log-sd", "0.01"])
                known = at["replayed_remaining_s"]
                less = known - at["final_test_s_predicted"]  # the models before 6eda90a
                known_errors.setdefault(row["model"], []).append((known / measured - 1, less / measured - 1))
                known_cell = f" {known:.1f} s | {known / measured - 1:+.1%} | {less / measured - 1:+.1%} |"
            print(f"| {os.path.basename(path)} | {row['model']} | {row['objective']} | {row['seed']} | {measured:.1f} s | "
                  f"{predicted_now:.1f} s | {e_now:+.1%} | {epochs:.3f}, {log_sd:.3f} | {before:.1f} s | "
                  f"{e_before:+.1%} |" + known_cell)
    print(f"\nThe replay of the way each job ran against its record at half: within {max(replay_off):.1%} "
          f"({len(replay_off)} jobs)")
    for model, xs in errors.items():
        print(f"{model}, {len(xs)} jobs: median |error| now {statistics.median(abs(n) for n, _ in xs):.1%} (largest "
              f"{max(abs(n) for n, _ in xs):.1%}, within 10%: {sum(abs(n) <= 0.10 for n, _ in xs)}), before "
              f"{statistics.median(abs(b) for _, b in xs):.1%} (largest {max(abs(b) for _, b in xs):.1%}, within 10%: "
              f"{sum(abs(b) <= 0.10 for _, b in xs)})")
    for model, xs in median_stop.items():
        print(f"{model}, {len(xs)} jobs, the stop after S*'s median (final test included): median |error| "
              f"{statistics.median(abs(x) for x in xs):.1%} (largest {max(abs(x) for x in xs):.1%}, within 10%: "
              f"{sum(abs(x) <= 0.10 for x in xs)})")
    for model, xs in known_errors.items():
        print(f"{model}, {len(xs)} jobs, the crossing known: median |error| {statistics.median(abs(x) for x, _ in xs):.1%} "
              f"(largest {max(abs(x) for x, _ in xs):.1%}, within 10%: {sum(abs(x) <= 0.10 for x, _ in xs)}); less the "
              f"final test: {min(y for _, y in xs):+.1%} to {max(y for _, y in xs):+.1%}")


if __name__ == "__main__":
    main()
