"""The operators' kernels by device: the library on CUDA tensors
(_torch_call), torch's own ops elsewhere and where the library cannot take
the tensors; the contracts of the weighted sums and of scatter_reduce, checked
alike on every device and by the fake kernels (_torch_fake)."""

import torch

from ._torch_call import (_INDEX_TYPES, _count_fallback, _fallback_reason, _launch_as_is, _reduce_fallback_reason,
                          _run_library)
from ._torch_library import _lib
from ._torch_math import _weighted_rows

_REDUCES = ("sum", "mean", "amax", "amin")  # scatter_reduce's, as torch names them


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
