#!/usr/bin/env python3
"""Writes a realistic memory report by hand, for the HTML report's tests.

A ResNet-like model on 32x32 images at batch 64: a training step (forward,
backward, SGD with momentum, BatchNorm running statistics) and an inference
step, as `cairn plan --memory-report` describes them. Offsets come from a
greedy-by-size plan, in-place results share their operand's bytes, and
flatten is a view (0 bytes). Deterministic; rerun it to regenerate
Inputs/fake-resnet.json:

  python3 test/report/make_fake_report.py > test/report/Inputs/fake-resnet.json
"""

import json
import sys

BATCH = 64
F32 = 4
ALIGN = 64
WORKSPACE_IMAGES = 4  # im2col for this many images at a time
SOURCE = "examples/resnet_mini.cairn"
PERSISTENT = {"param", "buffer", "optimizer", "input", "output"}
# The model op ("cairn.<op>") each kernel kind comes from; others: lower case.
OPS = {"Conv2dGradInput": "conv2d", "Conv2dGradWeight": "conv2d",
       "BatchNormTraining": "batch_norm", "BatchNormInference": "batch_norm",
       "BatchNormGrad": "batch_norm", "BatchNormRunningUpdate": "batch_norm",
       "ReluGrad": "relu", "LinearGradInput": "linear", "LinearGradWeight": "linear",
       "LogSoftmax": "cross_entropy", "NllLoss": "cross_entropy",
       "LogSoftmaxGrad": "cross_entropy", "AdaptiveAvgPool2d": "adaptive_avg_pool2d",
       "AdaptiveAvgPool2dGrad": "adaptive_avg_pool2d", "Reshape": "flatten",
       "SgdMomentumUpdate": "sgd"}


class Report:
    def __init__(self):
        self.buffers = []
        self.schedule = []
        self.line = {}

    def loc(self, layer):
        # One model line per layer, in order of first use, as a parser would.
        if layer not in self.line:
            self.line[layer] = 12 + len(self.line)
        return f"{SOURCE}:{self.line[layer]}:5"

    def buffer(self, name, kind, elems, layer, bytes_per=F32, in_place_of=None):
        # Names are unique: a taken one gets a ".N" suffix, as in the compiler.
        taken = {b["name"] for b in self.buffers}
        unique, n = name, 0
        while unique in taken:
            n += 1
            unique = f"{name}.{n}"
        b = {"name": unique, "kind": kind, "bytes": elems * bytes_per,
             "start": None, "end": None, "loc": self.loc(layer)}
        if in_place_of:
            b["in_place_of"] = in_place_of["name"]
        self.buffers.append(b)
        return b

    def kernel(self, op, step, layer, defines=(), uses=()):
        index = len(self.schedule)
        # "op" is the model op a kernel comes from, "kernel" its kind.
        self.schedule.append({"index": index, "op": "cairn." + OPS.get(op, op.lower()),
                              "kernel": op, "step": step, "loc": self.loc(layer),
                              "layer": layer})
        for b in defines:
            if b["kind"] not in PERSISTENT and b["start"] is None:
                b["start"] = index
            b["end"] = max(b["end"] or index, index)
        for b in uses:
            if b["kind"] not in PERSISTENT:
                b["end"] = max(b["end"] if b["end"] is not None else index, index)
        return index


def stages():
    # (name, in channels, out channels, spatial size) of each residual block.
    blocks = []
    channels, size = 32, 32
    for stage, out in enumerate([32, 64, 128, 256]):
        for block in range(2):
            stride_down = stage > 0 and block == 0
            out_size = size // 2 if stride_down else size
            blocks.append((f"layer{stage + 1}.{block}", channels, out, out_size))
            channels, size = out, out_size
    return blocks


def build():
    r = Report()
    params = []  # (param buffer, layer)
    running = []

    def param(name, elems, layer):
        p = r.buffer(name, "param", elems, layer)
        params.append((p, layer))
        return p

    def conv_params(layer, cin, cout):
        return param(f"{layer}.weight", cout * cin * 9, layer)

    def bn_params(layer, c):
        w = param(f"{layer}.weight", c, layer)
        b = param(f"{layer}.bias", c, layer)
        for stat in ("running_mean", "running_var"):
            running.append((r.buffer(f"{layer}.{stat}", "buffer", c, layer), layer))
        r.buffer(f"{layer}.num_batches_tracked", "buffer", 1, layer, bytes_per=8)
        return w, b

    image = r.buffer("image", "input", BATCH * 3 * 32 * 32, "input")
    label = r.buffer("label", "input", BATCH, "input", bytes_per=8)
    loss = r.buffer("loss", "output", 1, "loss")

    # Layers: stem conv, residual blocks, pooled classifier.
    layers = [("stem", 3, 32, 32)] + stages()
    for name, cin, cout, _ in layers:
        if name == "stem":
            conv_params("conv1", cin, cout)
            bn_params("bn1", cout)
        else:
            conv_params(f"{name}.conv1", cin, cout)
            bn_params(f"{name}.bn1", cout)
            conv_params(f"{name}.conv2", cout, cout)
            bn_params(f"{name}.bn2", cout)
            if cin != cout:
                param(f"{name}.downsample.weight", cout * cin, f"{name}.downsample")
    fc_w = param("fc.weight", 10 * 256, "fc")
    fc_b = param("fc.bias", 10, "fc")
    momentum = {p["name"]: r.buffer(f"momentum.{p['name']}", "optimizer", p["bytes"] // F32, layer)
                for p, layer in params}

    def forward(step, training):
        # Returns the backward closure list (in forward order) for training.
        kind_saved = "saved" if training else "activation"
        backward = []
        x = image

        def conv_bn_relu(conv, bn, x, cin, cout, size, relu=True):
            elems = BATCH * cout * size * size
            ws = r.buffer(f"{conv}.workspace", "workspace",
                          WORKSPACE_IMAGES * cin * 9 * size * size, conv)
            y = r.buffer(f"{conv}.out", kind_saved, elems, conv)
            r.kernel("Conv2d", step, conv, defines=[y, ws], uses=[x, ws])
            z = r.buffer(f"{bn}.out", "activation" if relu else kind_saved, elems, bn)
            stats = []
            if training:
                stats = [r.buffer(f"{bn}.save_mean", "saved", cout, bn),
                         r.buffer(f"{bn}.save_invstd", "saved", cout, bn)]
                r.kernel("BatchNormTraining", step, bn, defines=[z] + stats, uses=[y])
            else:
                r.kernel("BatchNormInference", step, bn, defines=[z], uses=[y])
            out = z
            if relu:
                out = r.buffer(f"{bn}.relu", kind_saved, elems, bn, in_place_of=z)
                r.kernel("Relu", step, bn, defines=[out], uses=[z])
            backward.append(("conv_bn_relu", conv, bn, x, y, out, stats, cin, cout, size, relu))
            return out

        x = conv_bn_relu("conv1", "bn1", x, 3, 32, 32)
        for name, cin, cout, size in stages():
            identity = x
            h = conv_bn_relu(f"{name}.conv1", f"{name}.bn1", x, cin, cout, size)
            h = conv_bn_relu(f"{name}.conv2", f"{name}.bn2", h, cout, cout, size, relu=False)
            if cin != cout:
                ds = r.buffer(f"{name}.downsample.out", kind_saved, BATCH * cout * size * size,
                              f"{name}.downsample")
                r.kernel("Conv2d", step, f"{name}.downsample", defines=[ds], uses=[identity])
                identity = ds
            s = r.buffer(f"{name}.add", "activation", BATCH * cout * size * size, name)
            r.kernel("Add", step, name, defines=[s], uses=[h, identity])
            out = r.buffer(f"{name}.relu", kind_saved, BATCH * cout * size * size, name,
                           in_place_of=s)
            r.kernel("Relu", step, name, defines=[out], uses=[s])
            backward.append(("residual", name, out, cin != cout))
            x = out
        pooled = r.buffer("avgpool.out", kind_saved, BATCH * 256, "avgpool")
        r.kernel("AdaptiveAvgPool2d", step, "avgpool", defines=[pooled], uses=[x])
        flat = r.buffer("flatten.out", "activation", 0, "flatten")
        r.kernel("Reshape", step, "flatten", defines=[flat], uses=[pooled])
        logits = r.buffer("fc.out", kind_saved if training else "output", BATCH * 10, "fc")
        if not training:
            logits["name"] = "output"
        r.kernel("Linear", step, "fc", defines=[logits], uses=[pooled, fc_w, fc_b])
        return backward, pooled, logits, x

    # Training step.
    backward, pooled, logits, last = forward("train_step", True)
    probs = r.buffer("loss.softmax", "saved", BATCH * 10, "loss")
    r.kernel("LogSoftmax", "train_step", "loss", defines=[probs], uses=[logits])
    r.kernel("NllLoss", "train_step", "loss", defines=[loss], uses=[probs, label])
    grads = {}

    def grad_of(p, layer):
        g = r.buffer(f"grad.{p['name']}", "grad", p["bytes"] // F32, layer)
        grads[p["name"]] = g
        return g

    dlogits = r.buffer("loss.grad", "temp", BATCH * 10, "loss")
    r.kernel("LogSoftmaxGrad", "train_step", "loss", defines=[dlogits], uses=[probs, label])
    dpool = r.buffer("fc.grad_input", "temp", BATCH * 256, "fc")
    r.kernel("LinearGradInput", "train_step", "fc", defines=[dpool], uses=[dlogits, fc_w])
    gw, gb = grad_of(fc_w, "fc"), grad_of(fc_b, "fc")
    r.kernel("LinearGradWeight", "train_step", "fc", defines=[gw, gb], uses=[dlogits, pooled])
    dx = r.buffer("avgpool.grad_input", "temp", last["bytes"] // F32, "avgpool")
    r.kernel("AdaptiveAvgPool2dGrad", "train_step", "avgpool", defines=[dx], uses=[dpool])

    param_by_name = {p["name"]: p for p, _ in params}

    def conv_bn_relu_backward(entry, dout):
        _, conv, bn, x, y, out, stats, cin, cout, size, relu = entry
        elems = BATCH * cout * size * size
        if relu:
            dz = r.buffer(f"{bn}.relu_grad", "temp", elems, bn)
            r.kernel("ReluGrad", "train_step", bn, defines=[dz], uses=[dout, out])
        else:
            dz = dout
        dy = r.buffer(f"{bn}.grad_input", "temp", elems, bn)
        gw = grad_of(param_by_name[f"{bn}.weight"], bn)
        gb = grad_of(param_by_name[f"{bn}.bias"], bn)
        r.kernel("BatchNormGrad", "train_step", bn, defines=[dy, gw, gb], uses=[dz, y] + stats)
        ws = r.buffer(f"{conv}.grad_workspace", "workspace",
                      WORKSPACE_IMAGES * cin * 9 * size * size, conv)
        gcw = grad_of(param_by_name[f"{conv}.weight"], conv)
        r.kernel("Conv2dGradWeight", "train_step", conv, defines=[gcw, ws], uses=[dy, x, ws])
        if conv == "conv1":
            return None
        # A block's first conv has stride 2 where the channels change.
        in_size = size * 2 if cin != cout else size
        dxin = r.buffer(f"{conv}.grad_input", "temp", BATCH * cin * in_size * in_size, conv)
        r.kernel("Conv2dGradInput", "train_step", conv, defines=[dxin], uses=[dy])
        return dxin

    # Walk the blocks backwards: entries are conv_bn_relu for each conv and
    # one "residual" marker after each block's second conv.
    entries = list(backward)
    d = dx
    while entries:
        entry = entries.pop()
        if entry[0] == "residual":
            _, name, out, downsample = entry
            dsum = r.buffer(f"{name}.relu_grad", "temp", out["bytes"] // F32, name)
            r.kernel("ReluGrad", "train_step", name, defines=[dsum], uses=[d, out])
            second, first = entries.pop(), entries.pop()
            dh = conv_bn_relu_backward(second, dsum)
            dh = conv_bn_relu_backward(first, dh)
            if downsample:
                p = param_by_name[f"{name}.downsample.weight"]
                g = grad_of(p, f"{name}.downsample")
                ds = f"{name}.downsample"
                r.kernel("Conv2dGradWeight", "train_step", ds, defines=[g], uses=[dsum])
                dds = r.buffer(f"{ds}.grad_input", "temp", dh["bytes"] // F32, ds)
                r.kernel("Conv2dGradInput", "train_step", ds, defines=[dds], uses=[dsum])
                dsum = dds
            acc = r.buffer(f"{name}.grad_sum", "temp", dh["bytes"] // F32, name, in_place_of=dh)
            r.kernel("Add", "train_step", name, defines=[acc], uses=[dh, dsum])
            d = acc
        else:
            conv_bn_relu_backward(entry, d)

    # Optimizer: SGD with momentum and weight decay, one kernel per parameter;
    # then the BatchNorm running statistics.
    for p, layer in params:
        r.kernel("SgdMomentumUpdate", "train_step", layer,
                 uses=[grads[p["name"]], momentum[p["name"]], p])
    for stat, layer in running:
        r.kernel("BatchNormRunningUpdate", "train_step", layer, uses=[stat])

    # Inference step.
    forward("forward", False)
    return r


def plan(r):
    n = len(r.schedule)
    for b in r.buffers:
        if b["kind"] in PERSISTENT:
            b["start"], b["end"] = 0, n - 1
    by_name = {b["name"]: b for b in r.buffers}
    # An in-place result shares its operand's bytes: plan them as one block.
    groups = {}
    for b in r.buffers:
        root = b
        while "in_place_of" in root:
            root = by_name[root["in_place_of"]]
        groups.setdefault(root["name"], []).append(b)
    blocks = []
    for members in groups.values():
        size = max(m["bytes"] for m in members)
        if size == 0:
            for m in members:
                m["offset"] = 0
            continue
        blocks.append((size, min(m["start"] for m in members),
                       max(m["end"] for m in members), members))
    # Greedy by size: the lowest offset where the block fits between the
    # placed blocks that overlap it in time.
    placed = []
    for size, start, end, members in sorted(blocks, key=lambda blk: (-blk[0], blk[1])):
        busy = sorted((o, o + s) for o, s, a, z in placed if a <= end and start <= z)
        offset = 0
        for lo, hi in busy:
            if offset + size <= lo:
                break
            offset = max(offset, (hi + ALIGN - 1) // ALIGN * ALIGN)
        placed.append((offset, size, start, end))
        for m in members:
            m["offset"] = offset

    live = [0] * n
    for size, start, end, _ in blocks:
        for i in range(start, end + 1):
            live[i] += size
    peak = max(range(n), key=lambda i: live[i])
    device = {
        "device": 0,
        "arena_bytes": max(o + s for o, s, _, _ in placed),
        "lower_bound_bytes": live[peak],
        "persistent_bytes": sum(b["bytes"] for b in r.buffers if b["kind"] in PERSISTENT),
        "no_reuse_bytes": sum(b["bytes"] for b in r.buffers),
        "planning_seconds": 0.004,
        "method": "greedy-by-size",
        "proved_optimal": False,
        "in_place_buffers": sum(1 for b in r.buffers if "in_place_of" in b),
        "peak_index": peak,
        "buffers": [{k: b[k] for k in ("name", "kind", "bytes", "offset", "start", "end", "loc",
                                       "in_place_of") if k in b} for b in r.buffers],
        "schedule": r.schedule,
    }
    return device


def main():
    r = build()
    device = plan(r)
    report = {"model": "ResNetMini", "source": SOURCE, "batch": BATCH,
              "steps": ["train_step", "forward"], "cairn_version": "0.1.0", "devices": [device]}
    json.dump(report, sys.stdout, indent=None, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
