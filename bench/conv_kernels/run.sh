#!/usr/bin/env bash
# Times Cairn's CPU convolution kernels (forward, input and weight gradient) on ResNet-18's and
# cnn's shapes with 1, 2, 4, 8 and 16 images per GEMM: the measurements that
# runtime/kernels/Conv.h's kConvGemmColumns is chosen from. Builds conv_kernels.cpp against the
# built kernel library (scripts/build.sh first) and writes
# bench/results/conv-kernels-<date>-<commit>.md. About a minute on 2 cores.
#
#   bench/conv_kernels/run.sh [THREADS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
threads=${1:-2}
build=$root/build
openblas=$(sed -n 's/^CAIRN_OPENBLAS_DIR:STRING=//p' "$build/CMakeCache.txt")
commit=$(git -C "$root" rev-parse --short HEAD)
date=$(date -u +%Y-%m-%d)
out=$root/bench/results/conv-kernels-$date-$commit.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"${CXX:-g++}" -O2 -std=c++17 -I"$root" "$root/bench/conv_kernels/conv_kernels.cpp" \
  "$build/runtime/libCairnKernels.a" -L"$openblas" -lopenblas -Wl,-rpath,"$openblas" -fopenmp \
  -o "$tmp/conv_kernels"
mkdir -p "$root/bench/results"
{
  echo "# Cairn's CPU convolution kernels by images per GEMM"
  echo
  echo "- command: \`bench/conv_kernels/run.sh $threads\`"
  echo "- machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; load average before $(cut -d' ' -f1 /proc/loadavg)"
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit $commit; $threads threads (OpenMP and OpenBLAS), float32, best of 7 runs each"
  echo "- run without this shell's OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE, as the executables run"
  echo
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$tmp/conv_kernels" "$threads"
} > "$out"
echo "wrote $out"
