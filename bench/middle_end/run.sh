#!/usr/bin/env bash
# What the middle end (a pipeline of passes; cairn-fuse-elementwise) changed, against a
# "before" compiler: for every example, the arena, lower bound and kernel count at batch 64
# and 256, the after build's fused ops (elementwise chains, linear + relu) at the example's
# own batch, and the CPU training-step time at the example's own batch (before, after and
# after --no-fuse, every executable built right after the after cairn is copied, then timed
# round-robin), and whether the after builds' weights after the timed steps are
# bit-identical to before's (exit 1 when not). Writes bench/results/middle-end-<date>.md.
# About 10 minutes on 2 cores with the defaults, plus 3 to 15 the first time --before-ref
# builds the old commit (kept in /tmp/cairn-before-SHA). --before CAIRN takes a prebuilt
# cairn instead, whose executables link the runtime it was built with.
# Needs /usr/bin/python3 with numpy and Fashion-MNIST in /usr/share/datasets/fashion-mnist.
# See bench.py for the options and what is measured.
#
#   bench/middle_end/run.sh [--before CAIRN | --before-ref REF (default e71379c)]
#                           [--after CAIRN] [--models a,b] [--steps N] [--rounds R] [--out FILE]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
command=$(printf '%q ' bench/middle_end/run.sh "$@")
exec /usr/bin/python3 "$root/bench/middle_end/bench.py" --command "${command% }" "$@"
