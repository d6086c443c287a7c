"""The systems bench/compare.py times, and the event timer it times them with.

Each system turns a scenario's inputs into a callable ``op(out)`` that does
out[index[i], :] += src[i, :] into ``out``; set-up work (compiling, sorting,
allocating a workspace, building a plan) happens in ``prepare``, outside the
timed call.
"""

import ctypes
import statistics
import time
import types

import torch
import torch._dynamo


class Inputs:
    """The tensors every system of one scenario shares."""

    def __init__(self, scenario, index, src, out, out0):
        self.scenario, self.index, self.src, self.out, self.out0 = scenario, index, src, out, out0


class Unsupported(Exception):
    """Raised by prepare where the library itself declines the input for this system."""


class System:
    key = ""
    jit = False  # its first call compiles: that call does not count as a warm-up
    reused = False  # set by prepare: what the first call would compile is already compiled

    def unsupported(self, scenario):
        """A reason why the scenario is out of this system's reach, else None."""
        return None

    def prepare(self, inputs):
        """Returns op(out). May raise."""
        raise NotImplementedError

    def release(self):
        """Drops what prepare kept for one scenario."""

    def details(self):
        """What prepare measured or chose, for the scenario's record (JSON)."""
        return {}


class ScatterPtx(System):
    """scatter_add_: the default call (grouping "auto", its workspace from
    torch's caching allocator), or the streaming paths alone ("off")."""

    def __init__(self, module, key="scatterptx", grouping="auto"):
        self.module, self.key, self.grouping = module, key, grouping

    def prepare(self, inputs):
        index, src, scatter_add_, grouping = inputs.index, inputs.src, self.module.scatter_add_, self.grouping
        return lambda out: scatter_add_(out, index, src, grouping=grouping)


class ScatterPtxForcedPath(System):
    """scatter_add_ with grouping off and one streaming path forced ("tma",
    "red" or "private"): the paths the default call is held against one by
    one. Where the path cannot take the input, the library's reason is the
    record's."""

    def __init__(self, module, path):
        self.module, self.path, self.key = module, path, f"scatterptx_path_{path}"

    def prepare(self, inputs):
        index, src, scatter_add_, path = inputs.index, inputs.src, self.module.scatter_add_, self.path
        refusal = forced_path_refusal(self.module, inputs.out, index, src, path)
        if refusal:
            raise Unsupported(refusal)
        return lambda out: scatter_add_(out, index, src, path=path, grouping="off")


def forced_path_refusal(module, out, index, src, path):
    """The library's reason why `path` cannot take these tensors, else None
    (its plan is described, nothing runs)."""
    from scatterptx._arrays import read_problem
    from scatterptx._dispatch import problem_args

    args = problem_args(read_problem(out, index, src, None), path=path, grouping="off")
    text = ctypes.create_string_buffer(512)
    library = module.library()
    if library.scatterptx_describe_plan(ctypes.byref(args), text, len(text)) == 0:
        return None
    return library.scatterptx_last_error_message().decode("utf-8", "replace")


class ScatterPtxGrouped(System):
    """scatter_add_grouped (grouping and sums in one call) in `mode`
    ("segmented", or "auto": the planner's choice), into a workspace
    allocated in prepare."""

    def __init__(self, module, key, deterministic, mode="segmented"):
        self.module, self.key, self.deterministic, self.mode = module, key, deterministic, mode
        self.workspace, self.prepared = None, {}

    def prepare(self, inputs):
        m, index, src, deterministic, mode = self.module, inputs.index, inputs.src, self.deterministic, self.mode
        size = m.grouped_workspace_size(inputs.out, index, src, mode=mode, deterministic=deterministic)
        self.workspace = workspace = torch.empty(max(size, 1), dtype=torch.uint8, device="cuda")
        self.prepared = {"workspace_bytes": size}
        return lambda out: m.scatter_add_grouped(out, index, src, mode=mode, deterministic=deterministic,
                                                 workspace=workspace)

    def release(self):
        self.workspace, self.prepared = None, {}

    def details(self):
        return self.prepared


class ScatterPtxPlan(System):
    """Execute of a segmented Plan built in prepare. The build (grouping the
    index, which synchronises) is timed there too: BUILDS builds after one
    warm-up, into one preallocated workspace, each timed like a call."""

    key = "scatterptx_plan"
    BUILDS = 5

    def __init__(self, module, timer):
        self.module, self.timer = module, timer
        self.plan, self.workspace, self.prepared = None, None, {}

    def prepare(self, inputs):
        m, index, src = self.module, inputs.index, inputs.src
        size = m.grouped_workspace_size(inputs.out, index, src, mode="segmented")
        self.workspace = torch.empty(size, dtype=torch.uint8, device="cuda")
        times = []
        for _ in range(1 + self.BUILDS):
            if self.plan is not None:
                self.plan.close()  # before the next build reuses the workspace
            built = []
            gpu_ms = self.timer.once(lambda: built.append(
                m.Plan(inputs.out, index, src, mode="segmented", workspace=self.workspace)))[0]
            self.plan = built[0]
            times.append(gpu_ms)
        self.prepared = {"workspace_bytes": size, "plan": self.plan.describe(),
                         "plan_build": {"warmup_ms": times[:1], "times_ms": times[1:],
                                        "median_ms": statistics.median(times[1:])}}
        plan = self.plan
        return lambda out: plan.execute(out, src)

    def release(self):
        if self.plan is not None:
            self.plan.close()
        self.plan, self.workspace, self.prepared = None, None, {}

    def details(self):
        return self.prepared


class EagerScatterAdd(System):
    key = "scatter_add"

    def prepare(self, inputs):
        index, src = inputs.index, inputs.src
        d = src.shape[1]
        return lambda out: out.scatter_add_(0, index.unsqueeze(-1).expand(-1, d), src)


class EagerIndexAdd(System):
    key = "index_add"

    def prepare(self, inputs):
        index, src = inputs.index, inputs.src
        return lambda out: out.index_add_(0, index, src)


class Deterministic(System):
    """A call made under torch.use_deterministic_algorithms(True), the switch
    restored after it: torch's own deterministic index_add_ / scatter_add_, or
    scatterptx.torch.index_add_, which then takes the deterministic grouped mode."""

    def __init__(self, key, body):
        self.key, self.body = key, body

    def prepare(self, inputs):
        index, src, body = inputs.index, inputs.src, self.body

        def op(out):
            before = torch.are_deterministic_algorithms_enabled()
            torch.use_deterministic_algorithms(True)
            try:
                body(out, index, src)
            finally:
                torch.use_deterministic_algorithms(before)

        return op


def _scatterptx_torch_index_add_body(out, index, src):
    import scatterptx.torch as spt

    spt.index_add_(out, index, src)


def _scatter_add_body(out, index, src):
    out.scatter_add_(0, index.unsqueeze(-1).expand(-1, src.shape[1]), src)


def _index_add_body(out, index, src):
    out.index_add_(0, index, src)


def _fresh_function(fn, tag):
    """A copy of fn with a code object of its own, so that each compiled shape
    has its own dynamo cache entry (no recompiles, no automatic dynamic shapes)."""
    name = f"{fn.__name__}_{tag}"
    try:
        code = fn.__code__.replace(co_name=name, co_qualname=name)
    except TypeError:  # Python < 3.11 has no co_qualname
        code = fn.__code__.replace(co_name=name)
    return types.FunctionType(code, fn.__globals__, code.co_name, fn.__defaults__, fn.__closure__)


class Compiled(System):
    """torch.compile of one of the eager calls, compiled once per (dtype, M, T, D)."""

    jit = True

    def __init__(self, key, body):
        self.key, self.body, self.compiled = key, body, {}
        for name in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit",
                     "accumulated_recompile_limit"):
            if hasattr(torch._dynamo.config, name):
                setattr(torch._dynamo.config, name, max(256, getattr(torch._dynamo.config, name)))

    def prepare(self, inputs):
        s = inputs.scenario
        shape = (s.dtype, s.src_rows, s.out_rows, s.cols)
        self.reused = shape in self.compiled
        if not self.reused:
            tag = "_".join(str(v) for v in shape)
            self.compiled[shape] = torch.compile(_fresh_function(self.body, tag), dynamic=False,
                                                 fullgraph=True)
        fn, index, src = self.compiled[shape], inputs.index, inputs.src
        return lambda out: fn(out, index, src)


class SegmentReduce(System):
    """torch.segment_reduce on rows sorted by target once (outside the timing),
    then out[unique_targets] += segment sums."""

    key = "segment_reduce"

    def prepare(self, inputs):
        sorted_index, order = torch.sort(inputs.index, stable=True)
        targets, lengths = torch.unique_consecutive(sorted_index, return_counts=True)
        grouped = inputs.src.index_select(0, order)
        del sorted_index, order
        self.kept = (targets, lengths, grouped)

        def op(out):
            sums = torch.segment_reduce(grouped, "sum", lengths=lengths, axis=0, unsafe=True)
            out[targets] += sums

        return op

    def release(self):
        self.kept = None


class Seed(System):
    key = "seed"
    jit = True

    def __init__(self, module):
        self.module, self.seen = module, set()

    def unsupported(self, scenario):
        if scenario.dtype not in ("f32", "f16", "bf16"):
            return f"{scenario.dtype} (f32, f16, bf16 only)"
        if scenario.row_bytes % 16:
            return f"{scenario.row_bytes}-byte rows (row bytes % 16 == 0 only)"
        return None

    def prepare(self, inputs):
        s = inputs.scenario
        self.reused = (s.dtype, s.cols) in self.seen  # the seed compiles per (dtype, D)
        self.seen.add((s.dtype, s.cols))
        index, src, fn = inputs.index, inputs.src, self.module.tma_scatter_add_into
        return lambda out: fn(out, index, src)


def make_systems(scatterptx_module, seed_module, compile_peers, timer, deterministic_peers=False):
    systems = []
    if scatterptx_module is not None:
        systems += [ScatterPtx(scatterptx_module),
                    ScatterPtx(scatterptx_module, "scatterptx_streaming", grouping="off"),
                    ScatterPtxForcedPath(scatterptx_module, "tma"),
                    ScatterPtxForcedPath(scatterptx_module, "red"),
                    ScatterPtxForcedPath(scatterptx_module, "private"),
                    ScatterPtxGrouped(scatterptx_module, "scatterptx_segmented", deterministic=False),
                    ScatterPtxPlan(scatterptx_module, timer),
                    ScatterPtxGrouped(scatterptx_module, "scatterptx_deterministic", deterministic=True),
                    ScatterPtxGrouped(scatterptx_module, "scatterptx_grouped_auto", deterministic=False,
                                      mode="auto")]
    systems += [EagerScatterAdd(), EagerIndexAdd()]
    if compile_peers:
        systems += [Compiled("compiled_scatter_add", _scatter_add_body),
                    Compiled("compiled_index_add", _index_add_body)]
    systems.append(SegmentReduce())
    if seed_module is not None:
        systems.append(Seed(seed_module))
    if deterministic_peers:
        if scatterptx_module is not None:
            systems.append(Deterministic("scatterptx_torch_deterministic", _scatterptx_torch_index_add_body))
        systems += [Deterministic("torch_deterministic_index_add", _index_add_body),
                    Deterministic("torch_deterministic_scatter_add", _scatter_add_body)]
    return systems


class Timer:
    """CUDA events around one call on the current stream, L2 flushed before each
    call (zeroing a buffer of twice the L2 size, outside the timed region)."""

    ONE_MORE_S = 2.0  # a warm-up slower than this: time one more run only
    SINGLE_S = 10.0  # slower than this: keep that single time

    def __init__(self, l2_bytes, warmup, runs, budget_s, head_start_cycles=0):
        """head_start_cycles: a GPU sleep of that many clock cycles queued after
        the flush (untimed), so that the host has queued the call before the GPU
        reaches the start event, as it has in a program whose host runs ahead of
        the GPU: neither a call whose host time outlasts the flush (a compiled
        function's wrapper) nor a host slowed by other work can then put host
        time between the events."""
        self.flush_buffer = torch.empty(max(1, 2 * l2_bytes), dtype=torch.uint8, device="cuda")
        self.warmup, self.runs, self.budget_s = warmup, runs, budget_s
        self.head_start_cycles = head_start_cycles

    def once(self, op, before=None):
        """(GPU ms, wall s) of one call."""
        if before is not None:
            before()
        self.flush_buffer.zero_()
        if self.head_start_cycles > 0:
            torch.cuda._sleep(self.head_start_cycles)
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        wall = time.perf_counter()
        start.record()
        op()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop), time.perf_counter() - wall

    def measure(self, op, before=None, first_ms=None):
        """Times op. first_ms: a call already made (the check) that counts as a
        warm-up. Returns {"times_ms", "warmup_ms", "runs", "note"}."""
        warm = [] if first_ms is None else [first_ms]
        result = {"times_ms": [], "warmup_ms": warm, "runs": 0, "note": ""}
        if first_ms is not None and first_ms > self.SINGLE_S * 1e3:
            return dict(result, times_ms=[first_ms], runs=1, note="(1 run)")
        slow = first_ms is not None and first_ms > self.ONE_MORE_S * 1e3
        for _ in range(0 if slow else self.warmup):
            ms, _ = self.once(op, before)
            warm.append(ms)
            if ms > self.SINGLE_S * 1e3:
                return dict(result, times_ms=[ms], runs=1, note="(1 run)")
            if ms > self.ONE_MORE_S * 1e3:
                slow = True
                break
        if slow:
            ms, _ = self.once(op, before)
            return dict(result, times_ms=[ms], runs=1, note="(1 run)")
        runs = self.runs
        typical = warm[-1] if warm else 0.0
        if typical > 0 and runs * typical > self.budget_s * 1e3:
            runs = max(3, min(runs, int(self.budget_s * 1e3 / typical)))
        times = [self.once(op, before)[0] for _ in range(runs)]
        note = f"({runs} runs)" if runs != self.runs else ""
        return dict(result, times_ms=times, runs=runs, note=note)
