#!/usr/bin/env python3
"""Host time the drop-in switch (scatterptx.torch.enable(), python/scatterptx/dropin.py)
adds to a call, in microseconds.

--device cpu (the default; no GPU needed): the switch's kernels registered
for the CPU dispatch key, exactly as enable() registers them for CUDA, in
front of torch's CPU kernels, on tiny tensors so that the difference is the
switch's own cost. "left" calls are outside the pattern: what every CUDA
call that the switch leaves to torch pays (the Python kernel, its checks, the
count, then torch's kernel through torch.library.get_kernel). "routed" calls
launch nothing here (a no-op stand-in): their time is the decision alone,
before the library's own host time.

--device cuda (sm_90+): the real switch on CUDA tensors. "left" as above;
"routed" is the whole call, the library's launch included, against torch's
own kernel for the same call (host time: the GPU work of these tiny calls is
shorter than the host's).

    python3 bench/dropin_overhead.py [--device cuda] [--calls 20000]
"""

import argparse
import contextlib
import os
import statistics
import sys
import time
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import torch  # noqa: E402

import scatterptx.torch as spt  # noqa: E402
from scatterptx import _torch_call, dropin  # noqa: E402


def cases(device):
    out = torch.randn(64, 8, device=device)
    src = torch.randn(32, 8, device=device)
    index = torch.randint(0, 64, (32,), device=device)
    expanded = index.view(-1, 1).expand_as(src)
    column = torch.randint(0, 8, (8,), device=device)
    columns = torch.randn(64, 8, device=device)
    return {
        "left": {
            "index_add_ along dim 1": lambda: out.index_add_(1, column, columns),
            "scatter_add_ of 1-D tensors": lambda: out[:, 0].scatter_add_(0, index, src[:, 0]),
            "scatter_reduce_ prod": lambda: out.scatter_reduce_(0, expanded, src, "prod"),
            "index_put_ without accumulate (x[i] = v)": lambda: out.index_put_((index,), src),
        },
        "routed": {
            "index_add_ along dim 0": lambda: out.index_add_(0, index, src),
            "scatter_add_ with the expanded index": lambda: out.scatter_add_(0, expanded, src),
            "scatter_reduce_ amax with the expanded index": lambda: out.scatter_reduce_(0, expanded, src, "amax"),
            "index_put_ accumulate (x[i] += v)": lambda: out.index_put_((index,), src, accumulate=True),
        },
    }


def per_call_us(call, calls, device, repeats=5):
    """Median over repeats of the microseconds per call of `calls` calls;
    calls // 10 + repeats * calls calls in all."""
    for _ in range(calls // 10):
        call()
    results = []
    for _ in range(repeats):
        if device == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            call()
        if device == "cuda":
            torch.cuda.synchronize()
        results.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(results)


@contextlib.contextmanager
def switched_on(device):
    if device == "cuda":
        with spt.enable():
            yield
        return
    router = dropin._Router("CPU", lambda out_rows, index, src_rows: None, _torch_call._fallback_reason,
                            lambda out_rows, index, src_rows, reduce, include_self: None,
                            _torch_call._reduce_fallback_reason)
    # CPU tensors' device index is -1: its entries in the capability cache and the prepared devices
    # make them pass as a ready sm_90 device at the cost of the real lookups (a mock would add its own).
    with mock.patch.dict(_torch_call._capability, {-1: (9, 0)}), \
            mock.patch.object(_torch_call, "_prepared_devices", _torch_call._prepared_devices | {-1}):
        previous = dropin._install(router)
        try:
            yield
        finally:
            dropin._install(previous)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = []
    for kind, named in cases(args.device).items():
        for name, call in named.items():
            torch_us = per_call_us(call, args.calls, args.device)
            dropin.reset_route_counts()
            with switched_on(args.device):
                switch_us = per_call_us(call, args.calls, args.device)
            counts = dropin.route_counts()
            outcomes = {outcome for by_outcome in counts.values() for outcome in by_outcome}
            assert (dropin.ROUTED in outcomes) == (kind == "routed"), (name, counts)
            # torch's CPU index_add_ adds through scatter_add_, which passes the switch again
            entries = sum(n for by_outcome in counts.values() for n in by_outcome.values())
            rows.append((kind, name, torch_us, switch_us, entries / (args.calls // 10 + 5 * args.calls)))
    print(f"torch {torch.__version__}, device {args.device}"
          + (f" ({torch.cuda.get_device_name()})" if args.device == "cuda" else "")
          + f", {args.calls} calls, median of 5; microseconds per call")
    what = "switch on (routed: decision only)" if args.device == "cpu" else "switch on"
    print(f"{'':8}{'call':44}{'torch':>10}{what:>36}{'added':>10}{'switch entries/call':>22}")
    for kind, name, torch_us, switch_us, entries in rows:
        added = "-" if kind == "routed" and args.device == "cpu" else f"{switch_us - torch_us:.2f}"
        print(f"{kind:8}{name:44}{torch_us:10.2f}{switch_us:36.2f}{added:>10}{entries:22.0f}")


if __name__ == "__main__":
    main()
