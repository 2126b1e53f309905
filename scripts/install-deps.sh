#!/usr/bin/env bash
# Installs the Debian 12 packages Cairn needs to build and test, and only those that are missing.
# Idempotent: prints "deps: all present" and does nothing when everything is installed.
set -euo pipefail

packages=(
  # build
  cmake ninja-build g++-12 git
  # LLVM/MLIR 22 (lit and FileCheck come with llvm-22-tools), clang for the fuzzers
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22 libclang-rt-22-dev
  # OpenMP for clang-22 (the fuzzer build configures the runtime, whose kernels use OpenMP)
  libomp-22-dev
  # libraries
  libabsl-dev libgtest-dev nlohmann-json3-dev zlib1g-dev libopenblas-openmp-dev
  # oneDNN: the CPU convolutions
  libdnnl-dev
  # MPI: one process per device (partitioned models), launched by mpirun
  openmpi-bin libopenmpi-dev
  # reference checks and data
  python3 python3-torch python3-torchvision dataset-fashion-mnist
  # the HTML memory report is checked in a real headless browser
  chromium
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "deps: all present"
  exit 0
fi

echo "deps: installing ${missing[*]}"
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "deps: installed ${#missing[@]} package(s)"
