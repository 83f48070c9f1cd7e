#!/bin/bash
# The oracle, round 34, more LeNet-5 seeds (docs/benchmarks.md): round 34's
# LeNet-5 fastest jobs stood within 5% of the oracle's fastest beside them at
# two of three seeds and +17.5% at the third, where job and (d) trained the
# same steps. Fixed before its runs, after seeing that: five more held-out
# seeds, 93-97, the same job and (d) as bench/round34.sh, and (d) once more at
# each seed in a file of its own (the repeat), so that the spread of two runs
# of the same steps is measured beside the regret. The three in an order
# rotated by seed; the profile from round 34's cache; history: round 34's
# LeNet-5 history as it stands (its three jobs added).
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start; bench/round34.sh (its cache)
#   TULA=path/to/tula bench/round34_lenet_more.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
source "$here/round_common.sh"
name=decision_oracle_round34_lenet86
oracle() { /usr/bin/python3 "$here/decision_oracle.py" --tula "$tula" --model lenet5 --target 0.86 --max-epochs 12 \
  --work /tmp/tula-oracle-round34-lenet --profile-cache --seeds "$@"; }
i=0
for seed in 93 94 95 96 97; do
  for arm in $(rotated "$i" job d repeat); do fastest_arm "$arm" "$seed" "$name"; done
  i=$((i + 1))
done
