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
import torch.autograd.forward_ad as _forward_ad

from . import _torch_autograd, _torch_fake  # noqa: F401 - their kernels register on import
from ._torch_call import fallback_counts, reset_fallback_counts
from ._torch_kernels import (_index_add_cuda, _index_add_functional_cuda, _scatter_reduce_cuda,
                             _scatter_reduce_functional_cuda, _weighted_index_add_cuda,
                             _weighted_index_add_functional_cuda)
from ._torch_library import (_index_add__op, _index_add_op, _scatter_reduce__op, _scatter_reduce_op,
                             _weighted_index_add__op, _weighted_index_add_op)

__all__ = ["disable", "enable", "enabled", "fallback_counts", "index_add", "index_add_", "reset_fallback_counts",
           "reset_route_counts", "route_counts", "scatter", "scatter_reduce", "scatter_reduce_", "weighted_index_add",
           "weighted_index_add_"]

# scatter's reduce (torch_scatter's and PyG's names) -> scatter_reduce's
_SCATTER_REDUCES = {"sum": "sum", "add": "sum", "mean": "mean", "max": "amax", "min": "amin", "amax": "amax",
                    "amin": "amin"}
# Reductions torch_scatter and PyG offer that the library does not have.
_OTHER_REDUCES = ("mul", "prod", "any")


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
