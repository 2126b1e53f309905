#!/usr/bin/env bash
# A model split across devices (`cairn build|plan --devices N`, one MPI process per device)
# against one device: each device's arena and persistent bytes, the bytes a training step
# sends and receives per device, the measured step time under mpirun (one thread per rank,
# interleaved rounds) and the largest batch that fits N devices of a given memory. mlp, cnn,
# transformer and resnet18 at batch 64 on 1, 2 and 4 devices by default. Writes
# bench/results/partition-<date>-<commit>.md and .json. About 7 minutes on 2 cores (over half
# of it resnet18: 3 steps per run, about 3 s a step at one thread, 5 runs per round: one
# device, then 2 and 4 devices under two MPI waiting modes); 4 devices oversubscribe a
# 2-core machine, so their step times measure the schedule, not a speedup. Needs a built cairn
# (scripts/build.sh), mpirun (Debian's openmpi-bin) and /usr/bin/python3 (standard library
# only). With --micro-batches 4 (mlp, cnn, transformer), GPipe against 1F1B on 2 and 4
# devices: each device's arena, step time and share of the loop spent waiting (the bubble)
# against (N-1)/(M+N-1), and next to them PyTorch 2.x's torch.distributed.pipelining over gloo
# with the same cuts and schedule where they are written (mlp, cnn, transformer on 2 and 4
# devices): its peak bytes per rank and step time in the same rounds. PyTorch comes from
# build/bench-torch-venv (made from bench/recompute/requirements.txt the first time, a 5 GiB download from PyPI);
# without it the report says the peer was not measured. See bench.py for what is measured.
#
#   bench/partition/run.sh [--models mlp cnn ...] [--batch 64] [--devices 1 2 4] [--rounds 3]
#                          [--mpi-modes default yield] [--steps resnet18=3 ...]
#                          [--fit-memory 64MiB ...] [--micro-batches 4] [--pipelines gpipe 1f1b]
#                          [--pipeline-models mlp cnn transformer] [--cairn CAIRN] [--out FILE.md]
#                          [--keep]
#   python3 bench/partition/bench.py report bench/results/partition-....json   # the .md again
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=$root/build/bench-torch-venv
peer=()
if bash "$root/bench/make-venv.sh" "$venv" "$root/bench/recompute/requirements.txt" torch; then
  peer=(--python "$venv/bin/python")
else
  echo "bench/partition: no PyTorch 2.x ($venv could not be made); the PyTorch pipelining" \
       "peer is not measured" >&2
fi
exec /usr/bin/python3 "$root/bench/partition/bench.py" run "${peer[@]}" \
  --command "$(echo "bench/partition/run.sh $*" | sed "s/ *$//")" "$@"
