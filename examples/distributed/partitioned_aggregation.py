#!/usr/bin/env python3
"""GNN message aggregation split over ranks with torch.distributed, one GPU
per rank: out[dst, :] += x[src, :] over every edge of a power-law graph.

Each rank owns a contiguous range of the nodes (their features and their
aggregated rows) and the edges that end in its range. The sources those
edges need from other ranks cross the partition in two all_to_all calls (the
requested node ids, then their rows); the rank gathers its messages and adds
them with scatterptx.torch.index_add_ on its own device. Rank 0 then gathers
the partitions and compares them with the same aggregation run on one device
and with a float64 reference; the run fails (exit status 1) if they differ
beyond f32 rounding. With fewer GPUs than ranks every rank says so and
exits 77, nothing run (torchrun reports that as failed workers). Started
without torchrun, it says how to start it and exits 2.

    torchrun --nproc-per-node 2 examples/distributed/partitioned_aggregation.py [--out DIR]
    torchrun --nproc-per-node 2 examples/distributed/partitioned_aggregation.py --device cpu \\
        --nodes 20000 --edges 300000 --features 16     # a smoke test over gloo; the library runs on CUDA only

The graph and the features come from --seed on every rank alike, so each
rank can take its part without a broadcast. Writes DIR/partitioned_aggregation.json
with --out.
"""

import argparse
import datetime
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import scatterptx.torch as spt  # noqa: E402


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=2_449_029, help="ogbn-products: 2,449,029")
    parser.add_argument("--edges", type=int, default=30_000_000)
    parser.add_argument("--features", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=5, help="timed aggregations per rank (median)")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="folder for partitioned_aggregation.json")
    return parser.parse_args()


def make_graph(args):
    """Sources uniform, destinations skewed (a few nodes take many edges), and
    features uniform in [-1, 1], on the CPU from the seed."""
    generator = torch.Generator().manual_seed(args.seed)
    src = torch.randint(0, args.nodes, (args.edges,), generator=generator)
    skew = torch.rand(args.edges, generator=generator) ** 3
    dst = (skew * args.nodes).long().clamp_(max=args.nodes - 1)
    x = torch.rand(args.nodes, args.features, generator=generator) * 2 - 1
    return src, dst, x


def node_bounds(nodes, world):
    return torch.tensor([nodes * r // world for r in range(world + 1)])


def exchange_halo(local_x, needed, lo, device):
    """needed[q]: the sorted node ids this rank needs from rank q (empty for
    itself). Returns the rows received from each rank, in that order."""
    want = torch.tensor([len(ids) for ids in needed], device=device)
    asked = torch.empty_like(want)
    dist.all_to_all_single(asked, want)
    asked_counts = asked.tolist()
    request = torch.cat([ids.to(device) for ids in needed])
    requested = torch.empty(sum(asked_counts), dtype=torch.int64, device=device)
    dist.all_to_all_single(requested, request, output_split_sizes=asked_counts,
                           input_split_sizes=want.tolist())
    rows_out = local_x.index_select(0, requested - lo)
    rows_in = torch.empty(int(want.sum()), local_x.shape[1], dtype=local_x.dtype, device=device)
    dist.all_to_all_single(rows_in, rows_out, output_split_sizes=want.tolist(), input_split_sizes=asked_counts)
    return rows_in


def aggregate_partition(args, src, dst, x, bounds, rank, device):
    """This rank's rows of out, and the median seconds of its exchange and
    of its scatter (index_add_)."""
    world = len(bounds) - 1
    lo, hi = int(bounds[rank]), int(bounds[rank + 1])
    mine = (dst >= lo) & (dst < hi)
    edge_src, edge_dst = src[mine], dst[mine] - lo
    owner = torch.searchsorted(bounds, edge_src, right=True) - 1
    needed = [torch.unique(edge_src[owner == q]) if q != rank else torch.empty(0, dtype=torch.int64)
              for q in range(world)]
    local_x = x[lo:hi].to(device)

    # Each edge's row in [local rows, rows from rank 0, rows from rank 1, ...].
    offsets = [hi - lo]
    for ids in needed[:-1]:
        offsets.append(offsets[-1] + len(ids))
    position = edge_src - lo
    for q in range(world):
        if q != rank:
            from_q = owner == q
            position[from_q] = offsets[q] + torch.searchsorted(needed[q], edge_src[from_q])
    position, edge_dst = position.to(device), edge_dst.to(device)

    exchange_s, scatter_s = [], []
    out = None
    for _ in range(max(1, args.repeats)):
        synchronize(device)
        started = time.perf_counter()
        halo = exchange_halo(local_x, needed, lo, device)
        synchronize(device)
        exchanged = time.perf_counter()
        table = torch.cat([local_x, halo])
        messages = table.index_select(0, position)
        out = torch.zeros(hi - lo, args.features, device=device)
        synchronize(device)
        gathered = time.perf_counter()
        spt.index_add_(out, edge_dst, messages)
        synchronize(device)
        scatter_s.append(time.perf_counter() - gathered)
        exchange_s.append(exchanged - started)
    return out, statistics.median(exchange_s), statistics.median(scatter_s), int(mine.sum())


def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def gather_partitions(out, bounds, device):
    """Every rank's rows, on rank 0 (padded to the largest partition for the collective)."""
    world = len(bounds) - 1
    widest = int((bounds[1:] - bounds[:-1]).max())
    padded = torch.zeros(widest, out.shape[1], dtype=out.dtype, device=device)
    padded[:out.shape[0]] = out
    pieces = [torch.empty_like(padded) for _ in range(world)]
    dist.all_gather(pieces, padded)
    return torch.cat([pieces[r][:int(bounds[r + 1] - bounds[r])] for r in range(world)])


def single_device(args, src, dst, x, device):
    out = torch.zeros(args.nodes, args.features, device=device)
    spt.index_add_(out, dst.to(device), x.to(device).index_select(0, src.to(device)))
    return out


def float64_reference(args, src, dst, x, device, chunk=4_000_000):
    """out in float64, built in chunks of edges to bound the memory."""
    out = torch.zeros(args.nodes, args.features, dtype=torch.float64, device=device)
    x64 = x.to(device, torch.float64)
    for begin in range(0, args.edges, chunk):
        s, d = src[begin:begin + chunk].to(device), dst[begin:begin + chunk].to(device)
        out.index_add_(0, d, x64.index_select(0, s))
    return out


def relative(got, reference):
    return ((got.double() - reference).abs().max() / reference.abs().max()).item()


def main():
    args = parse_args()
    if "RANK" not in os.environ:
        print("partitioned_aggregation: run it under torchrun, which starts the ranks, e.g. "
              f"torchrun --nproc-per-node 2 {sys.argv[0]} {' '.join(sys.argv[1:])}".rstrip(), file=sys.stderr)
        return 2
    ranks_here = int(os.environ.get("LOCAL_WORLD_SIZE", os.environ.get("WORLD_SIZE", 1)))
    if args.device == "cuda" and ranks_here > torch.cuda.device_count():
        # Every rank says so and stops before the process group would wait
        # for the others (torchrun reports the 77 as a failed worker).
        print(f"partitioned_aggregation: nothing run, {ranks_here} ranks on this machine but "
              f"{torch.cuda.device_count()} CUDA GPUs; one GPU per rank, or --device cpu (gloo)", flush=True)
        return 77
    backend = "nccl" if args.device == "cuda" else "gloo"
    dist.init_process_group(backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.device == "cuda":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    src, dst, x = make_graph(args)
    bounds = node_bounds(args.nodes, world)
    out, exchange_s, scatter_s, local_edges = aggregate_partition(args, src, dst, x, bounds, rank, device)
    print(f"rank {rank} on {device}: nodes [{int(bounds[rank])}, {int(bounds[rank + 1])}), {local_edges:,} edges; "
          f"exchange {exchange_s * 1e3:.2f} ms, index_add_ {scatter_s * 1e3:.2f} ms (medians of {args.repeats})",
          flush=True)
    everything = gather_partitions(out, bounds, device)
    failed = False
    if rank == 0:
        single = single_device(args, src, dst, x, device)
        reference = float64_reference(args, src, dst, x, device)
        against_single = relative(everything, single.double())
        errors = {"partitioned": relative(everything, reference), "single": relative(single, reference)}
        # Two f32 sums of the same terms in another order differ by rounding alone.
        bound = 1e-5
        failed = against_single > bound or max(errors.values()) > bound
        if device.type == "cuda" and spt.fallback_counts():
            print(f"the library did not run every call: {spt.fallback_counts()}", flush=True)
            failed = True
        print(f"{world} ranks against one device: max |difference| / max |single| = {against_single:.3g}; "
              f"against float64: partitioned {errors['partitioned']:.3g}, single device {errors['single']:.3g} "
              f"(bound {bound:g}): {'FAIL' if failed else 'match'}", flush=True)
        if args.out:
            os.makedirs(args.out, exist_ok=True)
            figures = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                       "command": " ".join(["torchrun", f"--nproc-per-node {world}"] + sys.argv),
                       "commit": os.environ.get("SCATTERPTX_COMMIT"), "world": world, "backend": backend,
                       "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
                       "nodes": args.nodes, "edges": args.edges, "features": args.features,
                       "rank0_exchange_ms": exchange_s * 1e3, "rank0_index_add_ms": scatter_s * 1e3,
                       "partitioned_vs_single": against_single, "rel_err_vs_float64": errors,
                       "bound": bound, "match": not failed, "fallbacks": spt.fallback_counts()}
            with open(os.path.join(args.out, "partitioned_aggregation.json"), "w", encoding="utf-8") as file:
                json.dump(figures, file, indent=1)
    verdict = torch.tensor([1 if failed else 0], device=device)
    dist.broadcast(verdict, 0)
    dist.destroy_process_group()
    return int(verdict.item())


if __name__ == "__main__":
    sys.exit(main())
