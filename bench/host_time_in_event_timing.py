#!/usr/bin/env python3
"""Does a call's host time show in bench/compare.py's event timing? Times
libscatterptx and torch's eager calls on the f64 small-row scenarios (and
32-byte f32 rows) with compare's Timer without a head start, and with its
head start (a GPU sleep queued after the L2 flush, during which the host
prepares the call). Equal medians mean the host time is hidden behind the
flush alone.

  python3 bench/host_time_in_event_timing.py
"""

import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))


def main():
    import torch

    if not torch.cuda.is_available():
        print("no CUDA device: nothing to measure")
        return 2
    import compare_scenarios as sc
    import scatterptx
    from compare_systems import Timer

    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    bench = os.path.join(os.path.dirname(HERE), "build", "bench", "scatterptx-bench")
    scenarios, description = sc.describe(bench)
    timers = {"no head start": Timer(l2, 3, 30, 5.0),
              "+gpu sleep": Timer(l2, 3, 30, 5.0, head_start_cycles=description["head_start_cycles"])}
    chosen = [s for s in scenarios
              if s.name.startswith("small_rows") and ("f64" in s.name or "32B-d8-f32" in s.name)]
    for s in chosen:
        index = sc.load_index(bench, s)
        src = sc.random_nonzero(s.src_rows, s.cols, s.dtype, s, "src")
        out0 = sc.random_nonzero(s.out_rows, s.cols, s.dtype, s, "out")
        out = out0.clone()
        expanded = index.unsqueeze(-1).expand(-1, s.cols)
        ops = {"ours": lambda: scatterptx.scatter_add_(out, index, src),
               "eager scatter_add_": lambda: out.scatter_add_(0, expanded, src),
               "eager index_add_": lambda: out.index_add_(0, index, src)}
        for round_ in range(2):
            for timer_name, timer in timers.items():
                medians = [f"{name} {statistics.median(timer.measure(op, before=lambda: out.copy_(out0))['times_ms']):.4f}"
                           for name, op in ops.items()]
                print(f"{s.name:28s} r{round_} {timer_name:14s} " + "  ".join(medians), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
