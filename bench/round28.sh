#!/bin/bash
# The oracle, round 28 (docs/benchmarks.md): AGS takes the noise gain alone
# where its upper bound is at most 1 (at or below the reference batch), so a
# launch at B_ref takes the tuned SGD step. Found on rounds 20-27's rows (the
# knee at B = 128 trained more epochs than the default at the same batch on
# LeNet-5, and AGS's factors averaged 0.93 there); measured here on cases no
# change was developed on. Held out, fixed before any run: LeNet-5 to 86% (at
# most 12 epochs) at seeds 62-66, then small_cnn to 83% (at most 5 epochs) at
# seeds 94-98 (none run by an earlier round); (a) the default and (c) the knee
# side by side in rotated order, as rounds 20, 21 and 26; (c) from an empty
# history of each case (the rule starts a setup of its own), which its jobs fill.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round28.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
oracle() { /usr/bin/python3 "$here/decision_oracle.py" --tula "${TULA:-$here/../build/src/tula}" \
  --phases headline --headline-methods a,c "$@"; }
mkdir -p "$R/decision_oracle_round28_lenet86" "$R/decision_oracle_round28"
oracle --work /tmp/tula-oracle-round28-lenet --out "$R/decision_oracle_round28_lenet86.jsonl" --model lenet5 \
  --target 0.86 --max-epochs 12 --seeds 62,63,64,65,66 \
  --tune-extra="--history $R/decision_oracle_round28_lenet86/history.jsonl"
oracle --work /tmp/tula-oracle-round28 --out "$R/decision_oracle_round28.jsonl" --seeds 94,95,96,97,98 \
  --tune-extra="--history $R/decision_oracle_round28/history.jsonl"
