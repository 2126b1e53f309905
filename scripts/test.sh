#!/usr/bin/env bash
# Installs what is missing, builds, then runs every test (lit suites, unit tests, the PyTorch
# reference check, the bounded fuzzer) through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
bash scripts/build.sh
bash scripts/build-fuzz.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
