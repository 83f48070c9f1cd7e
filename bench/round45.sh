#!/bin/bash
# The oracle, round 45 (docs/benchmarks.md): a held-out model. Every round
# before this one graded LeNet-5 and small_cnn, whose steps OpenBLAS made so
# cheap that on this cluster the day's knee is the default's layout; ResNet-20
# (batch norm, its convolutions not helped by the BLAS)
# takes about 5x small_cnn's step (0.32-0.35 s against 0.066-0.068 s at batch
# 128 on one thread, bench/results/blas_steps.jsonl) for half the gradient
# (0.27 M parameters on Fashion-MNIST against 0.55 M), so two nodes can pay
# for their link.
# No decision bench has run ResNet-20; no model was changed for it.
# Fixed before any of its runs: ResNet-20 to 87% validation accuracy (at most
# 8 epochs) at seeds 160-162, none run before. First (a) the default and (c)
# the knee job side by side in an order rotated by seed, (c) measuring its own
# profile (a first job of the machine) and reading a history of this case that
# starts empty and fills as its jobs reach the target; then the day's front at
# the same seeds: five configurations at global batch 128 (the default's, the
# rate's reference), AGS as tune runs it: 2 x emu-one at 64, 1 x emu-one at
# 128, 2 x emu-half at 64, 4 x emu-half at 32, 1 x emu-half at 128.
# (b) is not run for this case (its rate screen alone would take hours here).
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round45.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
name=decision_oracle_round45_resnet20
work=/tmp/tula-oracle-round45-resnet20
seeds=160,161,162
M=(--model resnet20 --target 0.87 --max-epochs 8)
mkdir -p "$work" "$R/$name"
touch "$R/$name/history.jsonl"
/usr/bin/python3 "$here/decision_oracle.py" --tula "$tula" "${M[@]}" --work "$work" \
  --phases headline --headline-methods a,c --seeds "$seeds" --out "$R/$name.jsonl" \
  --tune-extra="--history $R/$name/history.jsonl"
/usr/bin/python3 "$here/decision_oracle.py" --tula "$tula" "${M[@]}" --work "$work-grid" \
  --phases grid --grid-only emu-one:2:64,emu-one:1:128,emu-half:2:64,emu-half:4:32,emu-half:1:128 \
  --grid-seeds "$seeds" --out "$R/${name}_grid.jsonl"
