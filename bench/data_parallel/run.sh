#!/usr/bin/env bash
# Data-parallel training (`cairn build --replicas R`, one MPI process per replica, gradients
# summed in rank order in buckets while the backward runs) against PyTorch 2.x
# DistributedDataParallel (gloo) with the same models, global batch, optimizer and one thread
# per process, on the same machine in the same run: step time (median over rounds of the
# steady-state ms/step, warm-up steps excluded), examples/s, scaling efficiency (throughput on
# R ranks / (R x throughput on 1)) and the Cairn/PyTorch step-time ratio, for 1 and 2 ranks.
# Rounds interleave the four runs (Cairn 1 rank, Cairn 2 ranks, PyTorch 1 process, PyTorch DDP
# 2 processes), so a shared, noisy machine hurts all alike. mlp and cnn at batch 64, 3 rounds
# by default: about 3 minutes on 2 cores (cnn is most of it; each PyTorch process also spends
# about 2 s importing torch, untimed). Writes bench/results/data_parallel-<date>-<commit>.md
# and .json. Needs a built cairn (scripts/build.sh), mpirun (Debian's openmpi-bin), Fashion-MNIST
# in /usr/share/datasets/fashion-mnist (dataset-fashion-mnist) and /usr/bin/python3 (standard
# library only); PyTorch runs in build/bench-torch-venv, made from
# bench/recompute/requirements.txt the first time (shared with bench/cpu_step and
# bench/recompute, a 5 GiB download from PyPI). See bench.py for what is measured.
#
#   bench/data_parallel/run.sh [--models mlp cnn ...] [--batch 64] [--ranks 1 2] [--rounds 3]
#                              [--steps 60 | --steps mlp=1000 cnn=100 ...] [--warmup 10]
#                              [--bucket-mb 25] [--cairn CAIRN] [--out FILE.md] [--keep]
#   python3 bench/data_parallel/bench.py report bench/results/data_parallel-....json  # the .md
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=$root/build/bench-torch-venv
if ! bash "$root/bench/make-venv.sh" "$venv" "$root/bench/recompute/requirements.txt" torch; then
  echo "bench/data_parallel: no PyTorch 2.x: $venv could not be made from" \
       "bench/recompute/requirements.txt (is PyPI reachable?); the benchmark needs torch" \
       "with gloo in that venv" >&2
  exit 1
fi
exec /usr/bin/python3 "$root/bench/data_parallel/bench.py" run --python "$venv/bin/python" \
  --command "$(echo "bench/data_parallel/run.sh $*" | sed "s/ *$//")" "$@"
