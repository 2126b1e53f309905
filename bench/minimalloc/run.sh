#!/usr/bin/env bash
# Plans the eleven MiniMalloc "challenging" instances (A..K) with
# `cairn plan --capacity 1048576` (find a plan that fits, as MiniMalloc does)
# and writes bench/results/minimalloc-<date>.md. Each instance runs RUNS
# times (default 3); the table gives the median of the planner's own time.
#
#   bench/minimalloc/run.sh [DATA_DIR] [CAIRN] [MINIMALLOC]
#
# MINIMALLOC, optional, is a MiniMalloc binary (github.com/google/minimalloc,
# built outside this repository); given, it runs on the same instances in the
# same session and its time is reported side by side.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
data=${1:-$root/../shared/bench-data/minimalloc-challenging}
cairn=${2:-$root/build/bin/cairn}
minimalloc=${3:-}
runs=${RUNS:-3}
capacity=1048576
date=$(date +%Y-%m-%d)
out=$root/bench/results/minimalloc-$date.md
mkdir -p "$root/bench/results"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

field() { sed -n "s/^$1: \([^ ]*\).*/\1/p" <<<"$2"; }
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

{
  echo "# MiniMalloc challenging instances: \`cairn plan --capacity\`"
  echo
  echo "- command: \`build/bin/cairn plan --buffers $data/X.$capacity.csv --capacity $capacity\` (default --time-limit 1), $runs runs each, median"
  if [ -n "$minimalloc" ]; then
    echo "- MiniMalloc: \`$minimalloc --capacity=$capacity --input=X.$capacity.csv --output=OUT.csv --validate\` (its own \"Elapsed time\"), $runs runs each, median"
  fi
  echo "- machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), load average $(cut -d' ' -f1-3 /proc/loadavg) at the start (shared machine: times are noisy)"
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$([ -n "$(git -C "$root" status --porcelain --untracked-files=no -- . ':!bench/results' 2>/dev/null)" ] && echo " with uncommitted changes")"
  echo "- capacity to fit: $capacity bytes; time is the planner's own (greedy + exact search), without reading the file"
  echo
  if [ -n "$minimalloc" ]; then
    echo "| instance | buffers | lower bound | greedy arena | final arena | method | fits | cairn (s) | MiniMalloc fits | MiniMalloc (s) | MiniMalloc / cairn |"
    echo "| --- | ---: | ---: | ---: | ---: | --- | --- | ---: | --- | ---: | ---: |"
  else
    echo "| instance | buffers | lower bound | greedy arena | final arena | method | fits | time (s) |"
    echo "| --- | ---: | ---: | ---: | ---: | --- | --- | ---: |"
  fi
  fits=0 total=0 worst=0
  for f in "$data"/*.csv; do
    name=$(basename "$f" .csv); name=${name%%.*}
    times=()
    for ((r = 0; r < runs; ++r)); do
      report=$("$cairn" plan --buffers "$f" --capacity $capacity)
      times+=("$(field time "$report")")
    done
    time=$(printf '%s\n' "${times[@]}" | median)
    fit=$(field fits "$report")
    [ "$fit" = yes ] && fits=$((fits + 1))
    total=$((total + 1))
    worst=$(awk -v a="$worst" -v b="$time" 'BEGIN {print (b > a) ? b : a}')
    row="| $name | $(field buffers "$report") | $(field 'lower bound' "$report") | $(field 'greedy arena' "$report") | $(field arena "$report") | $(field method "$report") | $fit | $time |"
    if [ -n "$minimalloc" ]; then
      mtimes=() mfit=no
      for ((r = 0; r < runs; ++r)); do
        log=$("$minimalloc" --capacity=$capacity --input="$f" --output="$tmp/out.csv" --validate 2>&1 || true)
        mtimes+=("$(sed -n 's/.*Elapsed time \([0-9.]*\)s.*/\1/p' <<<"$log" | head -1)")
        grep -q "Validation PASS" <<<"$log" && mfit=yes
      done
      mtime=$(printf '%s\n' "${mtimes[@]}" | median)
      row="$row $mfit | $mtime | $(awk -v m="$mtime" -v c="$time" 'BEGIN {printf "%.0fx", (c > 0) ? m / c : 0}') |"
    fi
    echo "$row"
  done
  echo
  echo "$fits of $total fit $capacity bytes; the slowest took $worst s."
} > "$out"
cat "$out"
