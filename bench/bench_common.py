"""Helpers shared by the benchmark scripts."""
import functools
import gzip
import json
import os
import shutil
import socket
import statistics
import subprocess

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def free_port():
    """A TCP port on loopback that nothing listens on now (for a rendezvous)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def rows_path(path):
    """The file that holds a results file's rows: `path`, or `path`.gz where only the compressed copy exists (raw
    results over 1 MB are kept gzipped in bench/results)."""
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        return path + ".gz"
    return path


def open_rows(path, mode="rt"):
    """Opens a results file for reading (mode "rt") or appending (mode "at"), through gzip where it is (or only
    its .gz copy exists): every reader and writer of rows sees a gzipped file as the plain one."""
    real = rows_path(path)
    return gzip.open(real, mode) if real.endswith(".gz") else open(real, mode[0])


def append_row(path, row):
    """Appends one JSON line to a results file and syncs it to disk, so a benchmark stopped at any moment
    keeps every row it finished (the scripts resume by skipping rows already there). A gzipped file gets the row as
    a gzip member of its own, which readers take as the continuation of the file."""
    real = rows_path(path)
    if real.endswith(".gz"):
        with open(real, "ab") as raw:
            with gzip.GzipFile(fileobj=raw, mode="ab") as f:
                f.write((json.dumps(row) + "\n").encode())
            raw.flush()
            os.fsync(raw.fileno())
        return
    with open(path, "a") as f:
        f.write(json.dumps(row) + "\n")
        f.flush()
        os.fsync(f.fileno())


def write_gzipped_lines(path, lines):
    """Writes `lines` (strings) to the gzipped file `path`, one a line, through a temporary file renamed over it."""
    tmp = path + ".tmp"
    with gzip.open(tmp, "wt") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def read_rows(path):
    """Every row of a results file, plain or gzipped (FILE or FILE.gz; none where neither exists yet)."""
    if not os.path.exists(rows_path(path)):
        return []
    with open_rows(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def rows_done(path, keys):
    """The rows a results file already holds, each as the tuple of its `keys` (a resumed benchmark skips those)."""
    if not os.path.exists(rows_path(path)):
        return set()
    with open_rows(path) as f:
        return {tuple(row[k] for k in keys) for row in map(json.loads, f)}


@functools.lru_cache(maxsize=None)
def git_state(short=False):
    """The commit of the checkout a benchmark runs in, for its rows: {"commit": hash, "dirty": bool}. `dirty` is
    true when tracked files other than bench/results/ differ from that commit (the results files change while a
    benchmark appends to them). Taken once per process (the first call; scripts call it as they start), so every
    row of one run carries the same values; None where git cannot tell."""
    def git(*args):
        try:
            p = subprocess.run(["git", "-C", ROOT] + list(args), capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return p.stdout.strip() if p.returncode == 0 else None
    head = git("rev-parse", *(["--short"] if short else []), "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)bench/results")
    return {"commit": head or None, "dirty": None if status is None else bool(status)}


def noise_step_estimates(step):
    """The per-step |G|^2 and tr(Sigma) estimates of one `iter` record of the engine's metrics, read as
    predict::noise_sample_of and step_estimates read it: the small batch is global_batch / workers, or a lone
    worker's probe_batch; None for a skipped step, a step with one batch size or without both squared norms."""
    big, workers, probe = step["global_batch"], step.get("workers", 1), step.get("probe_batch", 0)
    if step.get("skipped") or (not probe and (workers < 2 or big < workers)):
        return None
    local, whole = step.get("local_grad_sq", 0), step.get("global_grad_sq", 0)
    if not (local > 0 and whole > 0):
        return None
    b = probe or big // workers
    if not big > b:
        return None
    return (big * whole - b * local) / (big - b), (local - whole) / (1 / b - 1 / big)


def command_option(command, name):
    """The value after `name` in a row's recorded command line (e.g. a tune job's --out: its folder)."""
    words = command.split()
    return words[words.index(name) + 1]


def replay_watches(replay, job_dir, extra=()):
    """Every watch of a recorded tune job as bench/remaining_replay.cpp replays it (one dict per watch), on the
    emulated cluster's catalog; `extra`: more of its options (another prior)."""
    out = subprocess.run([replay, "--job", job_dir, "--resources", os.path.join(ROOT, "catalogs", "emulated.json"),
                          *extra], capture_output=True, text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def below_chord(front, time_s, cost):
    """Kneedle's difference of a (time, cost) point against a time/cost front: 1 - x - y, with x and y its time and
    cost normalized over the front's range (0 at the front's least, 1 at its most). The knee is the front's point
    farthest below the chord (the largest); a point outside the front's range may come out below 0."""
    t = [p["time_s"] for p in front]
    c = [p["cost"] for p in front]
    return 1 - (time_s - min(t)) / (max(t) - min(t)) - (cost - min(c)) / (max(c) - min(c))


def launches_of(metrics_path):
    """A `tula train` metrics file split by launch (each "start" record opens one): per launch its workers, global
    batch, per-worker batch and start time (None where the record has none), training samples (likewise),
    evaluations as (step, seconds) in order (the final test apart), step times, and the step records themselves."""
    launches = []
    for r in map(json.loads, open(metrics_path)):
        if r.get("type") == "start":
            launches.append({"workers": r["workers"], "global_batch": r["global_batch"],
                             "batch_per_worker": r.get("batch_size"), "started": r.get("time"),
                             "train_samples": r.get("train_samples"), "evals": [], "iter_s": [], "steps": []})
        elif not launches:
            continue
        elif "eval_s" in r and r.get("type") != "final_test":
            launches[-1]["evals"].append((r["step"], r["eval_s"]))
        elif "iter_s" in r:
            launches[-1]["iter_s"].append(r["iter_s"])
            launches[-1]["steps"].append(r)
    return launches


# The two emulated-cluster cases the whole-job benchmarks run (blas.py, heap_eval.py): `tula tune` flags.
TUNE_CASES = {"lenet5": ["--target-accuracy", "0.86", "--max-epochs", "12"],
              "small_cnn": ["--target-accuracy", "0.83", "--max-epochs", "5"]}


def fresh_knee_job(tula, model, out, seed, history_folder):
    """The command of a whole `tula tune --objective knee` job of TUNE_CASES[model] on the emulated cluster, measuring
    a fresh profile, at `seed`, into `out` (emptied first), reading its own copy (beside `out`) of
    bench/results/HISTORY_FOLDER/history.jsonl."""
    shutil.rmtree(out, ignore_errors=True)
    history = out + ".history.jsonl"
    shutil.copyfile(os.path.join(ROOT, "bench", "results", history_folder, "history.jsonl"), history)
    return [tula, "tune", "--model", model, "--dataset", "fashion-mnist", *TUNE_CASES[model],
            "--resources", os.path.join(ROOT, "catalogs", "emulated.json"), "--backend", "emulated",
            "--progress", "lines", "--on-out-of-reach", "continue", "--out", out, "--objective", "knee",
            "--seed", str(seed), "--no-profile-cache", "--history", history]


def ratio_line(label, a, b):
    """A markdown table row comparing B with A, each {pair: value}: the pairs both have, A's and B's medians, the
    ratio of medians, the median of pair ratios and their range (B / A)."""
    pairs = sorted(set(a) & set(b))
    ra, rb = [a[p] for p in pairs], [b[p] for p in pairs]
    pair_ratios = [b[p] / a[p] for p in pairs]
    return (f"| {label} | {len(pairs)} | {statistics.median(ra):.4g} | {statistics.median(rb):.4g} | "
            f"{statistics.median(rb) / statistics.median(ra):.3f} | {statistics.median(pair_ratios):.3f} | "
            f"{min(pair_ratios):.3f}-{max(pair_ratios):.3f} |")


def ab_main(description, measure, table, pairs=5, extra=None):
    """The command line of an A-against-B benchmark (two builds of tula run alternately, rows appended to --out):
    --a/--b the binaries, --a-label/--b-label what the rows call them, --pairs, --out, and --table to print the
    rows' table and measure nothing. `extra(parser)` adds the script's own options."""
    import argparse
    p = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--a")
    p.add_argument("--a-label", default="A")
    p.add_argument("--b")
    p.add_argument("--b-label", default="B")
    p.add_argument("--pairs", type=int, default=pairs)
    p.add_argument("--out", required=True)
    p.add_argument("--table", action="store_true", help="print the table of --out's rows and measure nothing")
    if extra:
        extra(p)
    args = p.parse_args()
    if args.table:
        return table(args)
    if not (args.a and args.b):
        p.error("give --a and --b (or --table)")
    return measure(args)
