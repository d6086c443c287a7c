"""scatter_add_ for torch tensors, __cuda_array_interface__ objects and raw pointers."""

import ctypes

from ._binding import DTYPES, INDEX_CHECKS, INDEX_TYPES, PATHS, Args, check, library

# __cuda_array_interface__ typestr -> dtype; bf16 has no typestr of its own.
_TYPESTR_DTYPES = {"<f4": "f32", "<f2": "f16", "<f8": "f64"}
_TYPESTR_INDEX = {"<i4": "int32", "<i8": "int64"}
_ITEMSIZE = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8, "int32": 4, "int64": 8}


def scatter_add_pointers(out, out_rows, out_row_stride, src, src_rows, src_row_stride, cols, dtype,
                         index, index_type="int64", stream=0, check_index=False, path="auto"):
    """out[index[i], :] += src[i, :] on raw device pointers (ints); strides in elements."""
    args = Args()
    library().scatterptx_scatter_add_args_init(ctypes.byref(args))
    args.out, args.out_rows, args.out_row_stride = out, out_rows, out_row_stride
    args.src, args.src_rows, args.src_row_stride = src, src_rows, src_row_stride
    args.cols = cols
    args.dtype = DTYPES[dtype]
    args.index = index
    args.index_type = INDEX_TYPES[index_type]
    args.index_check = INDEX_CHECKS["checked" if check_index else "record"]
    args.path = PATHS[path]
    check(library().scatterptx_scatter_add(ctypes.byref(args), ctypes.c_void_p(stream or None)))


def _is_torch_tensor(value):
    return type(value).__module__.split(".")[0] == "torch" and hasattr(value, "data_ptr")


def _torch_view(tensor, what, rank):
    import torch  # only reached when torch tensors were passed in

    names = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16", torch.float64: "f64",
             torch.int32: "int32", torch.int64: "int64"}
    if not tensor.is_cuda:
        raise ValueError(f"{what} must be a CUDA tensor")
    if tensor.dim() != rank:
        raise ValueError(f"{what} must have {rank} dimension(s), has {tensor.dim()}")
    if tensor.dtype not in names:
        raise ValueError(f"{what} has unsupported dtype {tensor.dtype}")
    if rank == 2 and tensor.size(1) > 1 and tensor.stride(1) != 1:
        raise ValueError(f"{what} rows must be contiguous (stride(1) == 1)")
    if rank == 1 and tensor.size(0) > 1 and tensor.stride(0) != 1:
        raise ValueError(f"{what} must be contiguous")
    shape = tuple(tensor.shape)
    stride = tensor.stride(0) if rank == 2 else 1
    return tensor.data_ptr(), shape, max(stride, shape[1] if rank == 2 else 1), names[tensor.dtype]


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


def _view(value, what, rank, dtype=None):
    if _is_torch_tensor(value):
        return _torch_view(value, what, rank)
    if hasattr(value, "__cuda_array_interface__"):
        return _cai_view(value, what, rank, dtype)
    raise TypeError(f"{what} must be a torch tensor or have __cuda_array_interface__")


def _torch_stream(tensor):
    import torch

    return torch.cuda.current_stream(tensor.device).cuda_stream


def scatter_add_(out, index, src, *, stream=None, check_index=False, path="auto", dtype=None):
    """In place, like ``out.index_add_(0, index, src)``; returns out.

    stream: a CUstream as an int; by default torch's current stream for torch
    tensors, else the legacy default stream. check_index=True synchronises and
    raises on an out-of-range index (rows with valid indices are still added).
    dtype names the element type of __cuda_array_interface__ inputs without a
    typestr of their own (bf16).
    """
    out_ptr, out_shape, out_stride, out_dtype = _view(out, "out", 2, dtype)
    src_ptr, src_shape, src_stride, src_dtype = _view(src, "src", 2, dtype)
    index_ptr, index_shape, _, index_type = _view(index, "index", 1)
    if out_dtype != src_dtype:
        raise ValueError(f"out is {out_dtype} but src is {src_dtype}")
    if index_type not in INDEX_TYPES:
        raise ValueError(f"index must be int32 or int64, is {index_type}")
    if out_shape[1] != src_shape[1]:
        raise ValueError(f"out has {out_shape[1]} columns but src has {src_shape[1]}")
    if index_shape[0] != src_shape[0]:
        raise ValueError(f"index has {index_shape[0]} entries but src has {src_shape[0]} rows")
    if stream is None:
        stream = _torch_stream(out) if _is_torch_tensor(out) else 0
    scatter_add_pointers(out_ptr, out_shape[0], out_stride, src_ptr, src_shape[0], src_stride,
                         src_shape[1], src_dtype, index_ptr, index_type, stream, check_index, path)
    return out
