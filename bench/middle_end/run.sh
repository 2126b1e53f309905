#!/usr/bin/env bash
# What the middle end (a pipeline of passes; cairn-fuse-elementwise) changed, against a
# "before" compiler: for every example, the arena, lower bound and kernel count at batch 64
# and 256, and the CPU training-step time at the example's own batch (before, after and
# after --no-fuse built and timed round-robin), and whether the after builds' weights after
# the timed steps are bit-identical to before's (exit 1 when not). Writes
# bench/results/middle-end-<date>.md. About 10 minutes on 2 cores with the defaults, plus
# 3 to 15 the first time --before-ref builds the old commit (kept in /tmp/cairn-before-SHA).
# Needs /usr/bin/python3 with numpy and Fashion-MNIST in /usr/share/datasets/fashion-mnist.
# See bench.py for the options and what is measured.
#
#   bench/middle_end/run.sh [--before CAIRN | --before-ref REF (default e71379c)]
#                           [--after CAIRN] [--models a,b] [--steps N] [--rounds R] [--out FILE]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
exec /usr/bin/python3 "$root/bench/middle_end/bench.py" \
  --command "$(echo "bench/middle_end/run.sh $*" | sed "s/ *$//")" "$@"
