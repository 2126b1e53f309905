"""One process per rank of a PyTorch run (data_parallel's DDP ranks, partition's pipeline
stages): started together, waited for together, killed together, their JSON results read.
Standard library only."""
import json
import os
import subprocess
import time


def tail(text, lines=5):
    """The last LINES non-empty lines of TEXT, joined, at most 600 characters."""
    kept = [line.strip() for line in text.strip().splitlines() if line.strip()][-lines:]
    return " / ".join(kept)[-600:]


def run_ranks(commands, outs, logs, env, timeout):
    """Starts commands[r] for every rank r (stdout and stderr into logs[r], its result a JSON
    object it writes to outs[r], removed first), waits for all of them at most `timeout`
    seconds from the start, and kills every rank still running then. Returns (results,
    error): results[r] is rank r's object, or {"error": its exit code and log's tail} when it
    wrote none; error joins the timeout and every rank's "error", or is None."""
    procs = []
    for command, out, log in zip(commands, outs, logs):
        if os.path.exists(out):
            os.remove(out)
        with open(log, "w") as f:
            procs.append(subprocess.Popen(command, stdout=f, stderr=subprocess.STDOUT, env=env))
    deadline = time.monotonic() + timeout
    timed_out = False
    for p in procs:
        try:
            p.wait(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
            break
    for p in procs:  # every rank ends with the run, however it ends
        if p.poll() is None:
            p.kill()
            p.wait()
    results = []
    for rank, (out, log) in enumerate(zip(outs, logs)):
        if os.path.exists(out):
            with open(out) as f:
                results.append(json.load(f))
        else:
            with open(log) as f:
                results.append({"error": f"rank {rank} exited with {procs[rank].returncode}: "
                                         f"{tail(f.read())}"})
    errors = [r["error"] for r in results if "error" in r]
    if timed_out or errors:
        return results, (f"timed out after {timeout} s; " if timed_out else "") + "; ".join(errors)
    return results, None
