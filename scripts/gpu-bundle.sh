#!/usr/bin/env bash
# Packs everything the GPU suite and the GPU benchmark need into one folder that can travel to a
# machine with an NVIDIA GPU but without Cairn's toolchain (no LLVM/MLIR, no Abseil; python3
# with numpy, optionally PyTorch), where it runs as
#
#   python3 build/gpu-bundle/run_gpu_suite.py --out RESULTS     (test/gpu/run_gpu_suite.py)
#   bash build/gpu-bundle/bench/run.sh --out RESULTS            (bench/gpu/)
#
# Run it here after the normal build (scripts/build.sh; build/bin/cairn built with
# CAIRN_ENABLE_CUDA):
#
#   bash scripts/gpu-bundle.sh [--out DIR] [--max-mib 60] [--models "mlp cnn ..."]
#        [--bench "mlp=2048 cnn=1024 resnet18=512 transformer=1024"] [--target cuda|cpu]
#        [--precisions "mlp=bf16,f16 cnn=bf16,f16 transformer=bf16"] [--train-subset N]
#
# What it holds (DIR, default build/gpu-bundle):
#   MANIFEST.json     commit, date, cairn --version, and per model: inputs, optimizer, default
#                     and agreement batch, each executable with its memory plan (arena, lower
#                     bound, no-reuse bytes), the SHA-256 of `init --seed 1` and the loss of the
#                     CPU reference step run here
#   payload.tar.xz    bin/: per example (and per half-precision variant of --precisions,
#                     MODEL-bf16 or MODEL-f16, built with --precision, its CPU reference
#                     too) the CUDA executables at the model's batch, normal,
#                     --no-reuse and recomputing (--memory-budget at half the plain arena, or
#                     the smallest arena recomputation reaches); at the agreement batch where
#                     that differs (8 for resnet18, transformer, deep_mlp, as
#                     test/reference/check_step_agreement.py uses); at the benchmark batches
#                     (--bench), plain, under budgets of 1/2 and 1/3 of the plain arena and
#                     in each half precision --precisions names for the model; the
#                     CPU executable at the agreement batch (the reference; a half entry's
#                     float32 one too);
#                     cairn-cuda-kernel-tests and cairn-cuda-collective-tests when they
#                     were built (the latter loads libnccl.so.2, which the GPU machine has
#                     in its nvidia-nccl wheel: it does not travel);
#                     lib/: the CPU executables' libraries that a machine without our Debian
#                     packages lacks (OpenBLAS, libgfortran, libquadmath, zlib); the CUDA
#                     executables need only the driver, libcublasLt.so.13 and libcudnn.so.9
#   ref/MODEL/batch.safetensors   the batch of the agreement check (numpy default_rng(0))
#   data/fashion-mnist/           the four .gz files (29 MiB); ResNet-18's 3x32x32 inputs are
#                                 made from them on the GPU machine (padded, channels repeated)
#   run_gpu_suite.py gpu_common.py bench/ reference/ examples/   the scripts and model files
#
# Executables, not the generated .cu with the static libraries and a link script, by
# measurement: one CUDA executable is 6 to 9 MiB (the runtime, cudart, Cairn's kernels for sm_80
# and sm_90; the model's own code is a small part), so the 17 CUDA and 5 CPU executables with
# the CPU's libraries are 172 MiB, too many to carry as they are; but they share almost all their
# bytes, and one solid xz archive of all of them is 8.7 MiB, about one executable's size
# (2026-11-22; the bundle 39 MiB with the data). The .cu route would carry the same static
# libraries and need nvcc, a host compiler and Abseil's headers on the GPU machine, and spend its
# device time compiling. The script prints one executable's size, all of them and the archive,
# and fails naming the sizes if the bundle is over --max-mib (then pass fewer --models or --bench
# entries, or --train-subset).
#
# The CPU reference of the agreement check is computed on the GPU machine by the CPU executables
# carried here, from the batch made here: the full step output of resnet18 (11.2 M parameters)
# and deep_mlp (16.7 M) is 180 to 270 MB (gradients, weights, momentum), far over what travels.
# The CPU step is still run here for every example (init, then step on the same batch), as a
# check of the executables and the batch before device time is spent; the SHA-256 of the initial
# weights and the loss are recorded so that the suite can report whether the CPU executable
# gives the same there.
#
# --target cpu packs CPU executables in place of the CUDA ones (no GPU needed anywhere): the
# bundle then checks the suite and the benchmark plumbing with `run_gpu_suite.py --host-run`.
# --train-subset N carries only the first N training examples (as .gz IDX files) to save space.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

out=build/gpu-bundle
max_mib=60
models=""
# Half-precision variants the suite checks as it checks every model: MODEL=P[,P...].
precisions="mlp=bf16,f16 cnn=bf16,f16 transformer=bf16"
bench="mlp=2048 cnn=1024 resnet18=512 transformer=1024"
target=cuda
train_subset=""
cairn=${CAIRN:-$root/build/bin/cairn}
python=${PYTHON:-/usr/bin/python3}
fashion=${FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
# The agreement check's batch where it is not the model's own (check_step_agreement.py's).
# The benchmark's recomputation budgets, as fractions of the plain arena.
recompute_fractions="0.5 0.33"
declare -A agree_batch=([resnet18]=8 [transformer]=8 [deep_mlp]=8)
init_seed=1
step_seed=5

while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --max-mib) max_mib=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --bench) bench=$2; shift 2 ;;
    --precisions) precisions=$2; shift 2 ;;
    --target) target=$2; shift 2 ;;
    --train-subset) train_subset=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-bundle: unknown argument '$1' (see --help)" >&2; exit 1 ;;
  esac
done

die() { echo "gpu-bundle: error: $*" >&2; exit 1; }
[[ "$target" == cuda || "$target" == cpu ]] || die "--target must be cuda or cpu, not '$target'"
[[ -x "$cairn" ]] || die "$cairn not found: build Cairn first (bash scripts/build.sh)"
[[ -x "$python" ]] || die "$python not found (set PYTHON=...)"
"$python" -c "import numpy" 2>/dev/null || die "$python has no numpy"
fashion_files=(train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz
               t10k-labels-idx1-ubyte.gz)
for f in "${fashion_files[@]}"; do
  [[ -f "$fashion/$f" ]] \
    || die "$fashion/$f not found (Debian's dataset-fashion-mnist, or set FASHION_MNIST=DIR)"
done
if [[ -z "$models" ]]; then
  models=$(cd examples && ls *.cairn | sed 's/\.cairn$//' | tr '\n' ' ')
fi
for m in $models; do [[ -f examples/$m.cairn ]] || die "examples/$m.cairn not found"; done
# The suite's entries: each model, then each half-precision variant as MODEL-PRECISION.
entries=""
for m in $models; do entries+="$m:$m:f32 "; done
for entry in $precisions; do
  [[ "$entry" =~ ^([a-z0-9_]+)=((bf16|f16)(,(bf16|f16))*)$ ]] \
    || die "--precisions entries are MODEL=bf16|f16[,...], not '$entry'"
  m=${BASH_REMATCH[1]}
  [[ -f examples/$m.cairn ]] || die "--precisions: examples/$m.cairn not found"
  for p in ${BASH_REMATCH[2]//,/ }; do entries+="$m-$p:$m:$p "; done
done
for entry in $bench; do
  [[ "$entry" =~ ^([a-z0-9_]+)=([0-9]+)$ ]] || die "--bench entries are MODEL=BATCH, not '$entry'"
  [[ -f examples/${BASH_REMATCH[1]}.cairn ]] || die "--bench: examples/${BASH_REMATCH[1]}.cairn not found"
done
if [[ "$target" == cuda ]] && ! "$cairn" --version 2>&1 | grep -q 'targets:.*cuda'; then
  die "$cairn does not build for --target cuda: configure with CAIRN_ENABLE_CUDA (nvcc found) and rebuild"
fi

# Work in a staging folder next to the output; the output is replaced only at the end.
stage=$(mktemp -d "${out%/}.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/payload/bin/cpu" "$stage/payload/lib" "$stage/bundle/ref" "$stage/meta/cpu" \
         "$stage/bundle/data/fashion-mnist" "$stage/bundle/bench" "$stage/bundle/reference" \
         "$stage/bundle/examples" "$stage/work"
log=$stage/build.log
target_flags=(--target "$target")

# budget MODEL FRACTION [cairn plan flags...]: prints the --memory-budget in bytes that is
# FRACTION of the model's --no-recompute arena, or the smallest arena recomputation reaches
# where that is larger (test/tools/Inputs/memory_budget.py).
budget() {
  local model=$1 fraction=$2
  shift 2
  "$python" "$root/test/tools/Inputs/memory_budget.py" --cairn "$cairn" \
    "examples/$model.cairn" "$fraction" "$@" \
    || die "the --memory-budget at $fraction of examples/$model.cairn's arena: cairn plan failed"
}

# build NAME MODEL [cairn build flags...]: payload/bin/NAME and its memory plan in meta/NAME.plan.
build() {
  local name=$1 model=$2
  shift 2
  local start=$SECONDS
  if ! "$cairn" build "examples/$model.cairn" "$@" -o "$stage/payload/bin/$name" \
       --memory-report "$stage/meta/$name.report.json" >>"$log" 2>&1; then
    tail -30 "$log" >&2
    die "cairn build examples/$model.cairn $* failed (above)"
  fi
  "$python" "$root/test/gpu/gpu_common.py" plan-summary --report "$stage/meta/$name.report.json" \
    > "$stage/meta/$name.plan"
  rm "$stage/meta/$name.report.json"
  printf '  %-28s %8s bytes  (%ds)\n' "bin/$name" "$(stat -c %s "$stage/payload/bin/$name")" \
    $((SECONDS - start))
}

echo "gpu-bundle: $target executables for: $models; half precision: $precisions; benchmark: $bench"
for entry in $entries; do
  IFS=: read -r name m precision <<< "$entry"
  pf=()
  [[ "$precision" == f32 ]] || pf=(--precision "$precision")
  echo "$m $precision" > "$stage/meta/$name.variant"
  "$cairn" check "examples/$m.cairn" --json > "$stage/meta/$name.check.json"
  default=$("$python" -c "import json,sys; print(json.load(open(sys.argv[1]))['batch'])" \
            "$stage/meta/$name.check.json")
  agree=${agree_batch[$m]:-$default}
  "$cairn" check "examples/$m.cairn" --json --batch "$agree" > "$stage/meta/$name.agree.json"
  build "$name" "$m" "${target_flags[@]}" "${pf[@]}"
  build "$name-noreuse" "$m" "${target_flags[@]}" "${pf[@]}" --no-reuse
  # Recomputation at half the plain arena: the suite's bit-identity check trains it too.
  recompute=$(budget "$m" 0.5 "${target_flags[@]}" "${pf[@]}")
  build "$name-recompute" "$m" "${target_flags[@]}" "${pf[@]}" --memory-budget "$recompute"
  echo "$recompute" > "$stage/meta/$name.recompute"
  if [[ "$agree" != "$default" ]]; then
    build "$name-b$agree" "$m" "${target_flags[@]}" "${pf[@]}" --batch "$agree"
  fi
  build "cpu/$name-b$agree" "$m" --target cpu "${pf[@]}" --batch "$agree"
  # A half entry's float32 CPU step too: how far half's own rounding moves each tensor.
  if [[ "$precision" != f32 && ! -f "$stage/payload/bin/cpu/$m-b$agree" ]]; then
    build "cpu/$m-b$agree" "$m" --target cpu --batch "$agree"
  fi
  echo "$default $agree" > "$stage/meta/$name.batches"

  # The CPU reference step, here: init, the batch, one step.
  mkdir -p "$stage/bundle/ref/$name"
  cpu=$stage/payload/bin/cpu/$name-b$agree
  "$cpu" init --seed $init_seed --save "$stage/work/$name-init.safetensors" >>"$log" 2>&1 \
    || die "$cpu init failed (see $log)"
  "$python" "$root/test/gpu/gpu_common.py" make-batch --check-json "$stage/meta/$name.agree.json" \
    --out "$stage/bundle/ref/$name/batch.safetensors"
  "$cpu" step --load "$stage/work/$name-init.safetensors" \
    --batch "$stage/bundle/ref/$name/batch.safetensors" \
    --out "$stage/work/$name-cpu.safetensors" --seed $step_seed >>"$log" 2>&1 \
    || { tail -20 "$log" >&2; die "$cpu step failed"; }
  sha256sum "$stage/work/$name-init.safetensors" | cut -d' ' -f1 > "$stage/meta/$name.init.sha256"
  "$python" "$root/test/gpu/gpu_common.py" summarize-step --out "$stage/work/$name-cpu.safetensors" \
    > "$stage/meta/$name.step.json"
  rm -f "$stage/work/$name-"*.safetensors
done
for entry in $bench; do
  m=${entry%=*}; b=${entry#*=}
  "$cairn" check "examples/$m.cairn" --json --batch "$b" > "$stage/meta/$m-bench-b$b.check.json"
  build "$m-bench-b$b" "$m" "${target_flags[@]}" --batch "$b"
  # The step-time cost of recomputation: budgets of 1/2 and 1/3 of the plain arena.
  : > "$stage/meta/$m-bench-b$b.recompute"
  for fraction in $recompute_fractions; do
    r=$(budget "$m" "$fraction" "${target_flags[@]}" --batch "$b")
    build "$m-bench-b$b-budget-$fraction" "$m" "${target_flags[@]}" --batch "$b" --memory-budget "$r"
    echo "$fraction $r" >> "$stage/meta/$m-bench-b$b.recompute"
  done
  # Its half-precision builds (--precisions), timed against PyTorch's autocast.
  : > "$stage/meta/$m-bench-b$b.half"
  for entry in $precisions; do
    [[ "${entry%%=*}" == "$m" ]] || continue
    for p in $(echo "${entry#*=}" | tr ',' ' '); do
      build "$m-bench-b$b-$p" "$m" "${target_flags[@]}" --batch "$b" --precision "$p"
      echo "$p" >> "$stage/meta/$m-bench-b$b.half"
    done
  done
done
if [[ "$target" == cuda ]]; then
  for tests in cairn-cuda-kernel-tests cairn-cuda-collective-tests; do
    if [[ -x build/test/unit/cuda/$tests ]]; then
      cp "build/test/unit/cuda/$tests" "$stage/payload/bin/"
      echo "  bin/$tests     $(stat -c %s "build/test/unit/cuda/$tests") bytes"
    else
      echo "  (no build/test/unit/cuda/$tests: the suite will report it as skipped)"
    fi
  done
fi

# Libraries the executables load that are neither the C/C++ runtime (every Linux has those)
# nor CUDA's (the GPU machine's): carried in lib/, found there through LD_LIBRARY_PATH.
for exe in "$stage"/payload/bin/* "$stage"/payload/bin/cpu/*; do
  [[ -f "$exe" ]] || continue
  ldd "$exe" | awk '/=>/ && $3 ~ /^\// {print $1, $3}' | while read -r soname path; do
    case "$soname" in
      libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libstdc++.so*|libgcc_s.so*) ;;
      libcuda.so*|libcudart.so*|libcublas*|libcudnn*|libnvrtc*|libnvJitLink*) ;;
      # NCCL (218 MB) is the GPU machine's too: its nvidia-nccl wheel.
      libnccl.so*) ;;
      *) [[ -f "$stage/payload/lib/$soname" ]] || cp -L "$path" "$stage/payload/lib/$soname" ;;
    esac
  done
done
if ldd "$stage"/payload/bin/* 2>/dev/null | grep -q "not found"; then
  ldd "$stage"/payload/bin/* | grep -B20 "not found" | grep -E "^/|not found" >&2 || true
  echo "gpu-bundle: note: some libraries are not found here (listed above); the suite looks" \
       "for them on the GPU machine" >&2
fi

# The payload: one solid xz archive (the executables share most of their bytes).
echo "gpu-bundle: packing the executables"
one_exe=$stage/payload/bin/$(echo $models | cut -d' ' -f1)
one_size=$(stat -c %s "$one_exe")
raw_size=$(du -sb "$stage/payload" | cut -f1)
exe_count=$(find "$stage/payload/bin" -type f | wc -l)
tar -C "$stage/payload" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - bin lib \
  | xz -9 -T1 > "$stage/bundle/payload.tar.xz"
packed_size=$(stat -c %s "$stage/bundle/payload.tar.xz")
# The newest glibc and libstdc++ symbol versions anything in the payload asks for: the GPU
# machine's must be at least these.
needs=$(find "$stage/payload" -type f -exec objdump -T {} + 2>/dev/null \
  | grep -o 'GLIBC_[0-9.]*\|GLIBCXX_[0-9.]*' | sort -t_ -k1,1 -k2,2V | awk -F_ '
    { newest[$1] = $2 } END { printf "glibc %s, libstdc++ GLIBCXX_%s", newest["GLIBC"], newest["GLIBCXX"] }')

# Data, reference scripts, model files, the suite and the benchmark.
if [[ -n "$train_subset" ]]; then
  "$python" - "$fashion" "$stage/bundle/data/fashion-mnist" "$train_subset" <<'EOF'
import gzip, shutil, struct, sys
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for name, header in (("train-images-idx3-ubyte.gz", 16), ("train-labels-idx1-ubyte.gz", 8)):
    data = gzip.open(f"{src}/{name}").read()
    dims = data[3]
    shape = list(struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims]))
    per = 1
    for d in shape[1:]:
        per *= d
    shape[0] = min(n, shape[0])
    out = data[:4] + struct.pack(">" + "I" * dims, *shape) + data[header:header + shape[0] * per]
    with gzip.open(f"{dst}/{name}", "wb", compresslevel=9) as f:
        f.write(out)
for name in ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
    shutil.copy(f"{src}/{name}", f"{dst}/{name}")
EOF
else
  for f in "${fashion_files[@]}"; do cp "$fashion/$f" "$stage/bundle/data/fashion-mnist/"; done
fi
cp test/reference/check_step_agreement.py test/reference/philox.py test/reference/pytorch_models.py \
   "$stage/bundle/reference/"
cp examples/*.cairn "$stage/bundle/examples/"
cp test/gpu/run_gpu_suite.py test/gpu/gpu_common.py "$stage/bundle/"
cp bench/gpu/bench.py bench/gpu/run.sh bench/gpu/profile.sh "$stage/bundle/bench/"

# The manifest.
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git status --porcelain --untracked-files=no 2>/dev/null | grep -v ' bench/results/' | head -1 || true)
"$python" - "$stage" "$target" "$commit" "${dirty:+yes}" "$("$cairn" --version)" \
  "$one_size" "$raw_size" "$exe_count" "$packed_size" "$bench" "$init_seed" "$step_seed" \
  "$train_subset" "$needs" $(for e in $entries; do echo "${e%%:*}"; done) <<'EOF'
import datetime, hashlib, json, os, platform, sys
(stage, target, commit, dirty, version, one, raw, count, packed, bench, init_seed, step_seed,
 subset, needs, *models) = sys.argv[1:]
meta = os.path.join(stage, "meta")
def load(name):
    with open(os.path.join(meta, name)) as f:
        return json.load(f)
def plan(name):
    return load(name + ".plan")
bench_entries = [e.split("=") for e in bench.split()]
manifest = {
    "commit": commit + (" with uncommitted changes" if dirty else ""),
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    "cairn": version, "target": target, "built_on": platform.node(),
    "init_seed": int(init_seed), "step_seed": int(step_seed),
    "train_subset": int(subset) if subset else None, "needs": needs,
    "payload": {"sha256": hashlib.sha256(
                    open(os.path.join(stage, "bundle", "payload.tar.xz"), "rb").read()).hexdigest(),
                "one_executable_bytes": int(one), "unpacked_bytes": int(raw),
                "files": int(count), "packed_bytes": int(packed)},
    "kernel_tests": ("bin/cairn-cuda-kernel-tests" if os.path.exists(
        os.path.join(stage, "payload", "bin", "cairn-cuda-kernel-tests")) else None),
    "collective_tests": ("bin/cairn-cuda-collective-tests" if os.path.exists(
        os.path.join(stage, "payload", "bin", "cairn-cuda-collective-tests")) else None),
    "models": {}, "bench": {},
}
for m in models:
    source, precision = open(os.path.join(meta, m + ".variant")).read().split()
    default, agree = open(os.path.join(meta, m + ".batches")).read().split()
    check, check_agree = load(m + ".check.json"), load(m + ".agree.json")
    image = next(i for i in check["inputs"] if i["dtype"].startswith("f"))
    agree_exe = f"bin/{m}" if agree == default else f"bin/{m}-b{agree}"
    manifest["models"][m] = {
        "source": f"examples/{source}.cairn", "model": check["model"],
        "base": source, "precision": precision,
        "parameters": check["parameters"], "optimizer": check["optimizer"],
        "batch": int(default), "agree_batch": int(agree),
        "image_shape": image["shape"][1:], "inputs": check["inputs"],
        "agree_inputs": check_agree["inputs"],
        "exe": {"normal": f"bin/{m}", "noreuse": f"bin/{m}-noreuse", "agree": agree_exe,
                "cpu_agree": f"bin/cpu/{m}-b{agree}", "recompute": f"bin/{m}-recompute",
                "cpu_agree_f32": f"bin/cpu/{source}-b{agree}"},
        "recompute_budget": int(open(os.path.join(meta, m + ".recompute")).read()),
        "plan": {"normal": plan(m), "noreuse": plan(m + "-noreuse"),
                 "recompute": plan(m + "-recompute"),
                 "agree": plan(agree_exe[4:]), "cpu_agree": plan(f"cpu/{m}-b{agree}")},
        "ref": {"batch": f"ref/{m}/batch.safetensors",
                "init_sha256": open(os.path.join(meta, m + ".init.sha256")).read().strip(),
                "cpu_step": load(m + ".step.json")},
    }
for m, b in bench_entries:
    check = load(f"{m}-bench-b{b}.check.json")
    image = next(i for i in check["inputs"] if i["dtype"].startswith("f"))
    manifest["bench"][m] = {"batch": int(b), "exe": f"bin/{m}-bench-b{b}",
                            "plan": plan(f"{m}-bench-b{b}"), "image_shape": image["shape"][1:],
                            "source": f"examples/{m}.cairn", "optimizer": check["optimizer"],
                            "recompute": []}
    for line in open(os.path.join(meta, f"{m}-bench-b{b}.recompute")).read().split("\n"):
        if line.strip():
            fraction, budget = line.split()
            name = f"{m}-bench-b{b}-budget-{fraction}"
            manifest["bench"][m]["recompute"].append(
                {"fraction": float(fraction), "budget": int(budget), "exe": f"bin/{name}",
                 "plan": plan(name)})
    manifest["bench"][m]["half"] = [
        {"precision": p, "exe": f"bin/{m}-bench-b{b}-{p}", "plan": plan(f"{m}-bench-b{b}-{p}")}
        for p in open(os.path.join(meta, f"{m}-bench-b{b}.half")).read().split()]
with open(os.path.join(stage, "bundle", "MANIFEST.json"), "w") as f:
    json.dump(manifest, f, indent=1)
    f.write("\n")
EOF

total=$(du -sb "$stage/bundle" | cut -f1)
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
echo "gpu-bundle: one executable $(mib "$one_size"); $exe_count executables with the libraries" \
     "$(mib "$raw_size") unpacked, $(mib "$packed_size") as payload.tar.xz"
echo "gpu-bundle: data $(mib "$(du -sb "$stage/bundle/data" | cut -f1)"), bundle $(mib "$total")" \
     "(limit $max_mib MiB); the GPU machine needs $needs or newer"
if (( total > max_mib * 1048576 )); then
  die "the bundle is $(mib "$total"), over --max-mib $max_mib: pass fewer --models or --bench" \
      "entries, or --train-subset N"
fi
rm -rf "$out"
mv "$stage/bundle" "$out"
echo "gpu-bundle: wrote $out ($(mib "$total")); on the GPU machine: python3 $out/run_gpu_suite.py --out DIR"
