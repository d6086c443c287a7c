"""Reading torch tensors and __cuda_array_interface__ objects into the numbers
of the C ABI: pointers, shapes, row strides in elements and type names."""

import sys
from typing import NamedTuple

from ._binding import INDEX_TYPES

# __cuda_array_interface__ typestr -> dtype; bf16 has no typestr of its own.
_TYPESTR_DTYPES = {"<f4": "f32", "<f2": "f16", "<f8": "f64"}
_TYPESTR_INDEX = {"<i4": "int32", "<i8": "int64"}
_ITEMSIZE = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8, "int32": 4, "int64": 8}


# Every call reads three arrays, so the per-array work is kept to a few
# attribute reads: a call on small inputs costs about as much host time as
# the kernel takes.
_torch_dtype_names = None


def is_torch_tensor(value):
    # Nothing is a torch tensor until torch has been imported by the caller.
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _torch_names():
    global _torch_dtype_names
    if _torch_dtype_names is None:
        import torch

        _torch_dtype_names = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16",
                              torch.float64: "f64", torch.int32: "int32", torch.int64: "int64"}
    return _torch_dtype_names


def _torch_view(tensor, what, rank):
    if not tensor.is_cuda:
        raise ValueError(f"{what} must be a CUDA tensor")
    shape = tuple(tensor.shape)
    if len(shape) != rank:
        raise ValueError(f"{what} must have {rank} dimension(s), has {len(shape)}")
    name = _torch_names().get(tensor.dtype)
    if name is None:
        raise ValueError(f"{what} has unsupported dtype {tensor.dtype}")
    strides = tensor.stride()
    if rank == 2 and shape[1] > 1 and strides[1] != 1:
        raise ValueError(f"{what} rows must be contiguous (stride(1) == 1)")
    if rank == 1 and shape[0] > 1 and strides[0] != 1:
        raise ValueError(f"{what} must be contiguous")
    if rank == 1:
        return tensor.data_ptr(), shape, 1, name
    # A single row's stride is arbitrary in torch; any other is passed as it
    # is, so that rows that overlap (expand, as_strided) meet the library's
    # stride check instead of a made-up stride.
    return tensor.data_ptr(), shape, strides[0] if shape[0] > 1 else shape[1], name


def _cai_view(value, what, rank, dtype=None):
    cai = value.__cuda_array_interface__
    shape = tuple(cai["shape"])
    if len(shape) != rank:
        raise ValueError(f"{what} must have {rank} dimension(s), has {len(shape)}")
    typestr = cai["typestr"]
    name = dtype or _TYPESTR_DTYPES.get(typestr) or _TYPESTR_INDEX.get(typestr)
    if name is None:
        raise ValueError(f"{what} has unsupported typestr {typestr!r} (pass dtype= for bf16)")
    itemsize = _ITEMSIZE[name]
    strides = cai.get("strides")
    if strides is None:
        row_stride = shape[1] if rank == 2 else 1
    else:
        if rank == 2 and shape[1] > 1 and strides[1] != itemsize:
            raise ValueError(f"{what} rows must be contiguous")
        if strides[0] % itemsize != 0:
            raise ValueError(f"{what} row stride is not a whole number of elements")
        row_stride = strides[0] // itemsize
    return cai["data"][0], shape, row_stride, name


def view(value, what, rank, dtype=None):
    """(pointer, shape, row stride in elements, type name) of a rank-1 or rank-2 array."""
    if is_torch_tensor(value):
        return _torch_view(value, what, rank)
    if hasattr(value, "__cuda_array_interface__"):
        return _cai_view(value, what, rank, dtype)
    raise TypeError(f"{what} must be a torch tensor or have __cuda_array_interface__")


class Problem(NamedTuple):
    """out[index[i], :] += src[i, :] as the C ABI's scatter_add_args describe it."""

    out: int
    out_rows: int
    out_row_stride: int
    src: int
    src_rows: int
    src_row_stride: int
    cols: int
    dtype: str
    index: int
    index_type: str


def read_problem(out, index, src, dtype=None):
    """The Problem of out.index_add_(0, index, src); ValueError when the arrays disagree."""
    out_ptr, out_shape, out_stride, out_dtype = view(out, "out", 2, dtype)
    src_ptr, src_shape, src_stride, src_dtype = view(src, "src", 2, dtype)
    index_ptr, index_shape, _, index_type = view(index, "index", 1)
    if out_dtype != src_dtype:
        raise ValueError(f"out is {out_dtype} but src is {src_dtype}")
    if index_type not in INDEX_TYPES:
        raise ValueError(f"index must be int32 or int64, is {index_type}")
    if out_shape[1] != src_shape[1]:
        raise ValueError(f"out has {out_shape[1]} columns but src has {src_shape[1]}")
    if index_shape[0] != src_shape[0]:
        raise ValueError(f"index has {index_shape[0]} entries but src has {src_shape[0]} rows")
    return Problem(out_ptr, out_shape[0], out_stride, src_ptr, src_shape[0], src_stride, src_shape[1],
                   src_dtype, index_ptr, index_type)


def workspace_view(workspace):
    """(pointer, bytes) of a contiguous 1-D device buffer: a torch tensor of any
    dtype, or a __cuda_array_interface__ object."""
    if is_torch_tensor(workspace):
        if not workspace.is_cuda:
            raise ValueError("workspace must be a CUDA tensor")
        if not workspace.is_contiguous():
            raise ValueError("workspace must be contiguous")
        return workspace.data_ptr(), workspace.numel() * workspace.element_size()
    if hasattr(workspace, "__cuda_array_interface__"):
        cai = workspace.__cuda_array_interface__
        shape = tuple(cai["shape"])
        if len(shape) != 1:
            raise ValueError(f"workspace must have 1 dimension, has {len(shape)}")
        itemsize = int(cai["typestr"][2:])  # "|u1", "<f4": the digits are the element size
        strides = cai.get("strides")
        if strides is not None and shape[0] > 1 and strides[0] != itemsize:
            raise ValueError("workspace must be contiguous")
        return cai["data"][0], shape[0] * itemsize
    raise TypeError("workspace must be a torch tensor or have __cuda_array_interface__")


def torch_stream(tensor):
    """torch's current stream on tensor's device, as a CUstream int."""
    import torch

    # The raw handle without building a torch.cuda.Stream object (a few
    # microseconds a call); torch's own generated kernels read it this way.
    # The public call stays as the fallback for builds without it.
    raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw_stream is not None:
        return raw_stream(tensor.get_device())
    return torch.cuda.current_stream(tensor.device).cuda_stream


_NO_CONTEXT = 3  # SCATTERPTX_ERROR_NO_CONTEXT


def on_device(device_index, call):
    """call()'s result, run with torch's device device_index current (the
    library runs in the thread's current context), and run again once that
    device's primary context is bound if it answered NO_CONTEXT (a thread
    that has made no CUDA runtime call yet has none)."""
    import torch

    previous = torch._C._cuda_exchangeDevice(device_index)
    try:
        result = call()
        if result == _NO_CONTEXT:
            torch.cuda.mem_get_info(device_index)  # any runtime call binds the device's primary context
            result = call()
        return result
    finally:
        torch._C._cuda_maybeExchangeDevice(previous)


def on_tensor_device(array, call):
    """call()'s status on a torch tensor's device (on_device), as torch's own
    ops run on their tensors' device; other arrays run as they are, in the
    current context."""
    return on_device(array.get_device(), call) if is_torch_tensor(array) else call()
