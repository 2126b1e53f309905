#!/usr/bin/env bash
# Installs what is missing, builds, then compiles every example with `cairn check` and prints
# its summary. Exits non-zero if any example fails.
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
