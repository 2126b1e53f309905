#!/usr/bin/env bash
# GPU training-step benchmark: Cairn's CUDA executables against PyTorch eager and torch.compile
# on the same GPU (fp32, TF32 off), mlp, cnn, resnet18 and transformer at the bundle's benchmark
# batches. Writes RESULTS/gpu-DATE.md (command, machine, date, commit, step time and peak memory
# with the ratios against both) and its JSON; copy the .md to bench/results/ here. See bench.py
# for what is measured.
#
# On the GPU machine, from the bundle (made here by `bash scripts/gpu-bundle.sh`):
#   bash build/gpu-bundle/bench/run.sh --out RESULTS [--models mlp cnn] [--steps 200] [--repeats 3]
# On a machine with both Cairn and a GPU, from the checkout (makes the bundle when it is missing):
#   bash bench/gpu/run.sh --out bench/results
# Needs python3 with numpy and torch, the NVIDIA driver, libcublasLt.so.13 and libcudnn.so.9.
# Each model takes Cairn's 2 x --repeats runs and three PyTorch processes (torch.compile
# compiles in its warm-up); the report is rewritten after each model, so a run cut short keeps
# the models done. Where one command may run only so long, run the models in separate calls
# (--models resnet18, --models mlp cnn transformer) into separate folders.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [[ -f "$here/../MANIFEST.json" ]]; then
  bundle=$(cd "$here/.." && pwd)
else
  root=$(cd "$here/../.." && pwd)
  bundle=$root/build/gpu-bundle
  [[ -f "$bundle/MANIFEST.json" ]] || bash "$root/scripts/gpu-bundle.sh"
fi
exec "${PYTHON:-python3}" "$bundle/bench/bench.py" run --bundle "$bundle" \
  --command "$(echo "bench/gpu/run.sh $*" | sed 's/ *$//')" "$@"
