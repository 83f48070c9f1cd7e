#!/usr/bin/env bash
# Builds only `tula` with TULA_WITH_TORCH=OFF, in a directory of its own, and
# checks that it plans from a profile measured elsewhere while every engine
# command fails with a message saying the build has no engine.
#
# Usage: no_torch_tula.sh SOURCE_DIR GENERATOR [CMAKE_ARGS...]
set -euo pipefail
src="$1"
generator="$2"
shift 2

work="$(mktemp -d "${TMPDIR:-/tmp}/tula-no-torch.XXXXXX")"
trap 'rm -rf "$work"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

run_logged() {
  local log="$1"
  shift
  "$@" >"$log" 2>&1 || { cat "$log" >&2; fail "$*"; }
}

run_logged "$work/configure.log" cmake -S "$src" -B "$work/build" -G "$generator" \
  -DTULA_WITH_TORCH=OFF -DTULA_BUILD_TESTS=OFF "$@"
run_logged "$work/build.log" cmake --build "$work/build" --target tula -j "${TULA_JOBS:-$(nproc)}"
tula="$work/build/src/tula"

if ldd "$tula" | grep torch >/dev/null; then
  fail "the LibTorch-free tula links LibTorch: $(ldd "$tula" | grep torch)"
fi

profile="$src/bench/results/profiles/small_cnn.json"
catalog="$src/catalogs/example.json"
run_logged "$work/plan.txt" "$tula" plan --profile "$profile" --catalog "$catalog" --objective knee
grep -q "knee" "$work/plan.txt" || { cat "$work/plan.txt"; fail "tula plan printed no plan"; }
run_logged "$work/predict.txt" "$tula" predict --profile "$profile" --workers 2 --batch-size 64
run_logged "$work/simulate.txt" "$tula" simulate --profile "$profile" --cluster "$src/catalogs/cluster-64gpu.json"

for command in train profile launch analyze models; do
  if "$tula" "$command" --model small_cnn >"$work/$command.txt" 2>&1; then
    fail "tula $command succeeded in a build without the engine"
  fi
  grep -q "this build has no training engine (built with TULA_WITH_TORCH=OFF)" "$work/$command.txt" ||
    { cat "$work/$command.txt"; fail "tula $command did not say the build has no engine"; }
done
echo "ok: a tula without LibTorch plans, predicts and simulates; its engine commands say they are missing"
