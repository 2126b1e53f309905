#!/usr/bin/env bash
# Usage: test/fuzz/run-fuzzer.sh FUZZER_BINARY SECONDS
#
# (a) Runs FUZZER_BINARY once over every file in test/fuzz/regressions/ (each
#     must not crash), then (b) fuzzes for SECONDS seconds from a fresh
#     temporary corpus seeded with examples/*.cairn, test/frontend/*.cairn
#     (split at `# -----` lines) and the regressions. Exits non-zero on any
#     crash, sanitizer report, timeout or OOM, printing the input and the
#     command that reproduces it. Crash inputs are kept in
#     $CAIRN_FUZZ_ARTIFACTS (default: fuzz-artifacts/ next to the binary's bin/).
#     Exit status: 0 clean, 1 a finding, 2 usage, 77 no fuzzer binary (skip).
set -uo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 FUZZER_BINARY SECONDS" >&2
  exit 2
fi
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
fuzzer="$1"
seconds="$2"
[[ "$fuzzer" = /* ]] || fuzzer="$root/$fuzzer"
if [[ ! -x "$fuzzer" ]]; then
  echo "run-fuzzer: SKIPPED: no fuzzer binary at $fuzzer (build it with scripts/build-fuzz.sh)" >&2
  exit 77
fi

artifacts="${CAIRN_FUZZ_ARTIFACTS:-$(dirname "$(dirname "$fuzzer")")/fuzz-artifacts}"
mkdir -p "$artifacts"
artifacts="$(cd "$artifacts" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/cairn-fuzz.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# Leaks: only MLIR-internal singletons are suppressed (see lsan.supp).
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1:strict_string_checks=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$here/lsan.supp:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
common=(-timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1)

report_crash() { # LOG COMMAND-PREFIX
  local log="$1"; shift
  local unit
  unit="$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)"
  echo "run-fuzzer: FAILED ($(grep -m1 -oE 'ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|libFuzzer): [a-zA-Z-]+|runtime error: .*|SUMMARY: .*' "$log" || echo "see log"))"
  if [[ -n "$unit" ]]; then
    echo "run-fuzzer: crash input: $unit"
    echo "run-fuzzer: reproduce:   $fuzzer $unit"
    echo "run-fuzzer: minimize:    $fuzzer -minimize_crash=1 -runs=20000 -exact_artifact_path=$unit.min $unit"
  fi
}

# (a) Regressions: each file runs once, in its own process (libFuzzer does not
# enforce -timeout when it runs files, so `timeout` does).
regressions=()
for f in "$here"/regressions/*; do
  [[ -f "$f" && "$(basename "$f")" != README* ]] && regressions+=("$f")
done
for f in "${regressions[@]}"; do
  log="$work/regression.log"
  if ! timeout -k 5 12 "$fuzzer" "${common[@]}" "$f" >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "run-fuzzer: FAILED on regression input $f (crash, sanitizer report or >12 s)"
    echo "run-fuzzer: reproduce: $fuzzer $f"
    exit 1
  fi
done
[[ ${#regressions[@]} -eq 0 ]] || echo "run-fuzzer: ${#regressions[@]} regression inputs ran clean"

# (b) A fresh bounded run from the seed corpus.
corpus="$work/corpus"
mkdir -p "$corpus"
n=0
for f in "$root"/examples/*.cairn "$root"/test/frontend/*.cairn; do
  [[ -f "$f" ]] || continue
  # Split-input files: one seed per `# -----` part.
  awk -v out="$corpus/seed-$(basename "$f" .cairn)" '
    /^# -----/ { part++; next }
    { print > (out "-" part) }' "$f"
done
for f in "${regressions[@]}"; do cp "$f" "$corpus/"; done
n="$(ls "$corpus" | wc -l)"

log="$work/fuzz.log"
"$fuzzer" "${common[@]}" -max_total_time="$seconds" \
  -dict="$here/cairn.dict" -artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1
rc=$?
execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)"
cov="$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1)"
if [[ $rc -ne 0 ]]; then
  tail -n 80 "$log"
  report_crash "$log"
  exit 1
fi
echo "run-fuzzer: OK: ${execs:-?} execs in ${seconds}s (${rate:-?} exec/s, ${cov:-cov: ?}, $n seeds)"
