#!/usr/bin/env bash
# Plans the eleven MiniMalloc "challenging" instances (A..K, capacity
# 1,048,576) with `cairn plan` and writes bench/results/minimalloc-<date>.md.
#
#   bench/minimalloc/run.sh [DATA_DIR] [CAIRN]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
data=${1:-$root/../shared/bench-data/minimalloc-challenging}
cairn=${2:-$root/build/bin/cairn}
capacity=1048576
date=$(date +%Y-%m-%d)
out=$root/bench/results/minimalloc-$date.md
mkdir -p "$root/bench/results"

field() { sed -n "s/^$1: \([^ ]*\).*/\1/p" <<<"$2"; }

{
  echo "# MiniMalloc challenging instances: \`cairn plan\`"
  echo
  echo "- command: \`build/bin/cairn plan --buffers $data/X.$capacity.csv\` (default --time-limit 1)"
  echo "- machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$([ -n "$(git -C "$root" status --porcelain --untracked-files=no -- . ':!bench/results' 2>/dev/null)" ] && echo " with uncommitted changes")"
  echo "- capacity to fit: $capacity bytes; time is the planner's own (greedy + exact search)"
  echo
  echo "| instance | buffers | lower bound | greedy arena | final arena | ratio | method | fits | time (s) |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: |"
  fits=0 total=0
  for f in "$data"/*.csv; do
    name=$(basename "$f" .csv); name=${name%%.*}
    report=$("$cairn" plan --buffers "$f")
    arena=$(field arena "$report")
    fit=no; [ "$arena" -le $capacity ] && { fit=yes; fits=$((fits + 1)); }
    total=$((total + 1))
    echo "| $name | $(field buffers "$report") | $(field 'lower bound' "$report") |" \
         "$(field 'greedy arena' "$report") | $arena | $(field ratio "$report") |" \
         "$(field method "$report") | $fit | $(field time "$report") |"
  done
  echo
  echo "$fits of $total fit $capacity bytes."
} > "$out"
cat "$out"
