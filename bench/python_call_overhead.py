#!/usr/bin/env python3
"""Host time of one call from Python: scatterptx.scatter_add_ (and its raw C
call alone) and the torch operators of scatterptx.torch (the Python
functions and the dispatcher's torch.ops path, in place and functional)
against torch's index_add_, index_add and scatter_add_, with the GPU kept
busy so that every call only queues its kernel. For small inputs this host
time, not the kernel, decides how long a call takes; the target for
scatterptx.torch.index_add_ is at most 1.5 times torch's index_add_. The C
call (with torch's caching allocator, as the Python call passes it) with
grouping off beside the default one gives what the default call's choice
(and, where it groups, its workspace allocation) adds.

  python3 bench/python_call_overhead.py [--calls N]
"""

import argparse
import ctypes
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))


# The GPU's queue holds about a thousand pending launches; past that a call
# waits for the GPU and its time is no longer host time. A grouped call
# queues about 16 launches, so grouped shapes time fewer calls.
GROUPED_CALLS = 40


def host_us_per_call(torch, op, calls):
    op()
    torch.cuda.synchronize()
    torch.cuda._sleep(3_000_000_000)  # about a second of GPU work ahead of the calls
    start = time.perf_counter()
    for _ in range(calls):
        op()
    elapsed = time.perf_counter() - start
    torch.cuda.synchronize()
    return elapsed / calls * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=300)
    args = ap.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("no CUDA device: nothing to measure")
        return 2
    import scatterptx
    import scatterptx.torch as spt
    from scatterptx import _arrays, _binding, _dispatch, _torch_allocator

    # (M, T, D, grouped by the default call)
    shapes = [(1_000, 100, 16, False), (4_000_000, 1_000_000, 2, False), (4_000_000, 1_000_000, 16, False),
              (4_000_000, 1_000_000, 128, True)]
    print(f"host microseconds per call, {args.calls} calls queued behind GPU work, f32")
    for m, t, cols, grouped in shapes:
        calls = min(args.calls, GROUPED_CALLS) if grouped else args.calls
        print(f"M = {m}, T = {t}" + (f" (grouped: {calls} calls)" if grouped else ""))
        src = torch.rand(m, cols, device="cuda") + 0.5
        out = torch.rand(t, cols, device="cuda") + 0.5
        index = torch.randint(0, t, (m,), device="cuda")
        expanded = index.unsqueeze(-1).expand(-1, cols)
        c_args = _dispatch.problem_args(_arrays.read_problem(out, index, src))
        c_args_off = type(c_args).from_buffer_copy(c_args)
        c_args_off.grouping = _binding.GROUPINGS["off"]
        stream = ctypes.c_void_p(_arrays.torch_stream(out) or None)
        library = _binding.library()
        allocator = _torch_allocator.torch_allocator()  # as the Python calls bring it
        ops = {
            "scatterptx.scatter_add_": lambda: scatterptx.scatter_add_(out, index, src),
            "C scatterptx_scatter_add alone": lambda: library.scatterptx_scatter_add_with_allocator(
                ctypes.byref(c_args), allocator, stream),
            "C alone, grouping off": lambda: library.scatterptx_scatter_add(ctypes.byref(c_args_off), stream),
            "torch index_add_": lambda: out.index_add_(0, index, src),
            "torch scatter_add_": lambda: out.scatter_add_(0, expanded, src),
            "scatterptx.torch.index_add_": lambda: spt.index_add_(out, index, src),
            "torch.ops.scatterptx.index_add_": lambda: torch.ops.scatterptx.index_add_(out, index, src),
            "torch.index_add (functional)": lambda: torch.index_add(out, 0, index, src),
            "scatterptx.torch.index_add": lambda: spt.index_add(out, index, src),
            "torch.ops.scatterptx.index_add": lambda: torch.ops.scatterptx.index_add(out, index, src),
        }
        for name, op in ops.items():
            print(f"  D = {cols:4d}  {name:34s} {host_us_per_call(torch, op, calls):7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
