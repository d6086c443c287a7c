"""The library call for torch tensors (scatterptx.torch's CUDA kernels):
whether the library can take a set of tensors, and if not why (the reasons
are warned about once and counted), the call itself on torch's current
stream of the tensors' device, and its fast path for the common case."""

import ctypes
import struct
import threading
import warnings

import torch

from . import _binding
from ._arrays import on_device
from ._torch_allocator import torch_allocator

_SUPPORTED_DTYPES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16", torch.float64: "f64"}
_INDEX_TYPES = {torch.int32: "int32", torch.int64: "int64"}

# The grouped kernels' limits (u32 source positions and keys): every reduce
# but a sum with include_self runs grouped only (scatterptx.h).
_MAX_GROUPED_ROWS = 2**32 - 1
_MAX_GROUPED_TARGETS = 2**32 - 2

# ---------------------------------------------------------------------------
# Fallback accounting

_fallback_lock = threading.Lock()
_fallback_counts = {}


def fallback_counts():
    """{reason: calls} of the calls that ran torch's own op (index_add_ or
    scatter_reduce_) instead of the library, since the process started (or
    reset_fallback_counts)."""
    with _fallback_lock:
        return dict(_fallback_counts)


def reset_fallback_counts():
    """Forgets the counts; a reason seen again is warned about again."""
    with _fallback_lock:
        _fallback_counts.clear()


def _count_fallback(reason, torch_op="index_add_"):
    with _fallback_lock:
        first = reason not in _fallback_counts
        _fallback_counts[reason] = _fallback_counts.get(reason, 0) + 1
    if first:
        warnings.warn(f"scatterptx: {reason}; running torch's {torch_op} instead (warned once per reason; "
                      "see scatterptx.torch.fallback_counts())", RuntimeWarning, stacklevel=4)


# ---------------------------------------------------------------------------
# The library call

_capability = {}  # device index -> (major, minor)
# torch built for ROCm calls AMD GPUs "cuda" and reports gfx9xx as (9, x);
# the library runs on NVIDIA's driver only.
_ROCM = torch.version.hip is not None
_ROCM_REASON = "a ROCm build of torch (the library runs on NVIDIA GPUs)"
_args_template = None
_library_fn = None
_allocator = None  # torch's caching allocator, for the calls' grouping workspaces


def _device_capability(device_index):
    found = _capability.get(device_index)
    if found is None:
        found = _capability[device_index] = torch.cuda.get_device_capability(device_index)
    return found


def _runs_as_is(t):
    """The library reads t as it is: 2-D, unit column stride, rows that do not overlap."""
    rows, cols = t.shape
    return (cols <= 1 or t.stride(1) == 1) and (rows <= 1 or t.stride(0) >= cols)


def _row_stride(t):
    return t.stride(0) if t.shape[0] > 1 else t.shape[1]


def _elements_may_overlap(t):
    """Whether two elements of t may share memory: unless each stride, from
    the smallest, passes the extent of the dimensions below it (sufficient,
    not necessary: expand and as_strided views with overlapping rows fail)."""
    extent = 0
    for stride, size in sorted((stride, size) for size, stride in zip(t.shape, t.stride()) if size > 1):
        if stride <= extent:
            return True
        extent += stride * (size - 1)
    return False


def _fallback_reason(out, index, source):
    """Why the library cannot take these tensors (None when it can). Invalid
    combinations get a reason too: torch's op then raises torch's error."""
    if out.dim() != 2 or source.dim() != 2 or index.dim() != 1:
        return f"{out.dim()}-D out, {index.dim()}-D index, {source.dim()}-D src (the library takes 2-D, 1-D, 2-D)"
    if out.dtype not in _SUPPORTED_DTYPES:
        return f"dtype {out.dtype} (the library takes float32, float16, bfloat16, float64)"
    if index.dtype not in _INDEX_TYPES:
        return f"index dtype {index.dtype}"
    if _elements_may_overlap(out):  # torch adds into each alias; a copy written back would not
        return "out's elements may share memory"
    if _ROCM:
        return _ROCM_REASON
    device = out.get_device()
    if source.get_device() != device or index.get_device() != device:
        return "tensors on different devices"
    if source.dtype != out.dtype or source.shape[1] != out.shape[1] or index.shape[0] != source.shape[0]:
        return "mismatched shapes or dtypes"
    major, minor = _device_capability(device)
    if major < 9:
        return f"compute capability {major}.{minor} (the library needs 9.0 or newer)"
    return _first_call_reason(device)


def _reduce_fallback_reason(out, index, source, reduce="sum", include_self=True, weights=None):
    """_fallback_reason for a scatter_reduce or a weighted sum: also weights in
    out's memory, and a reduce that runs grouped only beyond grouping's limits."""
    reason = _fallback_reason(out, index, source)
    if reason is not None:
        return reason
    if weights is not None and out.numel() and weights.untyped_storage().data_ptr() == out.untyped_storage().data_ptr():
        return "weights share memory with out"
    if (reduce != "sum" or not include_self) and (source.shape[0] > _MAX_GROUPED_ROWS
                                                   or out.shape[0] > _MAX_GROUPED_TARGETS):
        return (f"reduce={reduce!r}, include_self={include_self} beyond 2^32 - 1 source rows or 2^32 - 2 targets "
                "(it runs grouped only)")
    return None


def _make_context_current(device_index):
    # A thread that has made no CUDA runtime call yet has no current context
    # for the driver API; any runtime call binds the device's primary context.
    torch.cuda.mem_get_info(device_index)


_prepared_devices = set()  # devices whose context has the library's kernels loaded
_CAPTURED_FIRST_CALL = ("a first call on the device inside a CUDA graph capture (the library loads its kernels and "
                        "allocates then; run one call, or scatterptx.prepare(), before capturing)")


def note_prepared(device_index):
    """scatterptx.prepare() made the library ready on the device."""
    _prepared_devices.add(device_index)


def _first_call_reason(device_index):
    """None once the library is ready in the device's context, preparing it
    on the first call; a reason while that first call would fall inside a
    CUDA graph capture, which module loading and allocation would break
    (torch's own op captures instead)."""
    if device_index in _prepared_devices:
        return None
    outcome = on_device(device_index, lambda: _CAPTURED_FIRST_CALL if torch.cuda.is_current_stream_capturing()
                        else _binding.library().scatterptx_prepare())
    if outcome == _CAPTURED_FIRST_CALL:
        return outcome
    _binding.check(outcome)
    _prepared_devices.add(device_index)
    return None


def _launch(out, index, source, device_index, reduce="sum", include_self=True, weights=None):
    """out[index[i], :] += source[i, :] by the library (weights[i] * source[i, :]
    with weights; as torch's scatter_reduce_ for another reduce or without
    include_self), on torch's current stream of device_index; out and source
    satisfy _runs_as_is, weights is contiguous. Under torch's deterministic
    mode a sum takes the deterministic grouped mode; every other reduce
    groups anyway, deterministically."""
    args = _binding.Args.from_buffer_copy(_args_template_or_init())
    args.out = out.data_ptr()
    args.out_rows = out.shape[0]
    args.out_row_stride = _row_stride(out)
    args.src = source.data_ptr()
    args.src_rows, args.cols = source.shape
    args.src_row_stride = _row_stride(source)
    args.dtype = _binding.DTYPES[_SUPPORTED_DTYPES[out.dtype]]
    args.index = index.data_ptr()
    args.index_type = _binding.INDEX_TYPES[_INDEX_TYPES[index.dtype]]
    args.reduce = _binding.REDUCES[reduce]
    args.include_self = 1 if include_self else 0
    if weights is not None:
        args.weights = weights.data_ptr()
        args.weights_dtype = _binding.DTYPES[_SUPPORTED_DTYPES[weights.dtype]]
    stream = ctypes.c_void_p(torch._C._cuda_getCurrentRawStream(device_index) or None)
    if torch.are_deterministic_algorithms_enabled() and reduce == "sum" and include_self:
        def call():
            return _deterministic_call(args, stream, out.device)
    else:
        def call():
            return _library_fn(ctypes.byref(args), _allocator, stream)
    status = call()
    if status == 3:  # SCATTERPTX_ERROR_NO_CONTEXT
        _make_context_current(device_index)
        status = call()
    _binding.check(status)


def _deterministic_call(args, stream, device):
    """The grouped call with deterministic = 1, in a workspace from torch's
    caching allocator on the call's stream (torch's current one)."""
    library = _binding.library()
    options = _binding.GroupOptions()
    library.scatterptx_group_options_init(ctypes.byref(options))
    options.deterministic = 1
    size = ctypes.c_size_t(0)
    status = library.scatterptx_plan_workspace_size(ctypes.byref(args), ctypes.byref(options), ctypes.byref(size))
    if status != _binding.SUCCESS:
        return status
    workspace = torch.empty(size.value, dtype=torch.uint8, device=device) if size.value else None
    pointer = None if workspace is None else workspace.data_ptr()
    return library.scatterptx_scatter_add_grouped(ctypes.byref(args), ctypes.byref(options), pointer, size.value,
                                                  stream)


# The fast path: tensors the library takes as they are, checked and packed
# with as few torch calls as possible (bench/python_call_overhead.py).
# Args' leading fields, out through index_type, in the C struct's layout;
# the rest (index_check, path, schedule, grouping) stay the template's.
_ARGS_HEAD = struct.Struct("@PqqPqqqiPi")
if _ARGS_HEAD.size != _binding.Args.index_type.offset + ctypes.sizeof(ctypes.c_int):
    raise ImportError("scatterptx.torch: the packed argument head does not match scatterptx_scatter_add_args")
_signatures = {}  # (dtypes, devices) -> (dtype code, index code), or () where the library cannot run
_thread_args = threading.local()


def _signature_codes(out_dtype, index_dtype, source_dtype, device, index_device, source_device):
    if (out_dtype not in _SUPPORTED_DTYPES or source_dtype != out_dtype or index_dtype not in _INDEX_TYPES
            or device < 0 or index_device != device or source_device != device or _ROCM
            or _device_capability(device)[0] < 9):
        return ()
    return (_binding.DTYPES[_SUPPORTED_DTYPES[out_dtype]], _binding.INDEX_TYPES[_INDEX_TYPES[index_dtype]])


def _launch_as_is(out, index, source):
    """The library call for the common case, or False where the general path
    must run: 2-D out and src the library reads as they are, a contiguous
    1-D index, supported dtypes on one sm_90+ device, no determinism."""
    key = (out.dtype, index.dtype, source.dtype, out.get_device(), index.get_device(), source.get_device())
    codes = _signatures.get(key)
    if codes is None:
        codes = _signatures[key] = _signature_codes(*key)
    if (not codes or index.dim() != 1 or torch.are_deterministic_algorithms_enabled()
            or key[3] not in _prepared_devices):
        return False
    out_shape, source_shape = out.shape, source.shape
    if len(out_shape) != 2 or len(source_shape) != 2:
        return False
    rows, cols = source_shape
    out_rows = out_shape[0]
    if out_shape[1] != cols or index.shape[0] != rows or rows == 0 or cols == 0:
        return False
    out_stride, source_stride = out.stride(), source.stride()
    if cols > 1 and (out_stride[1] != 1 or source_stride[1] != 1):
        return False
    out_row_stride = out_stride[0] if out_rows > 1 else cols
    source_row_stride = source_stride[0] if rows > 1 else cols
    if out_row_stride < cols or source_row_stride < cols or (rows > 1 and index.stride(0) != 1):
        return False
    args = getattr(_thread_args, "args", None)
    if args is None:
        args = _thread_args.args = _binding.Args.from_buffer_copy(_args_template_or_init())
    _ARGS_HEAD.pack_into(args, 0, out.data_ptr(), out_rows, out_row_stride, source.data_ptr(), rows,
                         source_row_stride, cols, codes[0], index.data_ptr(), codes[1])
    device = key[3]
    previous = torch._C._cuda_exchangeDevice(device)  # the library runs in the current context
    try:
        stream = torch._C._cuda_getCurrentRawStream(device)
        status = _library_fn(ctypes.byref(args), _allocator, stream)
        if status == 3:  # SCATTERPTX_ERROR_NO_CONTEXT
            _make_context_current(device)
            status = _library_fn(ctypes.byref(args), _allocator, stream)
    finally:
        torch._C._cuda_maybeExchangeDevice(previous)
    _binding.check(status)
    return True


def _args_template_or_init():
    global _args_template, _library_fn, _allocator
    if _args_template is None:
        template = _binding.Args()
        _binding.library().scatterptx_scatter_add_args_init(ctypes.byref(template))
        _library_fn = _binding.library().scatterptx_scatter_add_with_allocator
        _allocator = torch_allocator()  # the default call's grouping workspaces come from torch
        _args_template = template
    return _args_template



_OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
            "memory location. Please clone() the tensor before performing the operation.")
_INTERNAL_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
                     "location. Please clone() the tensor before performing the operation.")


def _has_memory(t):
    """Whether t is a plain tensor with storage of its own (not a fake, meta
    or functorch-wrapped one, which tracing and transforms pass)."""
    return (type(t) is torch.Tensor and not t.is_meta
            and not torch._C._functorch.is_functorch_wrapped_tensor(t))


def _dense_bytes(t):
    """[first, end) of the bytes t covers when it covers them all (torch's
    test for an overlap it can tell), else None."""
    if t.numel() == 0 or not _has_memory(t):
        return None
    expected = 1
    for stride, size in sorted((stride, size) for size, stride in zip(t.shape, t.stride()) if size != 1):
        if stride != expected:
            return None
        expected *= size
    first = t.data_ptr()
    return first, first + t.numel() * t.element_size()


def check_written_alone(out, *inputs):
    """torch's checks before an in-place operator writes out: no two of its
    elements share memory, nor does it share any with an input (None
    skipped); the same errors. Where copies or a functional form stand in
    for the in-place operator, they would hide what torch refuses."""
    if not _has_memory(out):
        return
    if any(stride == 0 and size > 1 for size, stride in zip(out.shape, out.stride())):
        raise RuntimeError(_INTERNAL_OVERLAP)
    storage = out.untyped_storage().data_ptr()
    sharing = [t for t in inputs if t is not None and _has_memory(t) and t.untyped_storage().data_ptr() == storage]
    if not sharing:  # the usual case, told apart cheaply
        return
    written = _dense_bytes(out)
    if written is None:
        return
    for t in sharing:
        read = _dense_bytes(t)
        if read is not None and read[0] < written[1] and written[0] < read[1]:
            raise RuntimeError(_OVERLAP)


def _run_library(out, index, source, reduce="sum", include_self=True, weights=None):
    """_launch for any layout of tensors _reduce_fallback_reason takes: out
    with a non-unit column stride in a contiguous copy, copied back."""
    out_as_is, source_as_is = _runs_as_is(out), _runs_as_is(source)
    if not (out_as_is and source_as_is):
        # A copy would hide memory shared with out, which the library itself
        # refuses in the operands it reads as they are.
        check_written_alone(out, index, source, weights)
    if source.shape[0] == 0 or source.shape[1] == 0:
        return
    device_index = out.get_device()
    if not index.is_contiguous():
        index = index.contiguous()
    if not source_as_is:
        source = source.contiguous()
    if weights is not None and not weights.is_contiguous():
        weights = weights.contiguous()
    target = out if out_as_is else out.contiguous()
    previous = torch._C._cuda_exchangeDevice(device_index)  # the library runs in the current context
    try:
        _launch(target, index, source, device_index, reduce, include_self, weights)
    finally:
        torch._C._cuda_maybeExchangeDevice(previous)
    if target is not out:
        out.copy_(target)
