#!/usr/bin/python3
"""Train with each lr schedule and gradient clipping, with Cairn and with PyTorch; compare.

For each configuration this writes a small MLP (784-16-10 on 28x28 images) whose body ends in
the configuration's `optimizer`, `scheduler` and `clip_grad_norm` lines, builds it, draws
weights (`EXE init`), and trains it for a dozen steps on a tiny data set
(test/tools/Inputs/write_tiny_dataset.py: 32 images, batch 8, so the run spans epochs) with
`EXE train --log-every 1`. PyTorch trains the same model from the same weights on the same
batches (Cairn's shuffle, philox.epoch_permutation; pixels / 255): forward, backward,
torch.nn.utils.clip_grad_norm_, optimizer.step(), scheduler.step() (SequentialLR for a warm-up
then another scheduler). Checks, per configuration:
  - the lr of every step in Cairn's log against the optimizer's lr in PyTorch (relative 1e-8:
    the log prints 9 digits);
  - the weights after the run (relative 1e-4 of the largest weight: a dozen float32 steps);
  - a run split in two, the second resuming from the first's checkpoint (`--save`, `--load`),
    logs the same lrs as the whole run from the step it resumes at.
Exits 1 on failure, 77 (skip) when torch is missing.

  /usr/bin/python3 test/reference/check_lr_schedules.py --cairn build/bin/cairn \
      --work /tmp/lr-schedules
"""
import argparse
import os
import re
import subprocess
import sys
import warnings

import numpy as np

try:
    import torch
    import torch.nn.functional as F
    from torch import nn
except ImportError:
    print("check_lr_schedules: torch is not installed (apt-get install python3-torch); skipped")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from check_step_agreement import make_optimizer, make_scheduler, model_calls, read_safetensors  # noqa: E402
from philox import epoch_permutation  # noqa: E402

TINY_DATA = os.path.join(HERE, "..", "tools", "Inputs", "write_tiny_dataset.py")
BATCH, EXAMPLES, STEPS, SEED = 8, 32, 12, 3

# name -> the model's training lines.
CONFIGS = {
    "step": ["optimizer SGD(lr=0.1, momentum=0.9)", "scheduler StepLR(step_size=3, gamma=0.5)"],
    "cosine": ["optimizer Adam(lr=0.01)", "scheduler CosineAnnealingLR(T_max=5, eta_min=0.001)"],
    "linear": ["optimizer SGD(lr=0.2)", "scheduler LinearLR()"],
    "warmup-step": ["optimizer AdamW(lr=0.02, weight_decay=0.1)",
                    "scheduler LinearLR(start_factor=0.1, total_iters=3)",
                    "scheduler StepLR(step_size=2, gamma=0.3)"],
    "warmup-cosine-clip": ["optimizer SGD(lr=0.1, momentum=0.9, nesterov=true)",
                           "scheduler LinearLR(start_factor=0.5, end_factor=0.9, total_iters=4)",
                           "scheduler CosineAnnealingLR(T_max=6)",
                           "clip_grad_norm(max_norm=0.5)"],
    "clip-inf": ["optimizer SGD(lr=0.1)", 'clip_grad_norm(max_norm=0.02, norm_type="inf")'],
}

MODEL = """model Tiny {{
  batch B = {batch}
  input image: f32[B, 1, 28, 28]
  input label: i64[B]
  fc1 = Linear(784, 16)
  fc2 = Linear(16, 10)
  forward(image) {{
    return fc2(relu(fc1(flatten(image, 1))))
  }}
  loss(image, label) {{
    return cross_entropy(self(image), label)
  }}
{lines}
}}
"""


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 16)
        self.fc2 = nn.Linear(16, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


def run(cmd):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} exited with {proc.returncode}\n"
                           f"{(proc.stdout + proc.stderr)[-3000:]}")
    return proc.stdout + proc.stderr


def logged_lrs(log):
    return [float(m) for m in re.findall(r"^epoch .* step \d+/\d+ .* lr (\S+) ", log, flags=re.M)]


def read_npy_images(directory):
    images = np.load(os.path.join(directory, "train_images.npy"))
    labels = np.load(os.path.join(directory, "train_labels.npy"))
    return (torch.from_numpy(images.astype(np.float32) / 255).reshape(-1, 1, 28, 28),
            torch.from_numpy(labels.astype(np.int64)))


def torch_run(source, weights, images, labels):
    """(lr of each step, state_dict after STEPS steps) of the PyTorch twin."""
    model = Tiny()
    model.load_state_dict(weights)
    opt = make_optimizer(source, model.parameters())
    scheduler = make_scheduler(source, opt)
    clip = model_calls(source, "clip_grad_norm")
    lrs, step, epoch = [], 0, 0
    while step < STEPS:
        order = torch.from_numpy(epoch_permutation(len(labels), SEED, epoch))
        for k in range(len(labels) // BATCH):
            if step == STEPS:
                break
            idx = order[k * BATCH:(k + 1) * BATCH]
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(model(images[idx]), labels[idx]).backward()
            for _, kwargs in clip:
                torch.nn.utils.clip_grad_norm_(model.parameters(), **kwargs)
            lrs.append(opt.param_groups[0]["lr"])
            opt.step()
            if scheduler:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # SequentialLR's deprecation notes
                    scheduler.step()
            step += 1
        epoch += 1
    return lrs, {k: v.detach() for k, v in model.state_dict().items()}


def check(name, lines, args, data, images, labels):
    work = os.path.join(args.work, name)
    os.makedirs(work, exist_ok=True)
    source, exe = os.path.join(work, "tiny.cairn"), os.path.join(work, "tiny")
    with open(source, "w") as f:
        f.write(MODEL.format(batch=BATCH, lines="\n".join("  " + line for line in lines)))
    run([args.cairn, "build", source, "-o", exe])
    init, final = os.path.join(work, "init.safetensors"), os.path.join(work, "final.safetensors")
    run([exe, "init", "--seed", SEED, "--save", init])
    train = [exe, "train", "--data", data, "--seed", SEED, "--log-every", 1, "--threads", 1]
    log = run(train + ["--steps", STEPS, "--load", init, "--save", final])
    problems = []
    weights = read_safetensors(init)
    want_lrs, want = torch_run(source, weights, images, labels)
    got_lrs = logged_lrs(log)
    scheduled = any(line.startswith("scheduler") for line in lines)
    if scheduled:
        if len(got_lrs) != STEPS:
            problems.append(f"{len(got_lrs)} lrs in the log, expected {STEPS}")
        for i, (g, w) in enumerate(zip(got_lrs, want_lrs)):
            if abs(g - w) > 1e-8 * abs(w):
                problems.append(f"step {i + 1}: lr {g}, PyTorch's {w}")
    elif got_lrs:
        problems.append("a constant lr is logged")
    got = read_safetensors(final)
    worst = 0.0
    for k, w in want.items():
        err = float((got[k].double() - w.double()).abs().max() / w.double().abs().max())
        worst = max(worst, err)
        if err > 1e-4:
            problems.append(f"{k}: error {err:.3g} after {STEPS} steps")
    if scheduled:
        half = os.path.join(work, "half.safetensors")
        run(train + ["--steps", STEPS // 2, "--load", init, "--save", half])
        resumed = logged_lrs(run(train + ["--steps", STEPS - STEPS // 2, "--load", half]))
        if resumed != got_lrs[STEPS // 2:]:
            problems.append(f"resumed at step {STEPS // 2 + 1}: lrs {resumed}, "
                            f"expected {got_lrs[STEPS // 2:]}")
    print(f"{name}: {'; '.join(lines)}: weights within {worst:.3g}"
          f"{', lrs as PyTorch' if scheduled else ''}: {'OK' if not problems else 'FAILED'}")
    for p in problems:
        print(f"  {p}")
    return not problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cairn", default="build/bin/cairn")
    ap.add_argument("--work", default="/tmp/cairn-lr-schedules")
    ap.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    args = ap.parse_args()
    torch.set_num_threads(1)
    data = os.path.join(args.work, "data")
    run([sys.executable, TINY_DATA, data, EXAMPLES, 8])
    images, labels = read_npy_images(data)
    results = []
    for name in args.configs:
        try:
            results.append(check(name, CONFIGS[name], args, data, images, labels))
        except RuntimeError as e:
            print(f"{name}: {e}")
            results.append(False)
    print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
