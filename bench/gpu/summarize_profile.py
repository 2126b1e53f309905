"""Summarises bench/gpu/profile.sh's CSVs: per executable, GPU time per step and the ten
kernels that take the most of it (Markdown tables, as in bench/results/gpu-profile-DATE.md).

    python3 bench/gpu/summarize_profile.py DIR/EXE-ncu.csv... [--steps 4]
"""
import argparse
import collections
import csv
import os

UNITS = {"nsecond": 1, "ns": 1, "usecond": 1e3, "us": 1e3, "msecond": 1e6, "ms": 1e6,
         "second": 1e9, "s": 1e9}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("csvs", nargs="+")
    parser.add_argument("--steps", type=int, default=4)
    args = parser.parse_args()
    for path in args.csvs:
        rows = [r for r in csv.reader(open(path)) if len(r) > 5]
        header, rows = rows[0], rows[1:]
        name_at, value_at = header.index("Kernel Name"), header.index("Metric Value")
        unit_at = header.index("Metric Unit")
        total, calls = collections.Counter(), collections.Counter()
        for r in rows:
            ns = float(r[value_at].replace(",", "")) * UNITS[r[unit_at]]
            name = r[name_at].split("(")[0][:80]
            total[name] += ns
            calls[name] += 1
        whole = sum(total.values())
        exe = os.path.basename(path).replace("-ncu.csv", "")
        print(f"## {exe}: {len(rows)} kernels, {whole / args.steps / 1e6:.2f} ms of GPU time "
              f"per step\n")
        print(f"| kernel | calls | ms ({args.steps} steps) | share |\n| --- | --- | --- | --- |")
        for name, ns in total.most_common(10):
            print(f"| `{name}` | {calls[name]} | {ns / 1e6:.2f} | {100 * ns / whole:.1f}% |")
        print()


if __name__ == "__main__":
    main()
