"""The cases of bench/reduce_compare.py: their inputs (drawn with torch's
generator, seeded by role), their float64 references and the checks of a
result, and each case's systems: torch's forms, ours and PyG's."""

import dataclasses
import functools
import zlib

import torch

import compare_scenarios
import scatterptx.torch as spt

TORCH, OURS, PYG = "torch", "ours", "PyG"
# src is converted to float64 for a reference a slice of this many elements
# at a time, as compare_scenarios.reference does.
CHUNK_ELEMENTS = 1 << 27


# ---------------------------------------------------------------------------
# Inputs

def generator(device, role):
    """A generator seeded from the role's name: every run draws the same inputs."""
    g = torch.Generator(device=device)
    g.manual_seed(zlib.crc32(role.encode()))
    return g


def random_nonzero(rows, cols, dtype, device, role):
    """(rows, cols) uniform in [-1, 1] with |v| >= MIN_MAGNITUDE, rounded to
    dtype: compare_scenarios.random_nonzero's distribution, drawn a slice at
    a time so that the float32 draw never doubles a large tensor."""
    g = generator(device, role)
    result = torch.empty(rows, cols, dtype=dtype, device=device)
    step = max(1, CHUNK_ELEMENTS // max(1, cols))
    low = compare_scenarios.MIN_MAGNITUDE
    for start in range(0, rows, step):
        v = torch.rand((min(step, rows - start), cols), generator=g, device=device)
        v.mul_(2).sub_(1)
        magnitude = v.abs().mul_(1 - low).add_(low)
        result[start:start + step] = magnitude.copysign_(v)
        del v, magnitude
    return result


def positive_weights(rows, device, role):
    """float32 uniform in [MIN_MAGNITUDE, 1]."""
    low = compare_scenarios.MIN_MAGNITUDE
    return torch.rand(rows, generator=generator(device, role), device=device).mul_(1 - low).add_(low)


def uniform_index(rows, targets, device, role):
    """scatterptx-bench's "uniform": each entry uniform in [0, targets)."""
    return torch.randint(0, targets, (rows,), generator=generator(device, role), device=device)


def high_cont_index(rows, targets, device, role):
    """scatterptx-bench's "high_cont": exactly half the entries 0, the rest
    uniform in [0, targets), shuffled."""
    g = generator(device, role)
    hot = rows // 2
    index = torch.cat([torch.zeros(hot, dtype=torch.int64, device=device),
                       torch.randint(0, targets, (rows - hot,), generator=g, device=device)])
    return index[torch.randperm(rows, generator=g, device=device)]


def moe_combine_index(tokens, k, device, role):
    """(index, order): row r of the expert output is slot order[r] % k of
    token order[r] // k, so index[r] = order[r] // k. order is a random
    permutation: the rows come grouped by expert, not by token."""
    order = torch.randperm(tokens * k, generator=generator(device, role), device=device)
    return torch.div(order, k, rounding_mode="floor"), order


def router_gates(tokens, k, experts, device, role):
    """(tokens, k) float32 gates as DeepSeek-V3 computes them: sigmoid scores
    over the experts, the k largest, normalised to sum 1 per token."""
    scores = torch.randn(tokens, experts, generator=generator(device, role), device=device).sigmoid_()
    top = scores.topk(k, dim=1).values
    return top / top.sum(1, keepdim=True)


# ---------------------------------------------------------------------------
# References and checks

def weighted_sum_reference(out0, index, src, weights=None):
    """out0 plus weights[i] * src[i] added at row index[i], in float64
    (weights None: the plain sum); src converted a slice at a time."""
    reference = out0.to(torch.float64, copy=True)
    step = max(1, CHUNK_ELEMENTS // max(1, src.shape[1]))
    for start in range(0, src.shape[0], step):
        part = src[start:start + step].to(torch.float64, copy=True)
        if weights is not None:
            part.mul_(weights[start:start + step].to(torch.float64).unsqueeze(1))
        reference.index_add_(0, index[start:start + step], part)
        del part
    return reference


def scatter_reduce_reference(out0, index, src, reduce, include_self):
    """torch's scatter_reduce_ with the expanded index, in float64."""
    reference = out0.to(torch.float64, copy=True)
    wide = src.to(torch.float64, copy=True)
    return reference.scatter_reduce_(0, expanded(index, src.shape[1]), wide, reduce, include_self=include_self)


def expanded(index, cols):
    """The 1-D index as scatter_add_ and scatter_reduce_ take it: one entry per element of src."""
    return index.unsqueeze(1).expand(-1, cols)


# The largest relative error a result of each dtype may have and count as
# right: well above a sum's rounding in the dtype (per add for the streaming
# paths) on these cases, far below a dropped or doubled row.
REL_ERR_TOLERANCE = {torch.float64: 1e-12, torch.float32: 1e-5, torch.float16: 5e-3, torch.bfloat16: 2e-2}


def relative_error(got, reference):
    """||got - ref|| / ||ref|| (Frobenius): compare_scenarios.check's rel_err."""
    difference = got.to(torch.float64, copy=True).sub_(reference)
    reference_norm = float(reference.norm())
    return float(difference.norm()) / reference_norm if reference_norm > 0 else float(difference.norm())


_SAME_SIZE_INT = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def bitwise_equal(a, b):
    """Bit for bit, NaNs and signed zeros included (torch.equal on floats compares values)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    as_int = _SAME_SIZE_INT[a.element_size()]
    return torch.equal(a.contiguous().view(as_int), b.contiguous().view(as_int))


# ---------------------------------------------------------------------------
# Cases

@dataclasses.dataclass
class System:
    label: str
    family: str  # TORCH, OURS or PYG
    call: object  # () -> the result; an in-place call writes into the case's out and returns it
    reference: str  # the key of the case's reference it is checked against
    in_place: bool = True  # out0 is copied into out before every call, untimed
    headline: bool = False  # ours doing what the torch forms do: compared with the fastest of them


@dataclasses.dataclass
class Bar:
    """weighted / (unweighted + weight_bytes / copy bandwidth), by system label."""
    weighted: str
    unweighted: str
    weight_bytes: int


@dataclasses.dataclass
class Setup:
    out: torch.Tensor
    out0: torch.Tensor
    systems: list
    references: dict  # key -> () -> the float64 reference
    shape: dict
    target: str  # "bar" or "speedup"
    bars: list = dataclasses.field(default_factory=list)
    notes: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Case:
    name: str
    build: object  # (ctx) -> Setup
    uses_copy_bandwidth: bool = False


def gnn_weighted_setup(ctx):
    edges, nodes, cols = ctx.rows(30_000_000), ctx.rows(2_450_000), 100
    device = ctx.device
    src = random_nonzero(edges, cols, torch.float32, device, "gnn:src")
    out0 = random_nonzero(nodes, cols, torch.float32, device, "gnn:out")
    index = uniform_index(edges, nodes, device, "gnn:index")
    weights = positive_weights(edges, device, "gnn:weights")
    out = out0.clone()
    wide_index = expanded(index, cols)
    weighted, unweighted = "ours weighted_index_add_ (f32 w)", "ours index_add_ (unweighted)"
    systems = [
        System("torch index_add_(src * w)", TORCH, lambda: out.index_add_(0, index, src * weights[:, None]),
               "weighted"),
        System("torch scatter_add_(expanded, src * w)", TORCH,
               lambda: out.scatter_add_(0, wide_index, src * weights[:, None]), "weighted"),
        System(weighted, OURS, lambda: spt.weighted_index_add_(out, index, src, weights), "weighted", headline=True),
        System(unweighted, OURS, lambda: spt.index_add_(out, index, src), "unweighted"),
    ]
    references = {"weighted": lambda: weighted_sum_reference(out0, index, src, weights),
                  "unweighted": lambda: weighted_sum_reference(out0, index, src)}
    return Setup(out, out0, systems, references, shape_of(edges, nodes, cols, src.dtype), "bar",
                 bars=[Bar(weighted, unweighted, weights.numel() * weights.element_size())],
                 notes=["torch forms: the multiply src * w[:, None] is inside the timed call"])


def moe_combine_setup(ctx):
    tokens, k, hidden, experts = ctx.rows(16384), 8, 7168, 256
    device = ctx.device
    index, order = moe_combine_index(tokens, k, device, "moe:index")
    gates = router_gates(tokens, k, experts, device, "moe:gates")  # token order
    weights = gates.flatten()[order]  # row order, as index
    weights_bf16 = weights.to(torch.bfloat16)
    src = random_nonzero(tokens * k, hidden, torch.bfloat16, device, "moe:src")
    src_by_token = torch.empty_like(src).index_copy_(0, order, src)  # for the dense form, sorted untimed
    out0 = torch.zeros(tokens, hidden, dtype=src.dtype, device=device)  # a combine starts from zero
    out = out0.clone()
    weighted, weighted_bf16 = "ours weighted_index_add_ (f32 w)", "ours weighted_index_add_ (bf16 w)"
    unweighted = "ours index_add_ (unweighted)"
    systems = [
        System("torch index_add_(src * w.to(bf16))", TORCH,
               lambda: out.index_add_(0, index, src * weights[:, None].to(src.dtype)), "f32 gates"),
        System("torch dense (src.view(T, k, H) * w.view(T, k, 1)).sum(1)", TORCH,
               lambda: (src_by_token.view(tokens, k, hidden) * gates.view(tokens, k, 1)).sum(1), "f32 gates",
               in_place=False),
        System(weighted, OURS, lambda: spt.weighted_index_add_(out, index, src, weights), "f32 gates",
               headline=True),
        System(weighted_bf16, OURS, lambda: spt.weighted_index_add_(out, index, src, weights_bf16), "bf16 gates",
               headline=True),
        System(unweighted, OURS, lambda: spt.index_add_(out, index, src), "unweighted"),
    ]
    references = {"f32 gates": lambda: weighted_sum_reference(out0, index, src, weights),
                  "bf16 gates": lambda: weighted_sum_reference(out0, index, src, weights_bf16),
                  "unweighted": lambda: weighted_sum_reference(out0, index, src)}
    bars = [Bar(weighted, unweighted, weights.numel() * weights.element_size()),
            Bar(weighted_bf16, unweighted, weights_bf16.numel() * weights_bf16.element_size())]
    notes = ["the dense form is given src and the gates already in token order (reordered outside the timing) "
             "and returns float32 (bf16 * f32 promotes); the other forms read the rows in expert order",
             "torch index_add_ form: the gates rounded to bf16 and the multiply inside the timed call",
             f"{tokens} tokens x top-{k} = {tokens * k} rows, hidden {hidden}, gates over {experts} experts; "
             "out starts at zero"]
    return Setup(out, out0, systems, references, shape_of(tokens * k, tokens, hidden, src.dtype), "bar", bars, notes)


# The reduce cases' data: 7.77M -> 1.72M rows, D 128 (bench/scenarios.tsv).
REDUCE_DATA = (("uniform-d128-f32", "uniform", torch.float32), ("uniform-d128-bf16", "uniform", torch.bfloat16),
               ("high_cont-d128-f32", "high_cont", torch.float32))
REDUCES = ("mean", "amax", "amin")
PYG_REDUCE = {"mean": "mean", "amax": "max", "amin": "min"}
INDEX_KINDS = {"uniform": uniform_index, "high_cont": high_cont_index}


def reduce_data(ctx, name, kind, dtype):
    rows, targets, cols = ctx.rows(7_770_000), ctx.rows(1_720_000), 128
    return {"src": random_nonzero(rows, cols, dtype, ctx.device, f"{name}:src"),
            "out0": random_nonzero(targets, cols, dtype, ctx.device, f"{name}:out"),
            "index": INDEX_KINDS[kind](rows, targets, ctx.device, f"{name}:index")}


def reduce_setup(ctx, name, kind, dtype, reduce, include_self):
    data = ctx.shared(name, lambda: reduce_data(ctx, name, kind, dtype))  # the six cases of one data share it
    src, out0, index = data["src"], data["out0"], data["index"]
    out = out0.clone()
    wide_index = expanded(index, src.shape[1])
    systems = [
        System("torch scatter_reduce_(expanded)", TORCH,
               lambda: out.scatter_reduce_(0, wide_index, src, reduce, include_self=include_self), "in place"),
        System("ours scatter_reduce_", OURS,
               lambda: spt.scatter_reduce_(out, index, src, reduce, include_self=include_self), "in place",
               headline=True),
    ]
    references = {"in place": lambda: scatter_reduce_reference(out0, index, src, reduce, include_self)}
    if not include_self and ctx.pyg is not None:
        scatter, targets, pyg_reduce = ctx.pyg.utils.scatter, out0.shape[0], PYG_REDUCE[reduce]
        systems.append(System(f"PyG scatter(reduce={pyg_reduce!r})", PYG,
                              lambda: scatter(src, index, dim=0, dim_size=targets, reduce=pyg_reduce), "from zero",
                              in_place=False))
        # PyG returns a new tensor reduced from zero: rows no index names stay 0.
        references["from zero"] = lambda: scatter_reduce_reference(torch.zeros_like(out0), index, src, reduce, False)
    return Setup(out, out0, systems, references, shape_of(src.shape[0], out0.shape[0], src.shape[1], src.dtype),
                 "speedup")


def shape_of(rows, targets, cols, dtype):
    return {"src_rows": rows, "out_rows": targets, "cols": cols, "dtype": str(dtype).replace("torch.", ""),
            "text": f"{compare_scenarios.count_text(rows)} -> {compare_scenarios.count_text(targets)}, D {cols}, "
                    f"{str(dtype).replace('torch.', '')}"}


def all_cases():
    cases = [Case("gnn_weighted-30M-2.45M-d100-f32", gnn_weighted_setup, uses_copy_bandwidth=True),
             Case("moe_combine-deepseek_v3-16384x8-d7168-bf16", moe_combine_setup, uses_copy_bandwidth=True)]
    for name, kind, dtype in REDUCE_DATA:
        for reduce in REDUCES:
            for include_self in (True, False):
                self_text = "include_self" if include_self else "exclude_self"
                cases.append(Case(f"reduce-{name}-{reduce}-{self_text}",
                                  functools.partial(reduce_setup, name=name, kind=kind, dtype=dtype, reduce=reduce,
                                                    include_self=include_self)))
    return cases
