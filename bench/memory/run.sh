#!/usr/bin/env bash
# Memory of a training step (and of inference): Cairn's static plan (`cairn plan MODEL
# --memory-report`) against XLA's plan of the same step in JAX and PyTorch's measured peak,
# every example at batch 64 and 256. Writes bench/results/memory-<date>.md and .json (a run
# over a subset: memory-<date>-quick.*). About six minutes on 2 cores. Needs a built cairn
# (scripts/build.sh) and /usr/bin/python3 with torch; makes build/bench-venv with JAX from
# PyPI (bench/memory/requirements.txt) the first time. See bench.py for what is measured.
# --precisions f32 bf16 [f16] adds mixed precision (default: f32 alone): Cairn's
# `--precision` plans against float32's, PyTorch under CPU autocast and XLA in bf16/f16; it
# makes build/bench-torch-venv with PyTorch 2.x from PyPI the first time
# (bench/recompute/requirements.txt, shared with bench/recompute and bench/cpu_step, a 5 GiB
# download).
#
#   bench/memory/run.sh [--models mlp cnn ...] [--batches 64 ...] [--steps train inference]
#                       [--precisions f32 bf16 f16] [--cairn CAIRN] [--out FILE.md] [--keep]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=$root/build/bench-venv
requirements=$root/bench/memory/requirements.txt
bash "$root/bench/make-venv.sh" "$venv" "$requirements" jax
# PyTorch 2.x for autocast when a half precision is asked for (the words after --precisions).
half=0 in_precisions=0
for arg in "$@"; do
  case $arg in
    --precisions) in_precisions=1 ;;
    --*) in_precisions=0 ;;
    bf16|f16) [[ $in_precisions == 1 ]] && half=1 ;;
  esac
done
if [[ $half == 1 ]]; then
  bash "$root/bench/make-venv.sh" "$root/build/bench-torch-venv" \
    "$root/bench/recompute/requirements.txt" torch
fi
exec "$venv/bin/python" "$root/bench/memory/bench.py" run \
  --command "$(echo "bench/memory/run.sh $*" | sed "s/ *$//")" "$@"
