#!/usr/bin/env bash
# Makes a benchmark's Python environment from PyPI, once:
#
#   bench/make-venv.sh VENV REQUIREMENTS MODULE
#
# creates VENV (with Debian's /usr/bin/python3, no system packages) and installs REQUIREMENTS
# into it, unless VENV already holds them: a copy of REQUIREMENTS in VENV stamps what it was
# made from, and MODULE must import.
set -euo pipefail
venv=$1 requirements=$2 module=$3
stamp=$venv/.cairn-bench-requirements
if ! cmp -s "$requirements" "$stamp" 2>/dev/null || ! "$venv/bin/python" -c "import $module" 2>/dev/null; then
  echo "bench: installing $(grep -v '^#' "$requirements" | tr '\n' ' ')into $venv" >&2
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"
  cp "$requirements" "$stamp"
fi
