#!/usr/bin/env bash
# Configures (when build-fuzz/ is new or the flags changed) and builds the
# libFuzzer target cairn-fuzz-frontend in build-fuzz/ with clang-22, ASan and
# UBSan on the whole directory. Only the fuzzer target is built.
set -euo pipefail
cd "$(dirname "$0")/.."

san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake_flags=(
  -G Ninja -S . -B build-fuzz
  -DCMAKE_BUILD_TYPE=RelWithDebInfo
  -DCMAKE_C_COMPILER=clang-22
  -DCMAKE_CXX_COMPILER=clang++-22
  "-DCMAKE_C_FLAGS=$san -fsanitize=fuzzer-no-link"
  "-DCMAKE_CXX_FLAGS=$san -fsanitize=fuzzer-no-link"
  "-DCMAKE_EXE_LINKER_FLAGS=$san"
  "-DCMAKE_SHARED_LINKER_FLAGS=$san"
  -DCAIRN_ENABLE_FUZZER=ON
  -DCAIRN_ENABLE_CUDA=OFF
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit
  -DPython3_EXECUTABLE=/usr/bin/python3
)

# Reconfigure only when there is no cache or the flags differ from the last configure.
stamp=build-fuzz/.cairn-configure-flags
wanted="${cmake_flags[*]}"
if [[ ! -f build-fuzz/CMakeCache.txt || ! -f "$stamp" || "$(cat "$stamp")" != "$wanted" ]]; then
  rm -f "$stamp"
  cmake "${cmake_flags[@]}"
  printf '%s' "$wanted" > "$stamp"
fi

cmake --build build-fuzz --target cairn-fuzz-frontend -j"$(nproc)"
