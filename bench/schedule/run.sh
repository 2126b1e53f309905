#!/usr/bin/env bash
# Measures the memory-aware schedule (codegen/MemoryAwareSchedule.h): plans
# every example at batch 64 and 256 in the lowered order (`--no-reorder`) and
# in the memory-aware order (the default), and writes the lower bounds and
# arenas to bench/results/schedule-<date>.md.
#
#   bench/schedule/run.sh [CAIRN]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cairn=${1:-$root/build/bin/cairn}
date=$(date +%Y-%m-%d)
out=$root/bench/results/schedule-$date.md
mkdir -p "$root/bench/results"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for model in mlp cnn deep_mlp transformer resnet18; do
  for batch in 64 256; do
    "$cairn" plan "$root/examples/$model.cairn" --batch "$batch" --no-reorder \
      --memory-report "$tmp/$model-$batch-lowered.json" > /dev/null
    "$cairn" plan "$root/examples/$model.cairn" --batch "$batch" \
      --memory-report "$tmp/$model-$batch-reordered.json" > /dev/null
  done
done

{
  echo "# Memory-aware schedule: lower bound and arena, lowered order vs reordered"
  echo
  echo "- command: \`build/bin/cairn plan examples/X.cairn --batch N --memory-report R.json\`, with and without \`--no-reorder\` (\`bench/schedule/run.sh\`)"
  echo "- machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$([ -n "$(git -C "$root" status --porcelain --untracked-files=no -- . ':!bench/results' 2>/dev/null)" ] && echo " with uncommitted changes")"
  echo "- each cell: lowered order -> memory-aware order. \"Before in-place\" is the lower bound the"
  echo "  order is chosen by (the most bytes live at one kernel, nothing written in place); the lower"
  echo "  bound and the arena are the plan's (in place over dying inputs, then the planner)."
  echo
  python3 - "$tmp" <<'EOF'
import json, os, sys
tmp = sys.argv[1]
MiB = 1 << 20
def mib(x): return f"{x / MiB:.2f}"
def change(a, b): return f"{100.0 * (a - b) / b:+.1f}%"
print("| model | batch | lower bound before in-place (MiB) | lower bound (MiB) | arena (MiB) | arena change | kernels moved |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for model in ["mlp", "cnn", "deep_mlp", "transformer", "resnet18"]:
    for batch in [64, 256]:
        def load(order):
            with open(os.path.join(tmp, f"{model}-{batch}-{order}.json")) as f:
                return json.load(f)["devices"][0]
        b, a = load("lowered"), load("reordered")
        kept = "" if a["schedule_order"] == "memory-aware" else " (lowered order kept)"
        print(f"| {model} | {batch} "
              f"| {mib(a['schedule_lower_bound_before_bytes'])} -> "
              f"{mib(a['schedule_lower_bound_after_bytes'])} "
              f"({change(a['schedule_lower_bound_after_bytes'], a['schedule_lower_bound_before_bytes'])}) "
              f"| {mib(b['lower_bound_bytes'])} -> {mib(a['lower_bound_bytes'])} "
              f"| {mib(b['arena_bytes'])} -> {mib(a['arena_bytes'])} "
              f"| {change(a['arena_bytes'], b['arena_bytes'])} "
              f"| {a['schedule_moved_kernels']}{kept} |")
EOF
} > "$out"
echo "wrote $out"
