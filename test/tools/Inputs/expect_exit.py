"""expect_exit.py CODE COMMAND...: runs COMMAND, passes its stdout and stderr through, and
exits 0 when COMMAND exited with CODE, 1 (saying so) otherwise."""
import subprocess
import sys

code = int(sys.argv[1])
result = subprocess.run(sys.argv[2:])
if result.returncode != code:
    print(f"expect_exit: expected exit code {code}, got {result.returncode}", file=sys.stderr)
    sys.exit(1)
