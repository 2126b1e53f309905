#!/usr/bin/env bash
# Recomputation under a memory budget: Cairn's `--memory-budget` from the plain arena down to
# the smallest arena recomputation reaches (arena, extra FLOPs, measured CPU step time against
# the plain build, the planner's time), against PyTorch 2.x from PyPI on the same models and
# machine (plain, torch.utils.checkpoint over square-root segments, torch.compile with
# activation_memory_budget). deep_mlp, resnet18 and the transformer at batch 64 and 256 by
# default. Writes bench/results/recompute-<date>.md and .json. About 35 minutes on 2 cores
# (most of it resnet18 at batch 256). Needs a built cairn (scripts/build.sh); makes
# build/bench-torch-venv with PyTorch from PyPI (bench/recompute/requirements.txt) the first
# time (a 5 GiB download: PyPI's Linux wheel pulls in the CUDA libraries, unused here).
# See bench.py for what is measured.
#
#   bench/recompute/run.sh [--models deep_mlp ...] [--batches 64 ...] [--fractions 0.5,0.33]
#                          [--cairn CAIRN] [--out FILE.md] [--no-torch] [--kernel-times]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=$root/build/bench-torch-venv
requirements=$root/bench/recompute/requirements.txt
bash "$root/bench/make-venv.sh" "$venv" "$requirements" torch
exec "$venv/bin/python" "$root/bench/recompute/bench.py" run \
  --command "$(echo "bench/recompute/run.sh $*" | sed "s/ *$//")" "$@"
