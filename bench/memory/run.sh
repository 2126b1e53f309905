#!/usr/bin/env bash
# Memory of a training step (and of inference): Cairn's static plan (`cairn plan MODEL
# --memory-report`) against XLA's plan of the same step in JAX and PyTorch's measured peak,
# every example at batch 64 and 256. Writes bench/results/memory-<date>.md and .json (a run
# over a subset: memory-<date>-quick.*). About six minutes on 2 cores. Needs a built cairn
# (scripts/build.sh) and /usr/bin/python3 with torch; makes build/bench-venv with JAX from
# PyPI (bench/memory/requirements.txt) the first time. See bench.py for what is measured.
#
#   bench/memory/run.sh [--models mlp cnn ...] [--batches 64 ...] [--steps train inference]
#                       [--cairn CAIRN] [--out FILE.md] [--keep]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=$root/build/bench-venv
requirements=$root/bench/memory/requirements.txt
bash "$root/bench/make-venv.sh" "$venv" "$requirements" jax
exec "$venv/bin/python" "$root/bench/memory/bench.py" run \
  --command "$(echo "bench/memory/run.sh $*" | sed "s/ *$//")" "$@"
