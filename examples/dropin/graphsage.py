"""PyG's GraphSAGE trained full-batch on a power-law graph of ogbn-products'
size, with and without scatterptx.torch.enable(), in one process.

The model (torch_geometric.nn.GraphSAGE, mean aggregation) and the training
loop (forward, cross-entropy, backward, Adam) are PyG's and torch's, unchanged:
the switch alone routes their scatters, forward (PyG's scatter_add_ with the
expanded index) and backward (the gradient of the index_select that gathers
each edge's source row: index_add_), through the library.

Two replicas start from the same weights and train in lockstep, one with
the switch off and one with it on, taking turns step by step. Reported:

- the median step time of each (the steps after --warmup), and the ratio;
- the scatter kernels' time per step and their share of the step
  (torch.profiler; every kernel launched inside a scatter op, see measure.py);
- f32: the loss curves over all steps and the first step's gradients, the
  switch's against torch's (relative difference);
- bf16 (autocast): the same, and the error against float64 of the sum and
  mean aggregation (PyG's scatter) of the first layer's bf16 output, by
  torch and by the switch.

The graph: --edges directed edges, both directions of --edges/2 pairs whose
endpoints are drawn with probability proportional to rank^(-1/(gamma-1))
over shuffled node ids (Chung-Lu: degrees follow a power law of exponent
gamma, 2.8 by default, which puts the largest degree near ogbn-products'
17k), self-loops dropped, sorted by source then target as PyG's coalesced
datasets are; random features and labels.

    python examples/dropin/graphsage.py --out results/dropin   # H200: about 2 minutes
    python examples/dropin/graphsage.py --device cpu --nodes 3000 --edges 40000 --hidden 32 --steps 4 \\
        --warmup 1 --out /tmp/sage   # a smoke test; the switch routes CUDA tensors only

Writes OUT/graphsage.md and OUT/graphsage.json.
"""

import argparse
import copy
import sys

import torch
import torch.nn.functional as F

import measure
from measure import MODES, SCATTERPTX, TORCH

from torch_geometric.nn import GraphSAGE  # noqa: E402 (after measure, which finds the checkout's scatterptx)
from torch_geometric.utils import scatter  # noqa: E402


def power_law_graph(nodes, edges, gamma, generator, device):
    """edge_index (2, edges) as the module docstring describes, and the degrees."""
    weights = torch.arange(1, nodes + 1, dtype=torch.float64, device=device).pow(-1.0 / (gamma - 1.0))
    cdf = weights.cumsum(0)
    cdf /= cdf[-1].clone()
    pairs = edges // 2
    draws = torch.rand(2, int(pairs * 1.01) + 16, generator=generator, dtype=torch.float64, device=device)
    ranks = torch.searchsorted(cdf, draws).clamp_(max=nodes - 1)
    ids = torch.randperm(nodes, generator=generator, device=device)
    a, b = ids[ranks]
    keep = a != b
    a, b = a[keep][:pairs], b[keep][:pairs]
    if a.numel() < pairs:
        raise RuntimeError("too many self-loops to drop; raise --nodes or lower --gamma")
    row, col = torch.cat([a, b]), torch.cat([b, a])
    order = (row * nodes + col).argsort()
    edge_index = torch.stack([row[order], col[order]])
    degrees = torch.bincount(edge_index[1], minlength=nodes)
    return edge_index, degrees


def aggregation_errors(hidden, edge_index, hub, columns=32):
    """The aggregation of bf16 rows over in-edges as PyG's message passing
    does it (torch_geometric.utils.scatter of the gathered source rows), sum
    and mean, by torch and by the switch, against float64 (computed by torch
    a slice of columns at a time: a float64 copy of every edge's row would
    not fit). For "mean", PyG counts each target's edges with a 1-D
    scatter_add_ in the rows' dtype, left to torch in both modes: bf16 counts
    exactly only to 256 (atomic adds of 1 stop there), so rows of higher
    degree carry the count's error in both."""
    source, target = edge_index
    nodes, width = hidden.shape
    errors = {}
    for reduce in ("sum", "mean"):
        with torch.no_grad(), measure.switch(TORCH):
            reference = torch.cat([scatter(hidden[:, c:c + columns].double()[source], target, 0, nodes, reduce)
                                   for c in range(0, width, columns)], dim=1)
        errors[reduce] = {}
        for mode in MODES:
            with torch.no_grad(), measure.switch(mode):
                aggregated = scatter(hidden[source], target, 0, nodes, reduce)
            errors[reduce][mode] = measure.error_against(reference, aggregated)
            errors[reduce][mode]["largest_degree_row_normwise_relative"] = measure.error_against(
                reference[hub], aggregated[hub])["normwise_relative"]
            del aggregated
    return errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="folder for graphsage.md and graphsage.json")
    parser.add_argument("--nodes", type=int, default=2_449_029, help="ogbn-products: 2,449,029")
    parser.add_argument("--edges", type=int, default=32_000_000, help="directed edges")
    parser.add_argument("--gamma", type=float, default=2.8, help="power-law exponent of the degrees")
    parser.add_argument("--features", type=int, default=100)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--classes", type=int, default=47)
    parser.add_argument("--steps", type=int, default=20, help="training steps of each replica, warmup included")
    parser.add_argument("--warmup", type=int, default=3, help="first steps left out of the timing")
    parser.add_argument("--profile-steps", type=int, default=2)
    parser.add_argument("--precisions", nargs="+", default=["f32", "bf16"], choices=["f32", "bf16"])
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--rtol", type=float, default=1e-4, help="f32: loss curves and gradients agree within this")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.steps - args.warmup < 10 and args.device != "cpu":
        parser.error("time at least 10 steps: --steps - --warmup >= 10")
    device = torch.device(args.device)
    measure.require_device(device, "graphsage.py")

    generator = torch.Generator(device=device).manual_seed(args.seed)
    edge_index, degrees = power_law_graph(args.nodes, args.edges, args.gamma, generator, device)
    x = torch.randn(args.nodes, args.features, generator=generator, device=device)
    y = torch.randint(0, args.classes, (args.nodes,), generator=generator, device=device)
    torch.manual_seed(args.seed)
    initial = GraphSAGE(args.features, args.hidden, num_layers=args.layers, out_channels=args.classes).to(device)
    graph = {"nodes": args.nodes, "edges": edge_index.shape[1], "gamma": args.gamma,
             "max_degree": int(degrees.max()), "mean_degree": edge_index.shape[1] / args.nodes,
             "features": args.features, "hidden": args.hidden, "layers": args.layers, "classes": args.classes}
    print(f"graph: {graph}", flush=True)

    figures = {"environment": measure.environment(device), "graph": graph, "args": vars(args)}
    sections = []
    for precision in args.precisions:
        autocast = precision == "bf16"
        models = {mode: copy.deepcopy(initial) for mode in MODES}
        optimizers = {mode: torch.optim.Adam(models[mode].parameters(), lr=args.lr) for mode in MODES}

        def loss_of(model):
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=autocast):
                return F.cross_entropy(model(x, edge_index).float(), y)

        def train_step(mode):
            optimizers[mode].zero_grad(set_to_none=True)
            loss = loss_of(models[mode])
            loss.backward()
            optimizers[mode].step()
            return loss.detach()

        # The first step's gradients, from the same weights.
        gradients = {}
        for mode in MODES:
            with measure.switch(mode):
                models[mode].zero_grad(set_to_none=True)
                loss_of(models[mode]).backward()
                gradients[mode] = [p.grad.clone() for p in models[mode].parameters()]
                models[mode].zero_grad(set_to_none=True)
        gradient_difference = max(measure.relative_difference(a, b)
                                  for a, b in zip(gradients[SCATTERPTX], gradients[TORCH]))
        del gradients

        print(f"{precision}: {args.steps} steps of each replica, alternating", flush=True)
        seconds, losses = measure.alternate(train_step, args.steps - args.warmup, args.warmup, device)
        losses = {mode: [float(loss) for loss in values] for mode, values in losses.items()}
        loss_difference = max(abs(a - b) / abs(b) for a, b in zip(losses[SCATTERPTX], losses[TORCH]))
        times = measure.step_times(seconds)
        kernels = measure.scatter_figures(train_step, args.profile_steps, device,
                                          {mode: times[mode]["median_ms"] for mode in MODES})
        result = {"step_times": times, "scatter_kernels": kernels, "losses": losses,
                  "loss_curve_max_relative_difference": loss_difference,
                  "first_step_gradients_max_relative_difference": gradient_difference}

        if autocast:
            with torch.no_grad(), torch.autocast(device.type, dtype=torch.bfloat16):
                hidden = initial.act(initial.convs[0](x, edge_index))  # what the second layer aggregates
            result["bf16_aggregation_error_against_float64"] = aggregation_errors(hidden, edge_index,
                                                                                  int(degrees.argmax()))
        else:
            result["agrees_within_rtol"] = loss_difference <= args.rtol and gradient_difference <= args.rtol
        figures[precision] = result
        print(f"{precision}: {times[TORCH]['median_ms']:.1f} ms with torch, {times[SCATTERPTX]['median_ms']:.1f} ms "
              f"with the switch ({times['speedup']:.2f}x); scatter kernels "
              f"{kernels[TORCH]['scatter_us_per_step'] / 1e3:.2f} -> {kernels[SCATTERPTX]['scatter_us_per_step'] / 1e3:.2f}"
              f" ms/step; losses within {loss_difference:.2g}, gradients within {gradient_difference:.2g}", flush=True)
        sections.append((precision, times, kernels, result))
        del models, optimizers

    figures["routes_seen"] = measure.spt.route_counts()
    markdown = report(figures, sections, args)
    for path in measure.write_report(args.out, "graphsage", figures, markdown):
        print(f"wrote {path}")
    return measure.agreement_status("graphsage.py", figures, args.precisions)


def report(figures, sections, args):
    graph = figures["graph"]
    env = figures["environment"]
    lines = measure.report_header("GraphSAGE (PyG) with and without scatterptx.torch.enable()", env, args.device)
    lines += [f"Graph: {graph['nodes']:,} nodes, {graph['edges']:,} directed edges (power law, gamma "
              f"{graph['gamma']}, largest degree {graph['max_degree']:,}, mean {graph['mean_degree']:.1f}); "
              f"GraphSAGE {graph['features']} -> {graph['hidden']} x {graph['layers']} layers -> {graph['classes']}, "
              f"mean aggregation, full batch, Adam lr {args.lr}. Step: forward, cross-entropy, backward, "
              f"optimizer step. Two replicas from the same weights, taking turns; medians of "
              f"{args.steps - args.warmup} steps after {args.warmup}; scatter kernels: every kernel inside a "
              f"scatter op (torch.profiler, {args.profile_steps} steps).", "",
              measure.timing_table(sections), ""]
    for precision, times, kernels, result in sections:
        lines += [f"## {precision}", "",
                  f"- step: {times['speedup']:.2f}x faster with the switch; scatter kernel time "
                  f"{measure.ratio(kernels['scatter_time_ratio'])} lower",
                  f"- loss curves ({args.steps} steps): largest relative difference "
                  f"{result['loss_curve_max_relative_difference']:.3g}; first step's gradients: "
                  f"{result['first_step_gradients_max_relative_difference']:.3g}"
                  + (f" (within {args.rtol}: {'yes' if result['agrees_within_rtol'] else 'NO'})"
                     if 'agrees_within_rtol' in result else "")]
        if "bf16_aggregation_error_against_float64" in result:
            for reduce, by_mode in result["bf16_aggregation_error_against_float64"].items():
                lines += [f"- bf16 {reduce} aggregation of the first layer's output against float64: "
                          + "; ".join(f"{mode} {e['normwise_relative']:.3g} normwise, {e['max_abs_over_max_ref']:.3g} "
                                      f"max-abs, {e['largest_degree_row_normwise_relative']:.3g} on the largest-degree "
                                      f"row" for mode, e in by_mode.items())]
            lines += ["  (mean: PyG counts edges with a bf16 1-D scatter_add_, left to torch in both modes; bf16 "
                      "counts exactly only to 256, so the largest-degree row's mean carries the count's error in both)"]
        lines += measure.scatter_kernel_tables(kernels, digits=0)
        lines += ["Losses:", "", measure.table(["step", TORCH, SCATTERPTX],
                                               [[i, f"{a:.7g}", f"{b:.7g}"] for i, (a, b) in
                                                enumerate(zip(result["losses"][TORCH], result["losses"][SCATTERPTX]))]),
                  ""]
    lines += measure.routes_seen(figures)
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
