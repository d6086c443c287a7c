"""scatterptx as torch operators: ``torch.ops.scatterptx.index_add`` and
``index_add_``, ``weighted_index_add`` and ``weighted_index_add_``,
``scatter_reduce`` and ``scatter_reduce_``, and torch_scatter's / PyG's
``scatter`` on top of them.

Importing this module registers the operators (``import scatterptx`` alone
does not import torch)::

    import scatterptx.torch as spt
    out = spt.index_add(out, index, src)       # functional: out + the rows, as torch.index_add(out, 0, index, src)
    spt.index_add_(out, index, src)            # in place, as out.index_add_(0, index, src)
    spt.weighted_index_add_(out, index, src, w)  # out[index[i], :] += w[i] * src[i, :]; w float32 or src's dtype
    out = spt.scatter_reduce(out, index, src, "amax", include_self=False)
    #   torch.scatter_reduce(out, 0, index.view(-1, 1).expand_as(src), src, ...): "sum", "mean", "amax", "amin"
    agg = spt.scatter(src, index, dim=0, dim_size=n, reduce="mean")  # PyG: "sum", "add", "mean", "max", "min"

What the operators do:

- sm_90+ CUDA tensors (f32, f16, bf16, f64; int32 or int64 index) run the
  library on the tensors' device, whatever the current device is, on torch's
  current stream of that device; nothing synchronises, so CUDA graph capture
  works (a device's very first call, which loads the library's kernels, takes
  torch's op if it falls inside a capture). Out-of-range indices are skipped
  and recorded (the library's record mode: ``scatterptx.take_index_error()``
  reports them); torch's own CUDA op would raise a device-side assert
  instead.
- Under ``torch.use_deterministic_algorithms(True)`` they take the library's
  deterministic grouped mode (bitwise reproducible), never an atomic path.
- Any layout torch accepts is accepted: out with a non-unit column stride is
  computed in a contiguous copy and copied back; such a src is copied.
- Everything else (CPU or other devices, GPUs below sm_90, torch built for
  ROCm, other dtypes or ranks) runs torch's own ``index_add_`` (weighted: of
  ``src * w[:, None]``, the product in float32, float64 for float64) or
  ``scatter_reduce_`` (with the expanded index): same result, and torch's
  errors for invalid input (mismatched shapes, dtypes or devices;
  scatter_reduce's contract, 2-D out and src with a 1-D index of src's rows,
  and the weights' are checked first, alike on every device and in the fake
  kernels). Each reason is warned about once and counted in
  ``fallback_counts()``.
- scatter_reduce other than a sum with include_self runs grouped (sorted by
  target, each reached row written once): deterministic, f16/bf16 combined
  in float32; a reduce grouping cannot take (more than 2^32 - 1 source rows
  or 2^32 - 2 targets) runs torch's op.
- Autograd: the gradient of out is the incoming gradient, that of src is
  its rows at index (zero for out-of-range indices), none for index. With
  weights: src's is w[i] times its row, w[i]'s the row's dot product with
  src[i]. scatter_reduce's are torch's own scatter_reduce formulas
  (``scatter_reduce_backward``): mean divides by each target's count (one
  more with include_self), amax/amin share a target's gradient equally
  among the operands equal to its result, and without include_self out's
  reached rows get none. One quirk of torch's is kept so that both give the
  same gradients: without include_self, an excluded out value equal to its
  target's result still counts among the ties. The backward is made of
  differentiable torch ops, so double backward is exact. Forward-mode AD
  (``torch.autograd.forward_ad``, ``torch.func.jvp``) and ``torch.func``'s
  grad and vmap work too, with torch's tangents.
  The in-place operator, when a gradient or a tangent is needed, runs as the functional
  one followed by ``out.copy_``, so autograd sees torch's in-place semantics
  (and its error for a leaf that requires grad).
- Fake (meta) implementations let torch.compile(fullgraph=True) and
  torch.export trace the operators as single opaque nodes.

The operators are registered with ``torch.library.Library.define`` and plain
kernels rather than ``torch.library.custom_op``, whose Python layers cost
several microseconds a call (as vLLM's direct_register_custom_op avoids
them); the autograd kernels are small and handwritten for the same reason.
In eager mode, plain CUDA tensors that want no gradient go from the Python
functions straight to the CUDA kernel: the dispatcher's Python kernels
would cost about as much host time again as torch's whole index_add_.
Everything traced, compiled, differentiated or under a mode goes through
the dispatcher.
"""

import torch
import torch._functorch.autograd_function as _functorch_autograd
import torch.autograd.forward_ad as _forward_ad

from ._torch_call import (_INDEX_TYPES, _count_fallback, _fallback_reason, _launch_as_is, _reduce_fallback_reason,
                          _run_library, check_written_alone, fallback_counts, reset_fallback_counts)
from ._torch_math import (_weighted_rows, scatter_reduce_grads, scatter_reduce_tangent, source_grad,
                          weighted_source_grads)

__all__ = ["disable", "enable", "enabled", "fallback_counts", "index_add", "index_add_", "reset_fallback_counts",
           "reset_route_counts", "route_counts", "scatter", "scatter_reduce", "scatter_reduce_", "weighted_index_add",
           "weighted_index_add_"]

_REDUCES = ("sum", "mean", "amax", "amin")  # scatter_reduce's, as torch names them
# scatter's reduce (torch_scatter's and PyG's names) -> scatter_reduce's
_SCATTER_REDUCES = {"sum": "sum", "add": "sum", "mean": "mean", "max": "amax", "min": "amin", "amax": "amax",
                    "amin": "amin"}
# Reductions torch_scatter and PyG offer that the library does not have.
_OTHER_REDUCES = ("mul", "prod", "any")


# ---------------------------------------------------------------------------
# The kernels: the library on CUDA tensors (scatterptx/_torch_call.py), torch's
# own ops elsewhere and where the library cannot take the tensors

def _index_add_cuda(out, index, source):
    """The in-place kernel for CUDA tensors."""
    if _launch_as_is(out, index, source):
        return
    reason = _fallback_reason(out, index, source)
    if reason is not None:
        out.index_add_(0, index, source)  # raises torch's error where the input is invalid
        _count_fallback(reason)
        return
    _run_library(out, index, source)


def _index_add_other(out, index, source):
    """The in-place kernel for every other device: torch's own op."""
    out.index_add_(0, index, source)
    _count_fallback(f"{out.device.type} tensors")


# ---------------------------------------------------------------------------
# Weighted sums and scatter_reduce: their contracts (checked alike on every
# device and by the fake kernels), torch's ops for the fallback, the kernels

def _check_weights(source, weights):
    """weights against the weighted operators' contract; out, index and
    source are index_add_'s (torch's op or its fake kernel checks them)."""
    torch._check(source.dim() >= 1, lambda: "scatterptx.weighted_index_add: src must have a dimension of rows")
    torch._check(weights.dim() == 1,
                 lambda: f"scatterptx.weighted_index_add: weights must be 1-D, got {weights.dim()}-D")
    torch._check(weights.shape[0] == source.shape[0],
                 lambda: f"scatterptx.weighted_index_add: {weights.shape[0]} weights for {source.shape[0]} rows of src")
    torch._check(weights.dtype == torch.float32 or weights.dtype == source.dtype,
                 lambda: f"scatterptx.weighted_index_add: weights must be float32 or src's dtype {source.dtype}, "
                         f"got {weights.dtype}")
    torch._check(weights.device == source.device,
                 lambda: f"scatterptx.weighted_index_add: weights on {weights.device}, src on {source.device}")


def _check_scatter_reduce(out, index, src, reduce):
    """scatter_reduce's contract: out (n, D) and src (m, D) of one dtype, an
    int32 or int64 index (m,), all on one device. torch's own op would take
    more (an index shorter than src, or narrower than out) and mean less."""
    torch._check(reduce in _REDUCES, lambda: f"scatterptx.scatter_reduce: reduce must be one of "
                                             f"{', '.join(_REDUCES)}, got {reduce!r}")
    torch._check(out.dim() == 2 and src.dim() == 2 and index.dim() == 1,
                 lambda: f"scatterptx.scatter_reduce: out and src must be 2-D and index 1-D, got {out.dim()}-D out, "
                         f"{src.dim()}-D src and {index.dim()}-D index")
    torch._check(index.dtype in _INDEX_TYPES,
                 lambda: f"scatterptx.scatter_reduce: index must be int32 or int64, got {index.dtype}")
    torch._check(src.dtype == out.dtype,
                 lambda: f"scatterptx.scatter_reduce: src is {src.dtype} but out is {out.dtype}")
    torch._check(index.shape[0] == src.shape[0],
                 lambda: f"scatterptx.scatter_reduce: {index.shape[0]} indices for {src.shape[0]} rows of src")
    torch._check(src.shape[1] == out.shape[1],
                 lambda: f"scatterptx.scatter_reduce: src has {src.shape[1]} columns but out {out.shape[1]}")
    torch._check(index.device == out.device and src.device == out.device,
                 lambda: f"scatterptx.scatter_reduce: out on {out.device}, index on {index.device}, "
                         f"src on {src.device}")



def _torch_scatter_reduce_(out, index, src, reduce, include_self):
    """torch's own op: out.scatter_reduce_ along dim 0 with the expanded index."""
    out.scatter_reduce_(0, index.long().unsqueeze(1).expand(src.shape), src, reduce, include_self=include_self)


def _weighted_index_add_cuda(out, index, source, weights):
    _check_weights(source, weights)
    reason = _reduce_fallback_reason(out, index, source, weights=weights)
    if reason is not None:
        out.index_add_(0, index, _weighted_rows(source, weights))  # torch's errors for invalid input
        _count_fallback(reason)
        return
    _run_library(out, index, source, weights=weights)


def _weighted_index_add_other(out, index, source, weights):
    _check_weights(source, weights)
    out.index_add_(0, index, _weighted_rows(source, weights))
    _count_fallback(f"{out.device.type} tensors")


def _scatter_reduce_cuda(out, index, src, reduce, *, include_self=True):
    _check_scatter_reduce(out, index, src, reduce)
    if reduce == "sum" and include_self:
        _index_add_cuda(out, index, src)  # the plain sum: index_add_'s paths
    else:
        _scatter_reduce_rows(out, index, src, reduce, include_self)


def _scatter_reduce_rows(out, index, src, reduce, include_self):
    """The library's reduce (or torch's op, counted) on operands that meet
    scatter_reduce's contract; the drop-in switch routes its calls here."""
    reason = _reduce_fallback_reason(out, index, src, reduce, include_self)
    if reason is not None:
        _torch_scatter_reduce_(out, index, src, reduce, include_self)
        _count_fallback(reason, "scatter_reduce_")
        return
    _run_library(out, index, src, reduce, include_self)


def _scatter_reduce_other(out, index, src, reduce, *, include_self=True):
    _check_scatter_reduce(out, index, src, reduce)
    _torch_scatter_reduce_(out, index, src, reduce, include_self)
    _count_fallback(f"{out.device.type} tensors", "scatter_reduce_")


# ---------------------------------------------------------------------------
# Operator registration

_lib = torch.library.Library("scatterptx", "DEF")
_TAGS = (torch.Tag.pt2_compliant_tag,)
_lib.define("index_add(Tensor out, Tensor index, Tensor source) -> Tensor", tags=_TAGS)
_lib.define("index_add_(Tensor(a!) out, Tensor index, Tensor source) -> ()", tags=_TAGS)
_lib.define("weighted_index_add(Tensor out, Tensor index, Tensor source, Tensor weights) -> Tensor", tags=_TAGS)
_lib.define("weighted_index_add_(Tensor(a!) out, Tensor index, Tensor source, Tensor weights) -> ()", tags=_TAGS)
_lib.define("scatter_reduce(Tensor out, Tensor index, Tensor src, str reduce, *, bool include_self=True) -> Tensor",
            tags=_TAGS)
_lib.define("scatter_reduce_(Tensor(a!) out, Tensor index, Tensor src, str reduce, *, bool include_self=True) -> ()",
            tags=_TAGS)
_index_add_op = torch.ops.scatterptx.index_add.default
_index_add__op = torch.ops.scatterptx.index_add_.default
_weighted_index_add_op = torch.ops.scatterptx.weighted_index_add.default
_weighted_index_add__op = torch.ops.scatterptx.weighted_index_add_.default
_scatter_reduce_op = torch.ops.scatterptx.scatter_reduce.default
_scatter_reduce__op = torch.ops.scatterptx.scatter_reduce_.default


def _functional(inplace_kernel):
    def kernel(out, *args, **kwargs):
        result = out.clone(memory_format=torch.contiguous_format)
        inplace_kernel(result, *args, **kwargs)
        return result

    return kernel


_index_add_functional_cuda = _functional(_index_add_cuda)
_lib.impl("index_add_", _index_add_cuda, "CUDA")
_lib.impl("index_add", _index_add_functional_cuda, "CUDA")
_lib.impl("index_add_", _index_add_other, "CompositeExplicitAutograd")
_lib.impl("index_add", _functional(_index_add_other), "CompositeExplicitAutograd")
_weighted_index_add_functional_cuda = _functional(_weighted_index_add_cuda)
_lib.impl("weighted_index_add_", _weighted_index_add_cuda, "CUDA")
_lib.impl("weighted_index_add", _weighted_index_add_functional_cuda, "CUDA")
_lib.impl("weighted_index_add_", _weighted_index_add_other, "CompositeExplicitAutograd")
_lib.impl("weighted_index_add", _functional(_weighted_index_add_other), "CompositeExplicitAutograd")
_scatter_reduce_functional_cuda = _functional(_scatter_reduce_cuda)
_lib.impl("scatter_reduce_", _scatter_reduce_cuda, "CUDA")
_lib.impl("scatter_reduce", _scatter_reduce_functional_cuda, "CUDA")
_lib.impl("scatter_reduce_", _scatter_reduce_other, "CompositeExplicitAutograd")
_lib.impl("scatter_reduce", _functional(_scatter_reduce_other), "CompositeExplicitAutograd")


# torch's names of dtypes in its error messages (c10::ScalarType).
_SCALAR_TYPE_NAMES = {torch.float32: "Float", torch.float64: "Double", torch.float16: "Half",
                      torch.bfloat16: "BFloat16", torch.int64: "Long", torch.int32: "Int", torch.int16: "Short",
                      torch.int8: "Char", torch.uint8: "Byte", torch.bool: "Bool", torch.complex64: "ComplexFloat",
                      torch.complex128: "ComplexDouble"}


def _scalar_type_name(dtype):
    return _SCALAR_TYPE_NAMES.get(dtype, str(dtype))


def _check_index_add_meta(out, index, source):
    """What eager index_add_ refuses and aten's meta kernel lets pass (the
    index's dtype, out's and source's dtypes and their shapes beside dim 0),
    with eager's messages, for the fake kernels; aten's meta checks the rest."""
    torch._check_index(index.dim() <= 1,
                       lambda: f"index_add_(): Index is supposed to be a vector, but got dim: {index.dim()} with type: "
                               f"{_scalar_type_name(index.dtype)} and size: {list(index.shape)}")
    torch._check(index.dtype in (torch.int32, torch.int64),
                 lambda: f"index_add_(): Expected dtype int32/int64 for index but got: {_scalar_type_name(index.dtype)}")
    rows = source.shape[0] if source.dim() else 1
    torch._check(index.numel() == rows,
                 lambda: f"index_add_(): Number of indices ({index.numel()}) should be equal to source.size(dim): "
                         f"({rows}), for dim: 0")
    torch._check(out.dtype == source.dtype,
                 lambda: f"index_add_(): self ({_scalar_type_name(out.dtype)}) and source "
                         f"({_scalar_type_name(source.dtype)}) must have the same scalar type")
    out_sizes, source_sizes = list(out.shape), list(source.shape)
    if out.dim() and source.dim():
        out_sizes, source_sizes = out_sizes[1:], source_sizes[1:]
    torch._check(out_sizes == source_sizes,
                 lambda: f"source tensor shape must match self tensor shape, excluding the specified dimension. "
                         f"Got self.shape = {list(out.shape)} source.shape = {list(source.shape)}")
    torch.ops.aten.index_add.default(out, 0, index, source)


@torch.library.register_fake("scatterptx::index_add_", lib=_lib)
def _index_add__fake(out, index, source):
    _check_index_add_meta(out, index, source)
    return None


@torch.library.register_fake("scatterptx::index_add", lib=_lib)
def _index_add_fake(out, index, source):
    _check_index_add_meta(out, index, source)
    return torch.empty_like(out, memory_format=torch.contiguous_format)


@torch.library.register_fake("scatterptx::weighted_index_add_", lib=_lib)
def _weighted_index_add__fake(out, index, source, weights):
    _check_weights(source, weights)
    _check_index_add_meta(out, index, source)
    return None


@torch.library.register_fake("scatterptx::weighted_index_add", lib=_lib)
def _weighted_index_add_fake(out, index, source, weights):
    _check_weights(source, weights)
    _check_index_add_meta(out, index, source)
    return torch.empty_like(out, memory_format=torch.contiguous_format)


@torch.library.register_fake("scatterptx::scatter_reduce_", lib=_lib)
def _scatter_reduce__fake(out, index, src, reduce, *, include_self=True):
    _check_scatter_reduce(out, index, src, reduce)
    return None


@torch.library.register_fake("scatterptx::scatter_reduce", lib=_lib)
def _scatter_reduce_fake(out, index, src, reduce, *, include_self=True):
    _check_scatter_reduce(out, index, src, reduce)
    return torch.empty_like(out, memory_format=torch.contiguous_format)


# ---------------------------------------------------------------------------
# Autograd


def _differentiating(*tensors):
    """Whether a call must go through its autograd.Function: a gradient
    wanted of one of tensors, or forward-mode AD (forward_ad.dual_level,
    torch.func.jvp) active, whose tangents only the Function carries."""
    return ((torch.is_grad_enabled() and any(t.requires_grad for t in tensors))
            or _forward_ad._current_level >= 0)


def _apply(function, *args):
    """function.apply(*args) as a C++ operator's autograd kernel would: the
    autograd (and forward AD) of the level the kernel runs at. Function.apply
    itself would hand the call to torch.func's transforms, which have already
    lifted this operator to this level."""
    if not torch._C._are_functorch_transforms_active():
        return super(torch.autograd.Function, function).apply(*args)
    with _functorch_autograd.enable_single_level_autograd_function():
        return super(torch.autograd.Function, function).apply(*args)


def _tangent(tangent, like):
    """tangent, or zeros where an input has none; like is (shape, dtype, device)."""
    if tangent is not None:
        return tangent
    shape, dtype, device = like
    return torch.zeros(shape, dtype=dtype, device=device)


def _like(t):
    return t.shape, t.dtype, t.device


# The Functions define setup_context apart from forward, as torch.func's
# transforms need; jvp gives forward-mode AD.
class _IndexAddFunction(torch.autograd.Function):
    @staticmethod
    def forward(out, index, source, keyset):
        with torch._C._AutoDispatchBelowAutograd():
            return _index_add_op.redispatch(keyset & torch._C._after_autograd_keyset, out, index, source)

    @staticmethod
    def setup_context(ctx, inputs, output):
        out, index, source, _ = inputs
        ctx.save_for_backward(index)
        ctx.save_for_forward(index)
        ctx.out_rows = out.shape[0] if out.dim() else 1  # torch takes a 0-dim out as one row
        ctx.source_shape = source.shape
        ctx.out_like = _like(out)  # for a missing tangent

    @staticmethod
    def jvp(ctx, out_t, index_t, source_t, keyset_t):
        (index,) = ctx.saved_tensors
        out_t = _tangent(out_t, ctx.out_like)
        return out_t if source_t is None else _index_add_op(out_t, index, source_t)

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        grad_out = grad if ctx.needs_input_grad[0] else None
        grad_source = None
        if ctx.needs_input_grad[2]:
            grad_source = source_grad(grad.reshape(-1) if grad.dim() == 0 else grad, index, ctx.out_rows)
            grad_source = grad_source.reshape(ctx.source_shape)
        return grad_out, None, grad_source, None


def _index_add_autograd(keyset, out, index, source):
    if _differentiating(out, source):
        return _apply(_IndexAddFunction, out, index, source, keyset)
    with torch._C._AutoDispatchBelowAutograd():
        return _index_add_op.redispatch(keyset & torch._C._after_autograd_keyset, out, index, source)


_INFERENCE_TENSOR = ("Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to "
                     "get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for "
                     "more details.")


def _check_in_place(out, *inputs, differentiating):
    """What torch's in-place operators refuse before they write: an inference
    tensor outside inference mode (where this kernel runs); and, where the
    functional operator and copy_ stand in (differentiating), memory shared
    with an input, which that path would hide."""
    if out.is_inference():
        raise RuntimeError(_INFERENCE_TENSOR)
    if differentiating:
        check_written_alone(out, *inputs)


def _index_add__autograd(keyset, out, index, source):
    differentiating = _differentiating(out, source)
    _check_in_place(out, index, source, differentiating=differentiating)
    if differentiating:
        # Through the functional operator and copy_, whose autograd rebases
        # out's history (and refuses a leaf that requires grad), as torch's
        # in-place operators do.
        out.copy_(_index_add_op(out, index, source))
        return None
    # What an ADInplaceOrView kernel does for a mutating operator, once the
    # kernel has run (an input it refuses changes nothing): readers of out
    # saved for backward must see that it changed.
    with torch._C._AutoDispatchBelowADInplaceOrView():
        _index_add__op.redispatch(keyset & torch._C._after_ADInplaceOrView_keyset, out, index, source)
    torch.autograd.graph.increment_version(out)


_lib.impl("index_add", _index_add_autograd, "Autograd", with_keyset=True)
_lib.impl("index_add_", _index_add__autograd, "Autograd", with_keyset=True)



class _WeightedIndexAddFunction(torch.autograd.Function):
    @staticmethod
    def forward(out, index, source, weights, keyset):
        with torch._C._AutoDispatchBelowAutograd():
            return _weighted_index_add_op.redispatch(keyset & torch._C._after_autograd_keyset, out, index, source,
                                                     weights)

    @staticmethod
    def setup_context(ctx, inputs, output):
        out, index, source, weights, _ = inputs
        ctx.save_for_backward(index, source, weights)
        ctx.save_for_forward(index, source, weights)
        ctx.out_like = _like(out)

    @staticmethod
    def jvp(ctx, out_t, index_t, source_t, weights_t, keyset_t):
        # The product rule: w * source_t and weights_t * source.
        index, source, weights = ctx.saved_tensors
        result_t = _tangent(out_t, ctx.out_like)
        if source_t is not None:
            result_t = _weighted_index_add_op(result_t, index, source_t, weights)
        if weights_t is not None:
            result_t = _weighted_index_add_op(result_t, index, source, weights_t)
        return result_t

    @staticmethod
    def backward(ctx, grad):
        index, source, weights = ctx.saved_tensors
        grad_source, grad_weights = weighted_source_grads(grad, index, source, weights, ctx.needs_input_grad[2],
                                                          ctx.needs_input_grad[3])
        return grad if ctx.needs_input_grad[0] else None, None, grad_source, grad_weights, None


def _weighted_index_add_autograd(keyset, out, index, source, weights):
    if _differentiating(out, source, weights):
        return _apply(_WeightedIndexAddFunction, out, index, source, weights, keyset)
    with torch._C._AutoDispatchBelowAutograd():
        return _weighted_index_add_op.redispatch(keyset & torch._C._after_autograd_keyset, out, index, source, weights)


def _weighted_index_add__autograd(keyset, out, index, source, weights):
    differentiating = _differentiating(out, source, weights)
    _check_in_place(out, index, source, weights, differentiating=differentiating)
    if differentiating:
        out.copy_(_weighted_index_add_op(out, index, source, weights))  # as _index_add__autograd
        return None
    with torch._C._AutoDispatchBelowADInplaceOrView():
        _weighted_index_add__op.redispatch(keyset & torch._C._after_ADInplaceOrView_keyset, out, index, source,
                                           weights)
    torch.autograd.graph.increment_version(out)  # as _index_add__autograd



class _ScatterReduceFunction(torch.autograd.Function):
    @staticmethod
    def forward(out, index, src, reduce, include_self, keyset):
        with torch._C._AutoDispatchBelowAutograd():
            return _scatter_reduce_op.redispatch(keyset & torch._C._after_autograd_keyset, out, index, src, reduce,
                                                 include_self=include_self)

    @staticmethod
    def setup_context(ctx, inputs, output):
        out, index, src, reduce, include_self, _ = inputs
        ctx.reduce, ctx.include_self = reduce, include_self
        saved = (index, out, src, output) if reduce in ("amax", "amin") else (index,)
        ctx.save_for_backward(*saved)
        ctx.save_for_forward(*saved)
        ctx.out_like, ctx.src_like = _like(out), _like(src)

    @staticmethod
    def jvp(ctx, out_t, index_t, src_t, reduce_t, include_self_t, keyset_t):
        index, *values = ctx.saved_tensors
        out_t, src_t = _tangent(out_t, ctx.out_like), _tangent(src_t, ctx.src_like)
        if ctx.reduce in ("sum", "mean"):  # linear in out and src
            return _scatter_reduce_op(out_t, index, src_t, ctx.reduce, include_self=ctx.include_self)
        return scatter_reduce_tangent(out_t, src_t, index, ctx.include_self, *values)

    @staticmethod
    def backward(ctx, grad):
        index, *values = ctx.saved_tensors
        grad_out, grad_src = scatter_reduce_grads(grad, index, ctx.reduce, ctx.include_self, *values)
        return (grad_out if ctx.needs_input_grad[0] else None, None, grad_src if ctx.needs_input_grad[2] else None,
                None, None, None)


def _scatter_reduce_autograd(keyset, out, index, src, reduce, *, include_self=True):
    if _differentiating(out, src):
        return _apply(_ScatterReduceFunction, out, index, src, reduce, include_self, keyset)
    with torch._C._AutoDispatchBelowAutograd():
        return _scatter_reduce_op.redispatch(keyset & torch._C._after_autograd_keyset, out, index, src, reduce,
                                             include_self=include_self)


def _scatter_reduce__autograd(keyset, out, index, src, reduce, *, include_self=True):
    differentiating = _differentiating(out, src)
    _check_in_place(out, index, src, differentiating=differentiating)
    if differentiating:
        # amax and amin save out for their backward: a copy, as out is overwritten.
        before = out.clone() if reduce in ("amax", "amin") else out
        out.copy_(_scatter_reduce_op(before, index, src, reduce, include_self=include_self))
        return None
    with torch._C._AutoDispatchBelowADInplaceOrView():
        _scatter_reduce__op.redispatch(keyset & torch._C._after_ADInplaceOrView_keyset, out, index, src, reduce,
                                       include_self=include_self)
    torch.autograd.graph.increment_version(out)  # as _index_add__autograd


_lib.impl("weighted_index_add", _weighted_index_add_autograd, "Autograd", with_keyset=True)
_lib.impl("weighted_index_add_", _weighted_index_add__autograd, "Autograd", with_keyset=True)
_lib.impl("scatter_reduce", _scatter_reduce_autograd, "Autograd", with_keyset=True)
_lib.impl("scatter_reduce_", _scatter_reduce__autograd, "Autograd", with_keyset=True)


# ---------------------------------------------------------------------------
# Python entry points

def _straight_to_cuda_kernel(out, index, src):
    """Whether the dispatcher would take these tensors straight to the CUDA
    kernel: plain CUDA tensors, no gradient wanted, and no compiler, tracing,
    torch_function or torch_dispatch mode or functorch transform that must see
    the operator. Checking this costs a fraction of the dispatcher's Python
    kernels (Autograd, then CUDA), which would make the small calls' host time
    about half again as long as torch's own index_add_."""
    return (not torch.compiler.is_compiling()
            and type(out) is torch.Tensor and type(index) is torch.Tensor and type(src) is torch.Tensor
            and out.is_cuda
            and not (torch.is_grad_enabled() and (out.requires_grad or src.requires_grad))
            and _forward_ad._current_level < 0
            and not torch._C._len_torch_dispatch_stack()
            and not torch._C._is_torch_function_mode_enabled()
            and not torch._C._are_functorch_transforms_active())


def index_add(out, index, src):
    """out + the rows of src added at index, as a new tensor: torch.index_add(out, 0, index, src)."""
    if _straight_to_cuda_kernel(out, index, src):
        return _index_add_functional_cuda(out, index, src)
    return _index_add_op(out, index, src)


def index_add_(out, index, src):
    """out[index[i], :] += src[i, :] in place, as out.index_add_(0, index, src); returns out."""
    if _straight_to_cuda_kernel(out, index, src) and _writable_here(out):
        _index_add_cuda(out, index, src)
        torch._C._increment_version((out,))  # as the dispatcher's path does, after a kernel that did not raise
        return out
    _index_add__op(out, index, src)
    return out


def _writable_here(out):
    """Whether out may be written in place here without the dispatcher's
    check: any tensor but an inference one outside inference mode."""
    return not out.is_inference() or torch.is_inference_mode_enabled()


def _straight_with_weights(out, index, src, weights):
    return (_straight_to_cuda_kernel(out, index, src) and type(weights) is torch.Tensor
            and not (torch.is_grad_enabled() and weights.requires_grad))


def weighted_index_add(out, index, src, weights):
    """out + weights[i] * src[i, :] added at row index[i], as a new tensor;
    weights (one per row of src) float32 or src's dtype, the products taken
    in float32 (float64 for float64). Gradients for out, src and weights."""
    if _straight_with_weights(out, index, src, weights):
        return _weighted_index_add_functional_cuda(out, index, src, weights)
    return _weighted_index_add_op(out, index, src, weights)


def weighted_index_add_(out, index, src, weights):
    """out[index[i], :] += weights[i] * src[i, :] in place; returns out."""
    if _straight_with_weights(out, index, src, weights) and _writable_here(out):
        _weighted_index_add_cuda(out, index, src, weights)
        torch._C._increment_version((out,))
        return out
    _weighted_index_add__op(out, index, src, weights)
    return out


def scatter_reduce(out, index, src, reduce, *, include_self=True):
    """torch.scatter_reduce(out, 0, index.view(-1, 1).expand_as(src), src, reduce,
    include_self=include_self) as a new tensor, for 2-D out and src and a 1-D
    int32 or int64 index of src's rows; reduce "sum", "mean", "amax" or
    "amin". Targets no row reaches keep out's value; a reached one combines
    its rows, and its own value only with include_self (mean counts it as
    one more row). Gradients as torch's."""
    if _straight_to_cuda_kernel(out, index, src):
        return _scatter_reduce_functional_cuda(out, index, src, reduce, include_self=include_self)
    return _scatter_reduce_op(out, index, src, reduce, include_self=include_self)


def scatter_reduce_(out, index, src, reduce, *, include_self=True):
    """out.scatter_reduce_(0, index.view(-1, 1).expand_as(src), src, reduce,
    include_self=include_self) in place; returns out. See scatter_reduce."""
    if _straight_to_cuda_kernel(out, index, src) and _writable_here(out):
        _scatter_reduce_cuda(out, index, src, reduce, include_self=include_self)
        torch._C._increment_version((out,))
        return out
    _scatter_reduce__op(out, index, src, reduce, include_self=include_self)
    return out


def scatter(src, index, dim=0, out=None, dim_size=None, reduce="sum"):
    """torch_scatter's scatter and PyG's torch_geometric.utils.scatter for a 1-D
    index along dim 0: the rows of src reduced into row index[i] of the result.

    reduce: "sum" or "add"; "mean"; "max" or "min" (also spelt "amax",
    "amin"), as PyG computes them: the result starts at zero, each reached
    row is the mean, maximum or minimum of its rows alone (scatter_reduce
    with include_self=False), and a row no index names stays 0. "mul" and
    torch_scatter's other reductions raise NotImplementedError.

    out given (sum only): the rows are added into it (torch_scatter's
    semantics) and it is returned; dim_size is then ignored. Otherwise the
    result has dim_size rows, or index.max() + 1 when dim_size is None, which
    reads the index on the host (a synchronisation, as in PyG; pass dim_size
    under torch.compile and CUDA graph capture).

    Passed by position, PyG's order (src, index, dim, dim_size, reduce) is
    taken too: a number or a reduce's name where out or dim_size stands.
    """
    if isinstance(dim_size, str) or (out is not None and not isinstance(out, torch.Tensor)):
        if isinstance(dim_size, str) and reduce != "sum":
            raise TypeError("scatterptx.torch.scatter: reduce given twice (PyG's order is src, index, dim, "
                            "dim_size, reduce)")
        if out is not None and not isinstance(out, (int, torch.SymInt)):
            raise TypeError(f"scatterptx.torch.scatter: out must be a tensor, or in PyG's order dim_size an int, "
                            f"got {type(out).__name__}")
        if dim_size is not None and not isinstance(dim_size, str):
            raise TypeError("scatterptx.torch.scatter: dim_size given twice (PyG's order is src, index, dim, "
                            "dim_size, reduce)")
        out, dim_size, reduce = None, out, (dim_size if isinstance(dim_size, str) else reduce)
    if reduce not in _SCATTER_REDUCES:
        if reduce in _OTHER_REDUCES:
            raise NotImplementedError(f"scatterptx.torch.scatter: reduce={reduce!r} is not supported (sum, add, "
                                      "mean, max, min, amax and amin are)")
        raise ValueError(f"scatterptx.torch.scatter: unknown reduce {reduce!r}")
    reduce = _SCATTER_REDUCES[reduce]
    if out is not None and reduce != "sum":
        raise NotImplementedError(f"scatterptx.torch.scatter: out= is supported with reduce 'sum' (added into); "
                                  f"for {reduce!r} into an existing tensor use scatter_reduce_")
    if src.dim() not in (1, 2) or dim not in (0, -src.dim()):
        raise NotImplementedError(f"scatterptx.torch.scatter: only dim 0 of 1-D or 2-D src is supported, got "
                                  f"dim={dim} for {src.dim()}-D src")
    if index.dim() != 1:
        raise NotImplementedError(f"scatterptx.torch.scatter: only a 1-D index is supported, got {index.dim()}-D")
    if src.dim() == 1:
        if out is not None:
            index_add_(out.unsqueeze(1), index, src.unsqueeze(1))
            return out
        return scatter(src.unsqueeze(1), index, 0, None, dim_size, reduce).squeeze(1)
    if out is not None:
        return index_add_(out, index, src)
    if dim_size is None:
        dim_size = int(index.max()) + 1 if index.numel() > 0 else 0
    result = src.new_zeros((dim_size, src.shape[1]))
    wants_grad = torch.is_grad_enabled() and src.requires_grad
    if reduce == "sum":
        return index_add(result, index, src) if wants_grad else index_add_(result, index, src)
    if wants_grad:
        return scatter_reduce(result, index, src, reduce, include_self=False)
    return scatter_reduce_(result, index, src, reduce, include_self=False)


# The drop-in switch that routes torch's own calls here: scatterptx/dropin.py.
from .dropin import disable, enable, enabled, reset_route_counts, route_counts  # noqa: E402
