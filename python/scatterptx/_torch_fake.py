"""The operators' fake (meta) kernels, so that torch.compile(fullgraph=True)
and torch.export trace them as single opaque nodes: the output's metadata,
and the errors eager mode raises for invalid input, with eager's messages."""

import torch

from ._torch_kernels import _check_scatter_reduce, _check_weights
from ._torch_library import _lib

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
                 lambda: "index_add_(): Expected dtype int32/int64 for index but got: "
                         f"{_scalar_type_name(index.dtype)}")
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
