#!/usr/bin/python3
"""What the device-aware planner answers on catalogs/gpu.json, from synthetic
GPU profiles (docs/devices.md, "Measured on the CPU"). Nothing here is a
GPU measurement: the profiles are made from known numbers, so that what is
checked is the catalog's and predictor's semantics.

The synthetic profile: bench/results/profiles/v2/resnet18.json (resnet18 on
3x32x32, recorded on this project's 2-core CPU) with its hardware section
made an NVIDIA H100 80GB HBM3 (one GPU, the device's reported memory) and
its one-worker compute samples replaced by a line through the H100's
measured resnet18 throughput in docs/gpu.md (27,365 samples/s at batch 256,
bench/results/gpu/h100_throughput.jsonl): t(b) = 2 ms + b / 30,000 s. Its
allreduce, memory and overlap samples are the CPU's as recorded. A second
copy names the device "NVIDIA H200" (same numbers): the planner must then
scale the other types by their speed over the H200's.

For each profile: `tula simulate --cluster catalogs/gpu.json --batch-size 64
--json` (every type, 1..max nodes) and `tula plan --objective knee --json`;
and the CPU profile's refusal. Rows to --out (JSON lines).

  bench/devices_predictions.py --tula build/src/tula --out bench/results/devices/predictions.jsonl
"""
import argparse
import copy
import json
import os
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def synthetic_gpu_profile(device_name, memory_bytes):
    p = json.load(open(os.path.join(ROOT, "bench/results/profiles/v2/resnet18.json")))
    p = copy.deepcopy(p)
    p["hardware"]["device"] = {"kind": "cuda", "name": device_name, "memory_bytes": memory_bytes, "count": 1}
    p["hardware"]["hostname"] = "synthetic-gpu"
    compute = []
    for b in (4, 16, 64, 256, 1024):
        t = 0.002 + b / 30000.0
        compute.append({"batch_per_worker": b, "workers_per_node": 1,
                        "forward_backward_s": [t * f for f in (0.99, 1.0, 1.01)],
                        "optimizer_s": [0.0004, 0.0004, 0.0004]})
    p["samples"]["compute"] = compute
    p["samples"]["pilots"] = []
    p.pop("fitted", None)
    p.pop("measurement", None)
    return p


def tula(args, *argv):
    r = subprocess.run([args.tula, *argv], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return r.returncode, r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tula", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    catalog = os.path.join(ROOT, "catalogs/gpu.json")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, memory in (("NVIDIA H100 80GB HBM3", 81559 << 20), ("NVIDIA H200", 143771 << 20)):
            path = os.path.join(tmp, name.replace(" ", "_") + ".json")
            json.dump(synthetic_gpu_profile(name, memory), open(path, "w"))
            rc, out = tula(args, "simulate", "--profile", path, "--cluster", catalog, "--batch-size", "64", "--json")
            if rc != 0:
                raise SystemExit(out)
            sim = json.loads(out)
            for m in sim["machines"]:
                for r in m["rows"]:
                    rows.append({"what": "simulate", "profile_device": name, "machine": m["name"],
                                 "scaled_from_profile": m["scaled_from_profile"],
                                 "relative_speed_applied": r["relative_speed"],
                                 "nodes": r["nodes"], "workers": r["workers"],
                                 "batch_per_worker": r["batch_per_worker"],
                                 "compute_s": r["compute_s"]["estimate"], "allreduce_s": r["allreduce_s"]["estimate"],
                                 "exposed_comm_s": r["exposed_comm_s"]["estimate"],
                                 "iteration_s": r["iteration_s"]["estimate"], "epoch_s": r["epoch_s"]["estimate"],
                                 "cost": r["cost"]["estimate"], "speedup_vs_one_node": r["speedup_vs_one_node"],
                                 "max_batch_per_worker": r["max_batch_per_worker"], "notes": r["notes"]})
            rc, out = tula(args, "plan", "--profile", path, "--catalog", catalog, "--objective", "knee", "--json")
            if rc != 0:
                raise SystemExit(out)
            plan = json.loads(out)
            rows.append({"what": "plan", "profile_device": name, "objective": "knee", "chosen": plan["chosen"],
                         "skipped": plan.get("skipped", [])})
        cpu = os.path.join(ROOT, "bench/results/profiles/v2/resnet18.json")
        rc, out = tula(args, "simulate", "--profile", cpu, "--cluster", catalog, "--batch-size", "64")
        rows.append({"what": "cpu profile on the GPU catalog", "exit_code": rc, "output": out.strip()})
    with open(args.out, "w") as f:
        for r in rows:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    for r in rows:
        if r["what"] == "simulate":
            print(f"| {r['profile_device']} | {r['machine']} | {r['nodes']} | {r['workers']} | "
                  f"{r['relative_speed_applied']:.3g} | {r['compute_s'] * 1e3:.2f} ms | {r['allreduce_s'] * 1e3:.2f} ms | "
                  f"{r['iteration_s'] * 1e3:.2f} ms | {r['speedup_vs_one_node']:.2f}x |")
        elif r["what"] == "plan":
            c = r["chosen"]
            print(f"plan ({r['profile_device']}): {json.dumps(c)[:300]}")
        else:
            print(f"cpu profile: exit {r['exit_code']}: {r['output'][:600]}")


if __name__ == "__main__":
    main()
