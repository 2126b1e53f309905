"""What every bench result file records about where it came from: the commit (and whether
tracked files other than bench/results had changes) and the CPU. Imported by the bench
scripts in the folders next to this file."""

import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def commit():
    """The short commit, and whether tracked files (results aside) have changes."""
    git = ["git", "-C", ROOT]
    head = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(git + ["status", "--porcelain", "--untracked-files=no", "--", ".",
                                  ":!bench/results"], capture_output=True, text=True).stdout
    return head + (" with uncommitted changes" if dirty.strip() else "")


def cpu_name():
    """The first `model name` of /proc/cpuinfo."""
    with open("/proc/cpuinfo") as f:
        names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
    return names[0] if names else "unknown CPU"
