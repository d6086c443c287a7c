#!/usr/bin/env python3
"""Host time of one call from Python: scatterptx.scatter_add_ (and its raw C
call alone) against torch's index_add_ and scatter_add_, with the GPU kept
busy so that every call only queues its kernel. For small inputs this host
time, not the kernel, decides how long a call takes.

  python3 bench/python_call_overhead.py [--calls N]
"""

import argparse
import ctypes
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))


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
    from scatterptx import _arrays, _binding, _dispatch

    m, t = 4_000_000, 1_000_000
    print(f"host microseconds per call, {args.calls} calls queued behind GPU work, M = {m}, T = {t}, f32")
    for cols in (2, 16, 128):
        src = torch.rand(m, cols, device="cuda") + 0.5
        out = torch.rand(t, cols, device="cuda") + 0.5
        index = torch.randint(0, t, (m,), device="cuda")
        expanded = index.unsqueeze(-1).expand(-1, cols)
        c_args = _dispatch.problem_args(_arrays.read_problem(out, index, src))
        stream = ctypes.c_void_p(_arrays.torch_stream(out) or None)
        library = _binding.library()
        ops = {
            "scatterptx.scatter_add_": lambda: scatterptx.scatter_add_(out, index, src),
            "C scatterptx_scatter_add alone": lambda: library.scatterptx_scatter_add(ctypes.byref(c_args), stream),
            "torch index_add_": lambda: out.index_add_(0, index, src),
            "torch scatter_add_": lambda: out.scatter_add_(0, expanded, src),
        }
        for name, op in ops.items():
            print(f"  D = {cols:4d}  {name:32s} {host_us_per_call(torch, op, args.calls):7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
