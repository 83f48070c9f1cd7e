#!/usr/bin/python3
"""The target forecast's form, compared offline on the validation curves every kept job report records
(docs/benchmarks/decisions.md, "The forecast's form on recorded curves"). For each report of a job that kept one global
batch and reached its target, and for each of its evaluations below the target, four forms are fitted to the
evaluations so far and asked where the target is crossed: the power law of the error in progress that `tula tune`
fits (src/tune/accuracy_forecast.cpp: log error on log progress, the i-th evaluation weighted i), the same on the
last three evaluations only, and the accuracy linear in log progress (the same weights), on all and on the last
three. At one global batch progress is proportional to epochs, so epochs stand in for minimum steps. The truth is
the crossing interpolated between the evaluations either side of it (as the job history records it).

Reported per form, by how far the job had come (the last evaluation's epochs over the crossing's): the median
absolute error of the time left (remaining epochs forecast over remaining epochs run, less 1), the share within
10%, and the median (signed and absolute) log error of the crossing; then the log error of every two-evaluation
forecast (the spread the job assumes for a forecast without an interval: log sd 1.0). Cases are split into
development (every report but those named by --held-out) and held out.

  /usr/bin/python3 bench/forecast_on_curves.py --held-out round53,round54,round55,round56
  /usr/bin/python3 bench/forecast_on_curves.py --held-out round57,round58,round59,round60 --form-screen   # or --by-case

--form-screen fits variants of the job's form (the evaluations' weights, the first evaluation left out, the
exponent prior and its weight) and --by-case the job's form per model and target, development curves first.
"""
import argparse
import glob
import json
import math
import os
import statistics

from history_crossings import crossing_between

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def curves(paths):
    """(model, target, [(epochs, accuracy)], crossing epochs) of each report that kept one configuration and crossed."""
    for path in paths:
        try:
            r = json.load(open(path))
        except (OSError, ValueError):
            continue
        target = (r.get("job") or {}).get("target_accuracy")
        configs = {json.dumps(s.get("config"), sort_keys=True) for s in r.get("segments") or []}
        points = [(e["epoch"], e["test_accuracy"]) for e in r.get("evaluations") or [] if e["epoch"] > 0]
        if not target or len(configs) > 1 or len(points) < 3 or points[0][1] >= target:
            continue
        crossing = crossing_between(points, target)
        if crossing is not None:
            yield r["job"].get("model"), target, points, crossing


def weighted_line(xs, ys, prior_slope=0.0, prior_weight=0.0, power=1):
    """Least squares of ys on xs, the i-th point weighted (i + 1)^power (power 1: as the job's fit); with
    prior_weight, the slope minimizes the weighted squares plus prior_weight x (slope - prior_slope)^2 (the job's
    exponent prior)."""
    ws = [i ** power for i in range(1, len(xs) + 1)]
    sw = sum(ws)
    mx = sum(w * x for w, x in zip(ws, xs)) / sw
    my = sum(w * y for w, y in zip(ws, ys)) / sw
    sxx = sum(w * (x - mx) ** 2 for w, x in zip(ws, xs))
    if sxx + prior_weight < 1e-12:
        return None
    sxy = sum(w * (x - mx) * (y - my) for w, x, y in zip(ws, xs, ys))
    slope = (sxy + prior_weight * prior_slope) / (sxx + prior_weight)
    return my - slope * mx, slope


def power_law(points, target):
    fit = weighted_line([math.log(x) for x, _ in points], [math.log(1 - a) for _, a in points])
    if not fit or fit[1] > -0.02:  # the job's kFlatExponent: no crossing to forecast
        return None
    return math.exp((math.log(1 - target) - fit[0]) / fit[1])


def anchored_power_law(points, target, k0=None, weight=None, power=1):
    """The job's power law with its exponent prior (src/tune/accuracy_forecast.cpp, anchored_line): one evaluation
    gives the line through it at slope -k0, and the evaluations' own slope takes over as they spread in log
    progress. power: the evaluations' weights (weighted_line)."""
    k0 = ANCHOR_EXPONENT if k0 is None else k0
    weight = ANCHOR_WEIGHT if weight is None else weight
    intercept, slope = weighted_line([math.log(x) for x, _ in points], [math.log(1 - a) for _, a in points], -k0, weight,
                                     power)
    if slope > -0.02:
        return None
    return math.exp((math.log(1 - target) - intercept) / slope)


def first_to_crossing_exponent(points, target, crossing):
    """k of the power law through the first evaluation and the crossing."""
    e0, a0 = points[0]
    return math.log((1 - a0) / (1 - target)) / math.log(crossing / e0)


# The exponent prior and its weight, chosen on the development curves (--anchor-screen) before any held-out
# curve was forecast with them: the median first-evaluation-to-crossing exponent, and the weight of least
# median time-left error half way.
ANCHOR_EXPONENT = 0.30
ANCHOR_WEIGHT = 3.0


def log_linear(points, target):
    fit = weighted_line([math.log(x) for x, _ in points], [a for _, a in points])
    if not fit or fit[1] <= 1e-4:
        return None
    return math.exp((target - fit[0]) / fit[1])


def held_in_range(at, done, crossing):
    """A forecast crossing as the job takes it: not before the progress made; capped far out (50 x the crossing)
    so that a near-flat fit's log error stays finite."""
    return min(max(at, done), 50 * crossing)


FORMS = {
    "error ~ s^-k (the job's)": power_law,
    "error ~ s^-k, last 3": lambda p, t: power_law(p[-3:], t),
    "accuracy ~ log s": log_linear,
    "accuracy ~ log s, last 3": lambda p, t: log_linear(p[-3:], t),
    "error ~ s^-k, k anchored": anchored_power_law,
}


def forecasts(cases, lo, hi, forms=FORMS, first=2):
    """Per form, (remaining error, crossing log error) of every case whose progress is in [lo, hi) of its crossing,
    from the `first` evaluation on; None where the form gives no crossing."""
    out = {name: [] for name in forms}
    for _, target, points, crossing in cases:
        for k in range(first, len(points) + 1):
            seen = points[:k]
            done = seen[-1][0]
            if seen[-1][1] >= target:
                break
            if not lo <= done / crossing < hi:
                continue
            for name, form in forms.items():
                at = form(seen, target)
                if at is None:
                    out[name].append(None)
                    continue
                at = held_in_range(at, done, crossing)
                out[name].append(((at - done) / (crossing - done) - 1, math.log(at / crossing)))
    return out


def first_errors(cases, n, form):
    """The crossing's log error of `form` after the first n evaluations of each case still below its target."""
    out = []
    for _, target, points, crossing in cases:
        seen = points[:n]
        if len(seen) < n or any(a >= target for _, a in seen):
            continue
        at = form(seen, target)
        if at is not None:
            out.append(math.log(held_in_range(at, seen[-1][0], crossing) / crossing))
    return out


def anchor_screen(cases):
    """The development curves' exponent from the first evaluation to the crossing, and the anchor's weight
    screened by the median time-left error half way (0.3-0.6 of the crossing)."""
    ks = [first_to_crossing_exponent(p, t, c) for _, t, p, c in cases if c > p[0][0]]
    print(f"\nFirst-evaluation-to-crossing exponent over {len(ks)} development curves: median {statistics.median(ks):.3f}, "
          f"quartiles {statistics.quantiles(ks, n=4)[0]:.3f}-{statistics.quantiles(ks, n=4)[2]:.3f}\n")
    print("| anchor weight | half way: time left median abs error | one evaluation: rms log error | two: rms log error |")
    print("|---|---|---|---|")
    for weight in (0.01, 0.1, 0.3, 1, 3, 10, 1e6):
        form = lambda p, t: anchored_power_law(p, t, ANCHOR_EXPONENT, weight)
        left = [abs(e[0]) for e in forecasts(cases, 0.3, 0.6, {"anchored": form}, first=1)["anchored"] if e]
        rms = [math.sqrt(sum(e * e for e in es) / len(es)) for es in (first_errors(cases, n, form) for n in (1, 2))]
        print(f"| {weight:g} | {statistics.median(left):.1%} | {rms[0]:.2f} | {rms[1]:.2f} |")


def variant(power=1, drop_first_from=0, k0=None, weight=None):
    """The job's anchored power law varied: the i-th evaluation weighted i^power, the first evaluation left out
    once there are drop_first_from (0: never), another exponent prior or weight."""
    def form(points, target):
        if drop_first_from and len(points) >= drop_first_from:
            points = points[1:]
        return anchored_power_law(points, target, k0, weight, power)
    return form


VARIANTS = {
    "the job's (i, k0 0.30, weight 3)": variant(),
    "weights i^2": variant(power=2),
    "weights i^3": variant(power=3),
    "first left out from 3 evaluations": variant(drop_first_from=3),
    "first left out from 4 evaluations": variant(drop_first_from=4),
    "first left out from 3, weights i^2": variant(power=2, drop_first_from=3),
    "k0 0.35": variant(k0=0.35),
    "k0 0.35, weights i^2": variant(power=2, k0=0.35),
    "k0 0.35, first left out from 3": variant(drop_first_from=3, k0=0.35),
    "prior weight 1": variant(weight=1),
    "prior weight 10": variant(weight=10),
    "prior weight 10, weights i^2": variant(power=2, weight=10),
}


def form_screen(label, cases):
    """Variants of the job's form, each fitted to every curve's evaluations so far: the time left's median abs
    and signed error half way (0.3-0.6 of the crossing) and later (0.6-0.9), and the crossing's rms log error
    after the first 1-4 evaluations."""
    print(f"\n**{label}** ({len(cases)} curves)\n")
    print("| form | half way: time left median abs error (signed median) | later (signed median) | "
          "rms log error after 1, 2, 3, 4 evaluations |")
    print("|---|---|---|---|")
    for name, form in VARIANTS.items():
        cells = []
        for lo, hi in ((0.3, 0.6), (0.6, 0.9)):
            left = [e[0] for e in forecasts(cases, lo, hi, {"v": form}, first=1)["v"] if e]
            cells.append(f"{statistics.median(map(abs, left)):.1%} ({statistics.median(left):+.1%})")
        rms = []
        for n in (1, 2, 3, 4):
            errors = first_errors(cases, n, form)
            rms.append(f"{math.sqrt(sum(e * e for e in errors) / len(errors)):.2f}")
        print(f"| {name} | {cells[0]} | {cells[1]} | {', '.join(rms)} |")


def by_case(label, cases):
    """The job's form half way (0.3-0.6 of the crossing), per model and target: its bias is the curves' shape."""
    print(f"\n**{label}**\n")
    print("| model, target | curves | median crossing (epochs) | half-way forecasts | time left: signed median error "
          "| median abs error |")
    print("|---|---|---|---|---|---|")
    groups = {}
    for c in cases:
        groups.setdefault((c[0], c[1]), []).append(c)
    for (model, target), group in sorted(groups.items()):
        left = [e[0] for e in forecasts(group, 0.3, 0.6, {"a": anchored_power_law}, first=1)["a"] if e]
        if not left:
            continue
        print(f"| {model}, {target:.0%} | {len(group)} | {statistics.median(c[3] for c in group):.2f} | {len(left)} | "
              f"{statistics.median(left):+.1%} | {statistics.median(map(abs, left)):.1%} |")


def table(label, cases):
    print(f"\n**{label}** ({len(cases)} curves: {', '.join(sorted({str(c[0]) for c in cases}))})\n")
    print("| progress (of the crossing) | form | cases | time left: median abs error | within 10% | crossing: median log error | median abs log error | no crossing |")
    print("|---|---|---|---|---|---|---|---|")
    for lo, hi in ((0.3, 0.6), (0.6, 0.9)):
        for name, errors in forecasts(cases, lo, hi).items():
            got = [e for e in errors if e]
            if not got:
                continue
            left = [abs(a) for a, _ in got]
            logs = [b for _, b in got]
            print(f"| {lo}-{hi} | {name} | {len(errors)} | {statistics.median(left):.1%} | "
                  f"{sum(x <= 0.1 for x in left) / len(left):.0%} | {statistics.median(logs):+.2f} | "
                  f"{statistics.median(map(abs, logs)):.2f} | {len(errors) - len(got)} |")
    print("\n| evaluations seen | form | cases | crossing: median log error | root mean square | 1.4826 x MAD |")
    print("|---|---|---|---|---|---|")
    for n in (1, 2, 3, 4):
        for name, form in (("error ~ s^-k (the job's)", power_law), ("error ~ s^-k, k anchored", anchored_power_law)):
            errors = first_errors(cases, n, form)
            if not errors:
                continue
            med = statistics.median(errors)
            print(f"| {n} | {name} | {len(errors)} | {med:+.2f} | {math.sqrt(sum(e * e for e in errors) / len(errors)):.2f} | "
                  f"{1.4826 * statistics.median(abs(e - med) for e in errors):.2f} |")
    two = []
    for _, target, points, crossing in cases:
        at = power_law(points[:2], target) if points[1][1] < target else None
        if at is not None:
            two.append(math.log(held_in_range(at, points[1][0], crossing) / crossing))
    med = statistics.median(two)
    print(f"\nTwo-evaluation forecasts (the job's form): {len(two)}, log error median {med:+.2f}, root mean square "
          f"{math.sqrt(sum(e * e for e in two) / len(two)):.2f}, 1.4826 x median absolute deviation "
          f"{1.4826 * statistics.median(abs(e - med) for e in two):.2f}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--reports", default=os.path.join(ROOT, "bench", "results", "**", "*.report.json"))
    p.add_argument("--held-out", default="", help="comma-separated parts of a report's path that put it in the held-out set")
    p.add_argument("--anchor-screen", action="store_true", help="screen the exponent anchor on the development curves only")
    p.add_argument("--form-screen", action="store_true",
                   help="variants of the job's form (weights, the first evaluation, the prior), development first")
    p.add_argument("--by-case", action="store_true", help="the job's form half way, per model and target")
    args = p.parse_args()
    held = [h for h in args.held_out.split(",") if h]
    paths = sorted(glob.glob(args.reports, recursive=True))
    is_held = lambda path: any(h in os.path.relpath(path, ROOT) for h in held)
    if args.form_screen or args.by_case:
        show = form_screen if args.form_screen else by_case
        show("Development", list(curves(p for p in paths if not is_held(p))))
        if held:
            show(f"Held out ({', '.join(held)})", list(curves(p for p in paths if is_held(p))))
        return
    if args.anchor_screen:
        anchor_screen(list(curves(p for p in paths if not is_held(p))))
        return
    table("Development", list(curves(p for p in paths if not is_held(p))))
    if held:
        table(f"Held out ({', '.join(held)})", list(curves(p for p in paths if is_held(p))))


if __name__ == "__main__":
    main()
