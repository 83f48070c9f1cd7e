#!/usr/bin/env bash
# The checks a GPU machine runs on Tula in one go, most important first, each
# under its own time limit and all within $TULA_CHECKS_BUDGET seconds (570):
#
#   OUT=/some/dir bash bench/gpu/checks.sh      (from the repository root)
#
#   1. the machine: GPU, compiler, Python and torch, CMake, ninja, pkg-config,
#      the LibTorch's Gloo headers and the nvidia-* packages beside it;
#   2. the build: scripts/build-cuda with the carried dependencies
#      (.deps/tula-build-deps.tar.xz, from scripts/fetch-build-deps) of `tula`
#      and the GPU tests; stops here if it fails;
#   3. correctness: the GPU tests (ctest -L gpu): the CUDA smoke test, DDP
#      equivalence on CUDA (two workers sharing the GPU over Gloo), NCCL with
#      one rank, and two NCCL ranks on one GPU turned away with the reason;
#   4. speed: `tula train` against PyTorch DDP (bench/peer_ddp.py, this
#      machine's python3) on one GPU, fp32, alternated pairs: resnet18 at
#      32 px (batch 256) and resnet50 at 224 px (batch 64);
#   5. the GPU step (its own block below): resnet50 at 224 px, batch 128 in
#      fp32, batches 64 and 128 in bf16 with channels-last on both sides, and
#      AGS against SGD at resnet50 batch 128 and uint8 against float32 input
#      at batch 64 (tula against tula), alternated pairs, rows in
#      $OUT/gpu_step.jsonl;
#   6. `tula profile --quick` (the profiler measures the CPU; this checks that
#      it runs against this LibTorch);
#   7. device decisions: `tula profile --device cuda --quick` of resnet18
#      (32 px) and resnet50 (224 px, synthetic), the step time predicted at
#      three batches the profile did not measure against `tula train`, the
#      largest batch predicted against the real out-of-memory point, and
#      `tula tune --device cuda` to a target with its report (the block at
#      the end, rows in $OUT/devices/).
#
# $OUT receives (written as the checks go, so a run cut short keeps what it
# did): summary.txt (one line per step), checks.log (everything but the
# build), build.log (the build's output, capped), gpu.jsonl (one row per
# throughput configuration), profile.json.
set -uo pipefail

OUT="${OUT:?set OUT to the folder the results go to}"
mkdir -p "$OUT"
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
budget="${TULA_CHECKS_BUDGET:-570}"
python="${TULA_PYTHON:-python3}"
deps="${TULA_DEPS:-$root/.deps/tula-build-deps.tar.xz}"
build="${TULA_GPU_BUILD:-$root/build-gpu}"
tula="$build/src/tula"
start=$(date +%s)
summary="$OUT/summary.txt"
log="$OUT/checks.log"
: >"$summary"
: >"$log"

elapsed() { echo $(( $(date +%s) - start )); }
note() { echo "$*" | tee -a "$summary"; }
section() { printf '\n===== %s (at %s s) =====\n' "$1" "$(elapsed)" >>"$log"; }

# step NAME LIMIT_S COMMAND...: runs COMMAND under the smaller of its limit and
# the time left (less 15 s to write up), output to checks.log, verdict to
# summary.txt. Returns the command's status (124: out of time).
step() {
  local name="$1" limit="$2"
  shift 2
  local left=$(( budget - $(elapsed) - 15 ))
  (( left < limit )) && limit=$left
  if (( limit < 10 )); then
    note "$name: SKIPPED (no time left; budget ${budget} s)"
    return 125
  fi
  section "$name: $* (limit ${limit} s)"
  local t0=$(date +%s) rc=0
  # The steps are functions of this script: a child bash runs the exported
  # one, so that timeout's signal reaches it and everything it started.
  timeout -k 10 "$limit" bash -c '"$@"' step "$@" >>"$log" 2>&1 || rc=$?
  local took=$(( $(date +%s) - t0 ))
  if (( rc == 0 )); then
    note "$name: ok (${took} s)"
  elif (( rc == 124 || rc == 137 )); then
    note "$name: TIMED OUT after ${took} s (limit ${limit} s)"
  else
    note "$name: FAILED, exit $rc (${took} s)"
  fi
  return $rc
}

machine_facts() {
  echo "date: $(date -u +%FT%TZ)  commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  grep -h PRETTY_NAME /etc/os-release 2>/dev/null
  echo "cores: $(nproc)  memory: $(free -g 2>/dev/null | awk '/Mem:/ {print $2 " GiB"}')  disk free: $(df -h . | awk 'NR==2 {print $4}')"
  nvidia-smi -L || echo "nvidia-smi: none"
  nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv 2>/dev/null
  echo "c++: $(command -v c++ g++ clang++ | tr '\n' ' ')"
  ${CXX:-c++} --version 2>&1 | head -1
  echo "glibc: $(getconf GNU_LIBC_VERSION 2>/dev/null)"
  echo "cmake: $(cmake --version 2>/dev/null | head -1)  ninja: $(ninja --version 2>/dev/null || echo none)"
  echo "pkg-config: $(command -v pkg-config || echo none)  xz: $(command -v xz || echo none)  nvcc: $(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || echo none)"
  "$python" - <<'EOF'
import glob, os, sys
import torch
print("python", sys.executable, sys.version.split()[0])
print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(),
      "gpus", torch.cuda.device_count(), "cxx11 abi", torch._C._GLIBCXX_USE_CXX11_ABI)
try:
    print("nccl", torch.cuda.nccl.version())
except Exception as e:
    print("nccl: unknown,", e)
inc = os.path.join(os.path.dirname(torch.__file__), "include")
print("torch include:", " ".join(sorted(os.listdir(inc))))
gloo = os.path.join(inc, "gloo")
print("torch include/gloo:", " ".join(sorted(os.listdir(gloo))[:12]) if os.path.isdir(gloo) else "MISSING")
try:
    import nvidia
    for root in nvidia.__path__:
        print("nvidia packages:", " ".join(sorted(os.listdir(root))))
        for name in ("nccl.h", "cudnn_version.h", "libcudnn.so*", "libnccl.so*"):
            print("  ", name, glob.glob(os.path.join(root, "**", name), recursive=True)[:2])
except ImportError:
    print("nvidia packages: none")
EOF
}

build_tula() {
  set -o pipefail  # the verdict is scripts/build-cuda's, not sed's
  # The whole output goes to the build directory; $OUT gets at most 20000
  # lines of it, written as they come (sed -u reads on past them, so the
  # build never sees a closed pipe).
  mkdir -p "$build"
  bash scripts/build-cuda ${deps:+--deps "$deps"} --build-dir "$build" tula tula_gpu_tests 2>&1 |
    tee "$build/build-full.log" | sed -u -n '1,20000p' >"$OUT/build.log"
}

linkage() {
  ldd "$tula" | grep -E 'not found|torch|c10|cuda|nccl|spdlog|fmt|httplib|ssl|sqlite|jpeg|png'
  "$tula" --version
}

cuda_probe() {
  "$tula" train --device cuda --model small_cnn --dataset synthetic --synthetic-shape 1x28x28 \
    --synthetic-size 256 --batch-size 64 --max-steps 2 --no-eval --progress none
}

gpu_tests() {
  ctest --test-dir "$build" -L gpu -V --timeout 240
}

throughput() {  # model, batch, classes
  "$python" bench/throughput_vs_peer.py --tula "$tula" --device cuda --python "$python" --workers 1 \
    --repeats 2 --steps 30 --warmup 5 --models "$1" --batches "$2" --classes "$3" \
    --out "$OUT/gpu.jsonl" --label gpu-checks
}

# ---- The GPU step: multi-tensor optimizers, one host read a step, pinned
# input, bf16 and channels-last (docs/gpu.md, "The GPU step") ----
# step_pairs LABEL MODEL BATCH CLASSES [throughput_vs_peer.py options...]:
# alternated pairs against PyTorch DDP (or, with --peer-tula, against tula),
# one row per configuration in $OUT/gpu_step.jsonl.
step_pairs() {
  local label="$1" model="$2" batch="$3" classes="$4"
  shift 4
  "$python" bench/throughput_vs_peer.py --tula "$tula" --device cuda --python "$python" --workers 1 \
    --repeats 2 --steps 30 --warmup 5 --models "$model" --batches "$batch" --classes "$classes" \
    --out "$OUT/gpu_step.jsonl" --label "$label" "$@"
}
# ---- end of the GPU step's functions ----

profile_quick() {
  "$tula" profile --quick --model small_cnn --input-shape 1x28x28 --workers 2 --out "$OUT/profile.json"
}

export OUT python deps build tula
export -f machine_facts build_tula linkage cuda_probe gpu_tests throughput step_pairs profile_quick

note "checks on $(hostname) from $root, budget ${budget} s"
step "machine facts" 30 machine_facts
if [ ! -f "$deps" ]; then
  note "no $deps: building against this machine's own packages"
  deps=""
fi
if ! step "build (tula, tula_gpu_tests)" 330 build_tula; then
  {
    echo "first compile errors (all of them in build.log):"
    grep -E 'error:|undefined reference|CMake Error|FAILED:' "$build/build-full.log" | cut -c1-400 | head -40
  } | tee -a "$summary"
  note "stopped after $(elapsed) s: nothing to test without a build"
  exit 1
fi
step "linkage" 20 linkage
step "CUDA probe (2 steps of small_cnn)" 60 cuda_probe
step "GPU tests (ctest -L gpu)" 200 gpu_tests
grep -E '^\s*[0-9]+/[0-9]+ Test|tests passed|largest weight difference' "$log" | tee -a "$summary" >/dev/null
step "throughput resnet18 32px batch 256" 90 throughput resnet18 256 10
step "throughput resnet50 224px batch 64" 120 throughput resnet50 64 1000
# The Markdown rows bench/throughput_vs_peer.py printed (samples/s, ratios).
grep -E '^\| (model|resnet)' "$log" | tee -a "$summary" >/dev/null
# ---- The GPU step's checks (fp32 batch 64 and resnet18 are the two above) ----
step "GPU step: resnet50 224px batch 128 fp32" 75 step_pairs r50-b128-fp32 resnet50 128 1000
step "GPU step: resnet50 224px batch 128 bf16 channels-last" 70 \
  step_pairs r50-b128-bf16 resnet50 128 1000 --precision bf16 --channels-last
step "GPU step: AGS against SGD, resnet50 batch 128 (tula/tula)" 75 \
  step_pairs r50-b128-ags-vs-sgd resnet50 128 1000 --peer-tula "$tula" \
  --tula-args "--optimizer ags" --peer-tula-args "--optimizer sgd"
step "GPU step: resnet50 224px batch 64 bf16 channels-last" 60 \
  step_pairs r50-b64-bf16 resnet50 64 1000 --precision bf16 --channels-last
step "GPU step: uint8 against float32 input, resnet50 batch 64 (tula/tula)" 60 \
  step_pairs r50-b64-uint8-vs-float32 resnet50 64 1000 --peer-tula "$tula" \
  --tula-args "--input-dtype uint8" --peer-tula-args "--input-dtype float32"
grep -E '^\| (model|resnet)' "$log" | tail -n 8 | tee -a "$summary" >/dev/null
# ---- end of the GPU step's checks ----
step "tula profile --quick (CPU profiler)" 60 profile_quick

# ---------------------------------------------------------------------------
# Device decisions (issue 78, part 6): a profile of the GPU, its predictions
# against `tula train` on the same GPU, and `tula tune --device cuda`. Rows
# and files under $OUT/devices/ (copy them to bench/results/gpu/). Each step
# is skipped, saying so, when the budget has no time left for it; the whole
# block wants about 420 s beyond the steps above (TULA_CHECKS_BUDGET=900).
# Fashion-MNIST for the tune step: $TULA_FMNIST_DIR, else .data/fashion-mnist
# in the repository, else /usr/share/datasets/fashion-mnist (the four
# idx .gz files; the device machine has no network to fetch them).
devices="$OUT/devices"
fmnist="${TULA_FMNIST_DIR:-}"
for d in "$root/.data/fashion-mnist" /usr/share/datasets/fashion-mnist; do
  [ -z "$fmnist" ] && [ -f "$d/train-images-idx3-ubyte.gz" ] && fmnist="$d"
done

profile_cuda() {  # name, model, shape, classes
  mkdir -p "$devices"
  "$tula" profile --device cuda --quick --model "$2" --input-shape "$3" --classes "$4" --train-samples 50000 \
    --test-samples 10000 --workers 2 --time-budget 60 --out "$devices/profile_$1.json"
}
heldout() {  # name, model, shape, classes
  "$python" bench/gpu/device_decisions.py heldout --tula "$tula" --profile "$devices/profile_$1.json" --model "$2" \
    --shape "$3" --classes "$4" --batches 24,48,96 --steps 30 --out "$devices/heldout.jsonl"
}
oom_point() {  # name, model, shape, classes
  "$python" bench/gpu/device_decisions.py oom --tula "$tula" --profile "$devices/profile_$1.json" --model "$2" \
    --shape "$3" --classes "$4" --tries 5 --timeout 60 --out "$devices/oom.jsonl"
}
tune_cuda() {
  [ -n "$fmnist" ] || { echo "no Fashion-MNIST files: set TULA_FMNIST_DIR"; return 3; }
  "$tula" tune --device cuda --model small_cnn --dataset fashion-mnist --data-dir "$fmnist" --target-accuracy 0.85 \
    --resources local --max-epochs 6 --progress lines --no-history --out "$devices/tune"
}
export devices fmnist
export -f profile_cuda heldout oom_point tune_cuda

note "--- device decisions (profile, predict and tune on the GPU) ---"
if step "profile --device cuda resnet18 32px" 60 profile_cuda resnet18_32 resnet18 3x32x32 10; then
  step "held-out steps resnet18 32px" 60 heldout resnet18_32 resnet18 3x32x32 10
fi
if step "profile --device cuda resnet50 224px" 90 profile_cuda resnet50_224 resnet50 3x224x224 1000; then
  step "held-out steps resnet50 224px" 90 heldout resnet50_224 resnet50 3x224x224 1000
  step "largest batch vs out-of-memory resnet50 224px" 100 oom_point resnet50_224 resnet50 3x224x224 1000
fi
step "tune --device cuda small_cnn fashion-mnist to 85%" 150 tune_cuda
grep -E '^\| (resnet|small)' "$log" | tee -a "$summary" >/dev/null
note "done after $(elapsed) s"
