#!/usr/bin/python3
"""Compare `cairn check EXAMPLE --json` with the PyTorch models of pytorch_models.py.

For every example this checks that Cairn's trainable parameter count, buffer element count
and full state_dict (names in PyTorch's order, shapes, param/buffer kind, dtype) equal
PyTorch's. Prints a table and exits 1 on any mismatch, 0 when everything agrees.

  /usr/bin/python3 test/reference/check_param_counts.py --cairn build/bin/cairn \
      --examples examples [--batch 32] [mlp cnn ...]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

try:
    import torch
except ImportError:  # no torch on this machine: tell ctest to count the test as skipped
    print("check_param_counts: torch is not installed (apt-get install python3-torch); skipped")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_models import (MODELS, RESNET18_PARAMS, model_file, buffer_count, param_count,  # noqa: E402
                            state_dict_entries)


def run_cairn(cairn, path, batch):
    """Runs `cairn check PATH --json`; returns (json object or None, error text)."""
    cmd = [cairn, "check", path, "--json"]
    if batch is not None:
        cmd += ["--batch", str(batch)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"{' '.join(cmd)}: {e}"
    if proc.returncode != 0:
        return None, (f"{' '.join(cmd)} exited with {proc.returncode}\n"
                      f"{proc.stderr.rstrip()}")
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        return None, f"{' '.join(cmd)}: stdout is not one JSON object ({e}):\n{proc.stdout[:2000]}"
    if not isinstance(report, dict):
        return None, f"{' '.join(cmd)}: stdout is JSON but not an object"
    return report, ""


def normalize(entry):
    """One state_dict entry as a comparable tuple (name, shape, kind, dtype)."""
    return (entry.get("name"), [int(d) for d in entry.get("shape", [])],
            entry.get("kind"), entry.get("dtype"))


def compare_state_dicts(cairn_sd, torch_sd):
    """Returns a list of human-readable differences (empty when equal)."""
    problems = []
    c = [normalize(e) for e in cairn_sd]
    t = [normalize(e) for e in torch_sd]
    c_names = [e[0] for e in c]
    t_names = [e[0] for e in t]
    missing = [n for n in t_names if n not in set(c_names)]
    extra = [n for n in c_names if n not in set(t_names)]
    if missing:
        problems.append(f"missing in cairn ({len(missing)}): {', '.join(missing[:10])}")
    if extra:
        problems.append(f"not in torch ({len(extra)}): {', '.join(extra[:10])}")
    if not missing and not extra and c_names != t_names:
        i = next(i for i, (a, b) in enumerate(zip(c_names, t_names)) if a != b)
        problems.append(f"order differs at entry {i}: cairn {c_names[i]!r}, torch {t_names[i]!r}")
    by_name = {e[0]: e for e in c}
    for name, shape, kind, dtype in t:
        if name not in by_name:
            continue
        _, c_shape, c_kind, c_dtype = by_name[name]
        if (c_shape, c_kind, c_dtype) != (shape, kind, dtype):
            problems.append(f"{name}: cairn {c_kind} {c_dtype} {c_shape}, "
                            f"torch {kind} {dtype} {shape}")
    return problems


def check_one(name, args):
    """Checks one example; returns (row for the table, list of problems)."""
    ctor, _ = MODELS[name]
    model = ctor()
    t_params = param_count(model)
    if name == "resnet18" and t_params != RESNET18_PARAMS:
        return [name, "-", f"{t_params:,}"], [f"PyTorch ResNet-18 has {t_params:,} parameters, "
                                              f"expected {RESNET18_PARAMS:,}"]
    path = model_file(name, args.examples)
    if name == "transformer12":
        # The 12-layer encoder is the 4-layer example with one constant changed.
        with open(os.path.join(args.examples, "transformer.cairn")) as f:
            text = f.read()
        text, n = re.subn(r"^(\s*)depth = 4\b", r"\1depth = 12", text, flags=re.M)
        if n != 1:
            return [name, "-", f"{t_params:,}"], ["transformer.cairn has no single 'depth = 4' line"]
        with tempfile.NamedTemporaryFile("w", suffix=".cairn", delete=False) as f:
            f.write(text)
            path = f.name
    try:
        report, error = run_cairn(args.cairn, path, args.batch)
    finally:
        if name == "transformer12":
            os.unlink(path)
    if report is None:
        return [name, "-", f"{t_params:,}"], [error]

    problems = []
    c_params = report.get("parameters")
    if c_params != t_params:
        problems.append(f"parameters: cairn {c_params}, torch {t_params}")
    t_buffers = buffer_count(model)
    if report.get("buffers") != t_buffers:
        problems.append(f"buffers (elements): cairn {report.get('buffers')}, torch {t_buffers}")
    if args.batch is not None and report.get("batch") != args.batch:
        problems.append(f"batch: cairn {report.get('batch')}, asked for {args.batch}")
    sd = report.get("state_dict")
    if not isinstance(sd, list):
        problems.append("no \"state_dict\" list in cairn's JSON")
    else:
        problems += compare_state_dicts(sd, state_dict_entries(model))
    c_text = f"{c_params:,}" if isinstance(c_params, int) else repr(c_params)
    return [name, c_text, f"{t_params:,}"], problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", default=list(MODELS),
                    help=f"examples to check (default: {' '.join(MODELS)})")
    ap.add_argument("--cairn", default="build/bin/cairn", help="path of the cairn binary")
    ap.add_argument("--examples", default="examples", help="folder of the .cairn examples")
    ap.add_argument("--batch", type=int, help="passed on as `cairn check --batch N`")
    args = ap.parse_args()
    unknown = [m for m in args.models if m not in MODELS]
    if unknown:
        ap.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")

    rows, details = [], []
    for name in args.models:
        row, problems = check_one(name, args)
        rows.append(row + ["OK" if not problems else "FAIL"])
        if problems:
            details.append(f"{name}: FAIL")
            details += ["  " + p.replace("\n", "\n  ") for p in problems]
    failed = sum(r[-1] == "FAIL" for r in rows)

    header = ["model", "cairn", "torch", "result"]
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    for r in [header] + rows:
        print("  ".join(str(v).ljust(w) if i == 0 else str(v).rjust(w)
                        for i, (v, w) in enumerate(zip(r, widths))))
    if details:
        print("\n" + "\n".join(details))
    print(f"{len(rows) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
