#!/usr/bin/env bash
# CPU training-step benchmark: Cairn's compiled executables against PyTorch eager on the
# same machine, mlp and cnn at batch 64 and 256, same thread count (all cores by default).
# Writes bench/results/cpu-step-<date>.md: ms/step for each, the speed-up, and Cairn's
# achieved GEMM rate against the machine's measured sgemm peak. Takes about ten minutes on
# 2 cores. Needs a built cairn (scripts/build.sh), /usr/bin/python3 with torch, and
# Fashion-MNIST in /usr/share/datasets/fashion-mnist. See bench.py for what is measured.
#
#   bench/cpu_step/run.sh [CAIRN] [extra bench.py run options, e.g. --batches 64 --steps 100]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cairn=${1:-$root/build/bin/cairn}
shift || true
exec /usr/bin/python3 "$root/bench/cpu_step/bench.py" run --cairn "$cairn" \
  --command "$(echo "bench/cpu_step/run.sh $*" | sed "s/ *$//")" "$@"
