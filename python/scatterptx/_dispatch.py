"""scatter_add_ for torch tensors, __cuda_array_interface__ objects and raw pointers."""

import ctypes

from ._arrays import Problem, is_torch_tensor, on_tensor_device, read_problem, torch_stream
from ._binding import (DTYPES, GROUPINGS, INDEX_CHECKS, INDEX_TYPES, PATHS, Args, check, library,
                       note_torch_device_ready)
from ._torch_allocator import torch_allocator


def check_address(name, value):
    """ValueError for an address ctypes would wrap around silently."""
    if not 0 <= value < 1 << 64:
        raise ValueError(f"{name} = {value} is not a 64-bit address")
    return value


def _check_fields(problem):
    """ValueError for what ctypes would not pass as given: a name the C ABI has
    no value for, and a size or address outside its C type (ctypes would
    wrap it around silently, 2**64 + 10 rows becoming 10)."""
    if problem.dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {problem.dtype!r}")
    if problem.index_type not in INDEX_TYPES:
        raise ValueError(f"index_type must be one of {', '.join(INDEX_TYPES)}, got {problem.index_type!r}")
    for name in ("out_rows", "out_row_stride", "src_rows", "src_row_stride", "cols"):
        if not -(1 << 63) <= getattr(problem, name) < 1 << 63:
            raise ValueError(f"{name} = {getattr(problem, name)} does not fit in 64 bits")
    for name in ("out", "src", "index"):
        check_address(name, getattr(problem, name))


def problem_args(problem, check_index=False, path="auto", grouping="auto"):
    """The C ABI's scatter_add_args for a Problem."""
    _check_fields(problem)
    args = Args()
    library().scatterptx_scatter_add_args_init(ctypes.byref(args))
    args.out, args.out_rows, args.out_row_stride = problem.out, problem.out_rows, problem.out_row_stride
    args.src, args.src_rows, args.src_row_stride = problem.src, problem.src_rows, problem.src_row_stride
    args.cols = problem.cols
    args.dtype = DTYPES[problem.dtype]
    args.index = problem.index
    args.index_type = INDEX_TYPES[problem.index_type]
    args.index_check = INDEX_CHECKS["checked" if check_index else "record"]
    if path not in PATHS:
        raise ValueError(f"path must be one of {', '.join(PATHS)}, got {path!r}")
    if grouping not in GROUPINGS:
        raise ValueError(f"grouping must be one of {', '.join(GROUPINGS)}, got {grouping!r}")
    args.path = PATHS[path]
    args.grouping = GROUPINGS[grouping]
    return args


def scatter_add_pointers(out, out_rows, out_row_stride, src, src_rows, src_row_stride, cols, dtype,
                         index, index_type="int64", stream=0, check_index=False, path="auto", grouping="auto"):
    """out[index[i], :] += src[i, :] on raw device pointers (ints); strides in elements."""
    problem = Problem(out, out_rows, out_row_stride, src, src_rows, src_row_stride, cols, dtype, index,
                      index_type)
    args = problem_args(problem, check_index, path, grouping)
    check(library().scatterptx_scatter_add(ctypes.byref(args), ctypes.c_void_p(stream or None)))


def scatter_add_(out, index, src, *, stream=None, check_index=False, path="auto", grouping="auto",
                 dtype=None):
    """In place, like ``out.index_add_(0, index, src)``; returns out.

    Torch tensors run on their own device, whatever the current one is.
    stream: a CUstream as an int; by default torch's current stream for torch
    tensors, else the legacy default stream. check_index=True synchronises and
    raises on an out-of-range index (rows with valid indices are still added).
    grouping: "auto" groups the rows by target where that is faster (f16/bf16
    sums then accumulate in f32), with a workspace from torch's caching
    allocator for torch tensors; "off" never groups or allocates;
    "no_fallback" raises where the workspace cannot be had. dtype names the
    element type of __cuda_array_interface__ inputs without a typestr of
    their own (bf16).
    """
    problem = read_problem(out, index, src, dtype)
    if stream is None:
        stream = torch_stream(out) if is_torch_tensor(out) else 0
    args = problem_args(problem, check_index, path, grouping)
    allocator = torch_allocator() if is_torch_tensor(out) else None  # torch's pool for torch's tensors alone
    check(on_tensor_device(out, lambda: library().scatterptx_scatter_add_with_allocator(
        ctypes.byref(args), allocator, ctypes.c_void_p(stream or None))))
    note_kernels_loaded(out, problem)
    return out


def note_kernels_loaded(out, problem):
    """After a call on torch tensors that had rows to add (an empty one loads
    nothing): the library is ready on their device, for the torch operators."""
    if is_torch_tensor(out) and problem.src_rows and problem.cols:
        note_torch_device_ready(out.get_device())
