#!/usr/bin/env bash
# CPU training-step benchmark: Cairn's executables against PyTorch 2.x from PyPI, eager and
# torch.compile, on the same machine, in interleaved rounds: every example (mlp, deep_mlp, cnn,
# transformer at batch 64 and 256, resnet18 at 32 and 128), at all cores and at one thread.
# Writes bench/results/cpu-step-<date>.md and .json: ms/step of each (fastest round, median,
# slowest/fastest), the ratios and the issue's goals, and Cairn's GEMM and convolution rate
# against the machine's measured sgemm peak. About 35 minutes on 2 cores (half of it
# resnet18); --quick is a few minutes per model. Needs a built cairn (scripts/build.sh) and
# Fashion-MNIST in /usr/share/datasets/fashion-mnist; makes build/bench-torch-venv from
# bench/recompute/requirements.txt the first time (shared with bench/recompute, a 5 GiB
# download). See bench.py for what is measured.
#
#   bench/cpu_step/run.sh [--models mlp cnn ...] [--batches 64 ...] [--resnet-batches 32 ...]
#                         [--threads-list 2 1] [--rounds 10] [--quick] [--cairn CAIRN]
#                         [--out FILE.md]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=$root/build/bench-torch-venv
bash "$root/bench/make-venv.sh" "$venv" "$root/bench/recompute/requirements.txt" torch
exec "$venv/bin/python" "$root/bench/cpu_step/bench.py" run \
  --command "$(echo "bench/cpu_step/run.sh $*" | sed "s/ *$//")" "$@"
