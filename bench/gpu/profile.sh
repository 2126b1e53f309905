#!/usr/bin/env bash
# Per-kernel GPU time of a few training steps of bundle executables, for the speed work (not a
# timed benchmark: bench/gpu/run.sh is). On the GPU machine, from the bundle:
#   bash build/gpu-bundle/bench/profile.sh OUTDIR transformer-bench-b1024 cnn-bench-b1024 ...
# For each executable, OUTDIR/EXE-ncu.csv holds `ncu --metrics gpu__time_duration.sum` of every
# kernel of `EXE train --steps 4 --no-graph` (kernels launched one by one; the first step includes
# cuDNN's algorithm search). bench/gpu/summarize_profile.py turns the CSVs into the table of
# bench/results/gpu-profile-DATE.md.
set -u
bundle=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: profile.sh OUTDIR EXE...}
shift
mkdir -p "$out" /tmp/cairn-profile
tar -xJf "$bundle/payload.tar.xz" -C /tmp/cairn-profile
export LD_LIBRARY_PATH=$(python3 -c "import sys; sys.path.insert(0, '$bundle'); import gpu_common as g; print(':'.join(g.library_candidates()))")
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for exe in "$@"; do
  timeout 300 "$ncu" --csv --metrics gpu__time_duration.sum --launch-count 3000 \
    "/tmp/cairn-profile/bin/$exe" train --steps 4 --no-graph --data "$bundle/data/fashion-mnist" \
    --seed 0 > "$out/$exe-ncu.csv" 2> "$out/$exe-ncu.err" || echo "profile.sh: $exe failed" >&2
done
