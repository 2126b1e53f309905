#!/usr/bin/env bash
# Configures (when build/ is new or the flags changed) and builds Cairn in build/ with Ninja.
set -euo pipefail
cd "$(dirname "$0")/.."

cmake_flags=(
  -G Ninja -S . -B build
  -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_C_COMPILER=gcc-12
  -DCMAKE_CXX_COMPILER=g++-12
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit
  -DPython3_EXECUTABLE=/usr/bin/python3
)

# Reconfigure only when there is no cache or the flags differ from the last configure.
stamp=build/.cairn-configure-flags
wanted="${cmake_flags[*]}"
if [[ ! -f build/CMakeCache.txt || ! -f "$stamp" || "$(cat "$stamp")" != "$wanted" ]]; then
  rm -f "$stamp"
  cmake "${cmake_flags[@]}"
  printf '%s' "$wanted" > "$stamp"
fi

cmake --build build -j"$(nproc)"
