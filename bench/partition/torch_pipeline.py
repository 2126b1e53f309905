"""The PyTorch peer of a pipelined split: PyTorch 2.x's torch.distributed.pipelining over gloo
with the split Cairn makes, one process per stage, for bench/partition/bench.py.

  torch_pipeline.py worker --model M --devices N --rank R --store FILE --batch B
                           --micro-batches K --schedule gpipe|1f1b --warmup W --steps S
                           [--memory] --out FILE.json
      One rank (stage R of N) of the PyTorch twin (test/reference/pytorch_models.py) cut where
      Cairn cuts it (SPLITS), with the model file's optimizer on the stage's parameters.
      Random batches of the model's input shape. Each step is the schedule's step then the
      optimizer's. W untimed steps, then S steps timed from the first to the last (a barrier
      before and after, so every rank times the same steps): {"ms", ...}. With --memory, no
      timing: the memory profiler of bench/memory runs from before the model is built (the
      legacy autograd profiler's allocations on this rank), and after the W steps one more
      step gives the peak bytes live during it: parameters, gradients, optimizer state,
      inputs, the stage's micro-batch activations and its buffers of what it receives (gloo's
      own buffers are not the allocator's): {"peak_bytes", ...}. Writes the result or
      {"error"} to FILE.json. Runs under a PyTorch 2.x with gloo (build/bench-torch-venv).

run_pipeline() launches the N ranks and collects their results; bench.py calls it with the
venv's python. A split is written here only where Cairn's cut falls at a place the twin's
forward can be cut by hand: SPLITS names the values each of Cairn's devices sends forward to
the next (its memory report's transfers, without the micro-batch suffix), which bench.py checks
against Cairn's plan before it runs the peer, so the two sides always cut at the same values.
"""
import argparse
import datetime
import importlib.util
import json
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from rank_processes import run_ranks  # noqa: E402
RUN_TIMEOUT = 600  # seconds for one run of every rank: a hung rank ends the run


def _mlp_stages(model, F, torch):
    """examples/mlp.cairn on 2 devices: device 0 computes fc1's product and sends it."""
    return [lambda x: model.fc1(torch.flatten(x, 1)),
            lambda h: model.fc2(F.relu(h))], [[model.fc1], [model.fc2]]


def _cnn_stages(model, F, torch):
    """examples/cnn.cairn on 2 devices: device 0 runs the first convolution block through its
    pooling and sends the pooled maps."""
    m = model
    return [lambda x: m.pool(F.relu(m.bn1(m.conv1(x)))),
            lambda h: m.fc2(m.drop(F.relu(m.fc1(torch.flatten(
                m.pool(F.relu(m.bn2(m.conv2(h)))), 1)))))], \
        [[m.conv1, m.bn1], [m.conv2, m.bn2, m.fc1, m.fc2]]


def _transformer_stages(model, F, torch):
    """examples/transformer.cairn on 2 devices: device 0 runs the embedding, the first
    encoder layer and the second up to its last residual sum (before norm2), and sends the
    sum."""
    m = model
    first, second = m.layers[0], m.layers[1]

    def stage0(image):
        return second.residual(first(m.tokens(image)))

    def stage1(h):
        x = second.norm2(h)
        for layer in m.layers[2:]:
            x = layer(x)
        return m.classify(x)

    parts0 = [m.embed, m.pos_embed, first, second.q_proj, second.k_proj, second.v_proj,
              second.out_proj, second.norm1, second.linear1, second.linear2]
    parts1 = [second.norm2, *m.layers[2:], m.norm, m.head]
    return [stage0, stage1], [parts0, parts1]


def _mlp_stages_4(model, F, torch):
    """examples/mlp.cairn on 4 devices: fc1's product, the relu, fc2's product, and the last
    device only the loss (the schedule's loss_fn on the logits it receives)."""
    m = model
    return [lambda x: m.fc1(torch.flatten(x, 1)), F.relu, m.fc2, lambda h: h], \
        [[m.fc1], [], [m.fc2], []]


def _cnn_stages_4(model, F, torch):
    """examples/cnn.cairn on 4 devices: the first convolution with its batch norm; the relu and
    pooling after it; the second convolution; the rest (its batch norm to the logits)."""
    m = model
    return [lambda x: m.bn1(m.conv1(x)),
            lambda h: m.pool(F.relu(h)),
            m.conv2,
            lambda h: m.fc2(m.drop(F.relu(m.fc1(torch.flatten(
                m.pool(F.relu(m.bn2(h))), 1)))))], \
        [[m.conv1, m.bn1], [], [m.conv2], [m.bn2, m.fc1, m.fc2]]


def _before_norm2(layer):
    """An encoder layer's parameters up to its residual sum: all but norm2's."""
    return [layer.q_proj, layer.k_proj, layer.v_proj, layer.out_proj, layer.norm1,
            layer.linear1, layer.linear2]


def _transformer_stages_4(model, F, torch):
    """examples/transformer.cairn on 4 devices: each of the first three cuts at a layer's
    residual sum before its norm2 (layers 0, 1 and 2), so device k > 0 starts with layer
    k - 1's norm2."""
    m = model
    layers = m.layers

    def middle(k):
        return lambda h: layers[k].residual(layers[k - 1].norm2(h))

    return [lambda image: layers[0].residual(m.tokens(image)), middle(1), middle(2),
            lambda h: m.classify(layers[3](layers[2].norm2(h)))], \
        [[m.embed, m.pos_embed, *_before_norm2(layers[0])],
         [layers[0].norm2, *_before_norm2(layers[1])],
         [layers[1].norm2, *_before_norm2(layers[2])],
         [layers[2].norm2, layers[3], m.norm, m.head]]


# (model, devices): (the stages' forwards and their layers or parameters, the values Cairn's
# device k sends forward to device k + 1, for every k but the last).
SPLITS = {
    ("mlp", 2): (_mlp_stages, [["fc1.linear"]]),
    ("cnn", 2): (_cnn_stages, [["pool.max_pool2d"]]),
    ("transformer", 2): (_transformer_stages, [["layers.1.add.1"]]),
    ("mlp", 4): (_mlp_stages_4, [["fc1.linear"], ["relu"], ["fc2.linear"]]),
    ("cnn", 4): (_cnn_stages_4, [["bn1.batch_norm"], ["pool.max_pool2d"], ["conv2.conv2d"]]),
    ("transformer", 4): (_transformer_stages_4,
                         [["layers.0.add.1"], ["layers.1.add.1"], ["layers.2.add.1"]]),
}


def _memory_profiler():
    """bench/memory/bench.py's profiler helpers (_torch_profiler, _marked, _live_bytes)."""
    spec = importlib.util.spec_from_file_location(
        "cairn_memory_bench", os.path.join(ROOT, "bench", "memory", "bench.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def worker(args):
    import resource

    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch import nn
    from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe
    sys.path.insert(0, os.path.join(ROOT, "test", "reference"))
    from check_step_agreement import make_model_and_optimizer, make_optimizer

    result = {"rank": args.rank}
    # With --memory, the profiler runs from here until the measured step ends.
    helpers = _memory_profiler() if args.memory else None
    profiling = False
    if helpers:
        begin, end = helpers._torch_profiler()
        begin()
        profiling = True
    try:
        torch.set_num_threads(1)
        torch.set_num_interop_threads(1)
        torch.manual_seed(0)
        model, in_shape, _ = make_model_and_optimizer(args.model,
                                                      os.path.join(ROOT, "examples"))
        model.train()
        make_stages, _ = SPLITS[(args.model, args.devices)]
        forwards, modules = make_stages(model, F, torch)

        class Stage(nn.Module):
            """Stage R's part of the twin's forward, holding its layers and parameters."""

            def __init__(self):
                super().__init__()
                mine = modules[args.rank]
                self.layers = nn.ModuleList([p for p in mine if isinstance(p, nn.Module)])
                self.params = nn.ParameterList(
                    [p for p in mine if isinstance(p, nn.Parameter)])

            def forward(self, x):
                return forwards[args.rank](x)

        part = Stage()
        # The other stages' layers are theirs: this process frees their weights.
        for other, pieces in enumerate(modules):
            if other != args.rank:
                for piece in pieces:
                    tensors = [piece] if isinstance(piece, nn.Parameter) else \
                        list(piece.parameters()) + list(piece.buffers())
                    for tensor in tensors:
                        tensor.data = torch.empty(0)
        # The model file's optimizer over this stage's parameters (a stage of a relu or of the
        # loss alone has none).
        opt = make_optimizer(os.path.join(ROOT, "examples", args.model + ".cairn"),
                             part.parameters()) if list(part.parameters()) else None
        dist.init_process_group("gloo", init_method="file://" + args.store, rank=args.rank,
                                world_size=args.devices,
                                timeout=datetime.timedelta(seconds=RUN_TIMEOUT))
        stage = PipelineStage(part, args.rank, args.devices, torch.device("cpu"))
        schedule_type = {"gpipe": ScheduleGPipe, "1f1b": Schedule1F1B}[args.schedule]
        schedule = schedule_type(stage, n_microbatches=args.micro_batches,
                                 loss_fn=lambda out, y: F.cross_entropy(out, y))
        x = torch.rand(args.batch, *in_shape)
        y = torch.randint(0, 10, (args.batch,))
        first, last = args.rank == 0, args.rank == args.devices - 1

        def step():
            if opt:
                opt.zero_grad(set_to_none=True)
            if first:
                schedule.step(x)
            elif last:
                schedule.step(target=y, losses=[])
            else:
                schedule.step()
            if opt:
                opt.step()

        for _ in range(args.warmup):
            step()
        dist.barrier()
        if helpers:
            mark = "cairn_bench_pipeline_step"
            with helpers._marked(mark):
                step()
            records, profiling = end(), False
            _, peak, _ = helpers._live_bytes(records, mark)
            result.update(peak_bytes=peak)
        else:
            start = time.perf_counter()
            for _ in range(args.steps):
                step()
            seconds = time.perf_counter() - start
            result.update(ms=1000 * seconds / args.steps, seconds=seconds, steps=args.steps)
        dist.barrier()
        result.update(peak_rss_bytes=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                      torch=torch.__version__)
        dist.destroy_process_group()
    except Exception as e:  # noqa: BLE001 - the error text is the result
        traceback.print_exc()  # into the rank's log
        result["error"] = f"{type(e).__name__}: {e}".strip().splitlines()[0][:400]
    finally:
        if profiling:
            end()
    with open(args.out, "w") as f:
        json.dump(result, f)
    if "error" in result:
        sys.exit(1)


def run_pipeline(python, model, devices, batch, micro_batches, schedule, warmup, steps, work,
                 env, measure_memory=False):
    """Runs the N ranks of one PyTorch pipeline (the `worker` above under `python`, with the
    environment `env`): {"ms": rank 0's ms/step, "ranks_ms", ...}, with measure_memory
    {"peak_bytes": per rank, ...}, or {"error"}. Every rank is killed when the run passes
    RUN_TIMEOUT."""
    tag = f"{model}-{devices}-{schedule}{'-memory' if measure_memory else ''}"
    store = os.path.join(work, f"store-{tag}")
    if os.path.exists(store):
        os.remove(store)
    commands, outs, logs = [], [], []
    for rank in range(devices):
        outs.append(os.path.join(work, f"torch-{tag}-{rank}.json"))
        logs.append(os.path.join(work, f"torch-{tag}-{rank}.log"))
        commands.append(
            [python, os.path.abspath(__file__), "worker", "--model", model, "--devices",
             str(devices), "--rank", str(rank), "--store", store, "--batch", str(batch),
             "--micro-batches", str(micro_batches), "--schedule", schedule, "--warmup",
             str(warmup), "--steps", str(steps), "--out", outs[-1]]
            + (["--memory"] if measure_memory else []))
    results, error = run_ranks(commands, outs, logs, env, RUN_TIMEOUT)
    if error:
        return {"error": error}
    if measure_memory:
        return {"peak_bytes": [r["peak_bytes"] for r in results], "torch": results[0]["torch"]}
    return {"ms": results[0]["ms"], "ranks_ms": [r["ms"] for r in results],
            "peak_rss_bytes": [r["peak_rss_bytes"] for r in results],
            "torch": results[0]["torch"]}


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="what", required=True)
    w = sub.add_parser("worker")
    w.add_argument("--model", required=True)
    w.add_argument("--devices", type=int, required=True)
    w.add_argument("--rank", type=int, required=True)
    w.add_argument("--store", required=True)
    w.add_argument("--batch", type=int, required=True)
    w.add_argument("--micro-batches", type=int, required=True)
    w.add_argument("--schedule", choices=["gpipe", "1f1b"], required=True)
    w.add_argument("--warmup", type=int, default=2)
    w.add_argument("--steps", type=int, required=True)
    w.add_argument("--memory", action="store_true", help="measure memory instead of time")
    w.add_argument("--out", required=True)
    args = parser.parse_args()
    worker(args)


if __name__ == "__main__":
    main()
