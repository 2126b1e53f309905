#!/usr/bin/env bash
# The main job: installs what is missing, builds, checks every example, then compiles
# examples/cnn.cairn into an executable, prints its memory plan (and writes it as HTML), and
# trains it on Fashion-MNIST on the CPU (2 epochs), printing test accuracy and the planned and
# measured memory. Exits non-zero on any failure.
#
# CAIRN_MAIN_EPOCHS overrides the epoch count (e.g. 1 for a quicker look).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
bash scripts/build.sh

failed=()
for f in examples/*.cairn; do
  echo "== cairn check $f"
  if ! build/bin/cairn check "$f"; then
    failed+=("$f")
  fi
  echo
done
if [[ ${#failed[@]} -ne 0 ]]; then
  echo "main: ${#failed[@]} example(s) failed: ${failed[*]}" >&2
  exit 1
fi
echo "main: all examples checked"

out=build/examples
mkdir -p "$out"
echo "== cairn plan examples/cnn.cairn --verify-plan (the memory of one training step, before it runs)"
build/bin/cairn plan examples/cnn.cairn --verify-plan
echo
echo "== cairn build examples/cnn.cairn -o $out/cnn --memory-report $out/cnn-memory.html"
build/bin/cairn build examples/cnn.cairn -o "$out/cnn" --memory-report "$out/cnn-memory.html"
echo "== $out/cnn train --epochs ${CAIRN_MAIN_EPOCHS:-2} (Fashion-MNIST, CPU)"
"$out/cnn" train --epochs "${CAIRN_MAIN_EPOCHS:-2}" --seed 0 \
  --save "$out/cnn.safetensors" --metrics "$out/cnn-metrics.json"
echo "main: trained examples/cnn.cairn; weights in $out/cnn.safetensors, metrics in $out/cnn-metrics.json,"
echo "      the memory plan to look at in $out/cnn-memory.html"
