#!/usr/bin/env bash
# Mixed-precision training accuracy: examples mlp and cnn built with `cairn build --precision
# f32|bf16|f16` and trained 2 epochs on Fashion-MNIST with the same seed; test accuracy and
# loss, wall time, and the accuracy's difference to float32 (goal: within 1 point). A precision
# the compiler refuses (f16 before Cairn had a loss scaler) is recorded with its message; float32
# is trained again with another seed (--noise-seeds) for the scale of a difference. Writes
# bench/results/precision-<date>-<commit>.md and .json. About 5 minutes on 2 cores. Needs a
# built cairn (scripts/build.sh) and Debian's dataset-fashion-mnist; plain /usr/bin/python3.
# See bench.py for what is measured.
#
#   bench/precision/run.sh [--models mlp cnn] [--precisions f32 bf16 f16] [--epochs 2]
#                          [--seed 0] [--noise-seeds 1 ...] [--threads 0] [--cairn CAIRN]
#                          [--out FILE.md] [--keep]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
exec /usr/bin/python3 "$root/bench/precision/bench.py" \
  --command "$(echo "bench/precision/run.sh $*" | sed "s/ *$//")" "$@"
