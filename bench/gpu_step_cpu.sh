#!/usr/bin/env bash
# The GPU step's CPU-side checks (docs/gpu.md, "The GPU step: CPU-side
# checks"), from the repository root:
#
#   bench/gpu_step_cpu.sh BEFORE_TULA AFTER_TULA OPTIMIZER_BENCH [OUT_DIR]
#
#  1. per-step CPU throughput of resnet20 and small_cnn, AFTER against BEFORE
#     (two `tula` binaries), 3 alternated pairs each (bench/throughput_vs_peer.py
#     --peer-tula), rows in OUT_DIR/cpu_pairs.jsonl;
#  2. instructions per optimizer step (valgrind's callgrind, one thread; not
#     moved by the machine's load) of the per-tensor and foreach updates of
#     every optimizer on resnet20's and small_cnn's tensors: the count of a run
#     of 5 steps less that of a run of 0, over 5; rows in
#     OUT_DIR/optimizer_instructions.jsonl.
set -euo pipefail
before="$1" after="$2" bench="$3"
out="${4:-bench/results/gpu_step}"
mkdir -p "$out"

for model in resnet20 small_cnn; do
  python3 bench/throughput_vs_peer.py --tula "$after" --peer-tula "$before" --workers 1 --repeats 3 \
    --steps 20 --warmup 5 --models "$model" --batches 64 --out "$out/cpu_pairs.jsonl"
done

instructions() {  # model optimizer update steps -> total instructions of the run
  local file
  file=$(mktemp)
  valgrind --tool=callgrind --callgrind-out-file="$file" "$bench" --model "$1" --optimizer "$2" --update "$3" \
    --steps "$4" $( [ "$1" = small_cnn ] && echo --channels 1 --image-size 28 ) >/dev/null 2>&1
  grep -m1 -E '^(summary|totals):' "$file" | awk '{print $2}'
  rm -f "$file"
}

for model in resnet20 small_cnn; do
  for optimizer in sgd lars lamb ags; do
    for update in per-tensor foreach; do
      base=$(instructions "$model" "$optimizer" "$update" 0)
      five=$(instructions "$model" "$optimizer" "$update" 5)
      python3 - "$model" "$optimizer" "$update" "$base" "$five" >>"$out/optimizer_instructions.jsonl" <<'PY'
import json, subprocess, sys
model, optimizer, update, base, five = sys.argv[1:]
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
print(json.dumps({"model": model, "optimizer": optimizer, "update": update, "threads": 1,
                  "instructions_per_step": (int(five) - int(base)) / 5, "run_0_steps": int(base),
                  "run_5_steps": int(five), "commit": commit}))
PY
      tail -n 1 "$out/optimizer_instructions.jsonl"
    done
  done
done

# 3. Instructions per training step of `tula train` itself, BEFORE against
#    AFTER (callgrind, one intra-op thread, synthetic data): the count of a run
#    of N+K steps less that of a run of N, over K; rows in
#    OUT_DIR/step_instructions.jsonl.
step_instructions() {  # tula model shape steps -> total instructions
  local file
  file=$(mktemp)
  valgrind --tool=callgrind --callgrind-out-file="$file" "$1" train --model "$2" --dataset synthetic \
    --synthetic-shape "$3" --synthetic-size 512 --batch-size 32 --max-steps "$4" --threads 1 --no-eval \
    --progress none --tensor-stats-every 0 --schedule constant >/dev/null 2>&1
  grep -m1 -E '^(summary|totals):' "$file" | awk '{print $2}'
  rm -f "$file"
}
for model_shape in small_cnn:1x28x28:2:6 resnet20:3x32x32:1:3; do
  IFS=: read -r model shape n nk <<<"$model_shape"
  for side in before after; do
    bin=$before
    [ "$side" = after ] && bin=$after
    a=$(step_instructions "$bin" "$model" "$shape" "$n")
    b=$(step_instructions "$bin" "$model" "$shape" "$nk")
    echo "{\"model\": \"$model\", \"shape\": \"$shape\", \"batch\": 32, \"threads\": 1, \"side\": \"$side\", \"binary\": \"$bin\", \"steps\": [$n, $nk], \"instructions\": [$a, $b], \"instructions_per_step\": $(( (b - a) / (nk - n) ))}" \
      | tee -a "$out/step_instructions.jsonl"
  done
done
