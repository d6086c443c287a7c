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
  works. Out-of-range indices are skipped and recorded (the library's record
  mode: ``scatterptx.take_index_error()`` reports them); torch's own CUDA op
  would raise a device-side assert instead.
- Under ``torch.use_deterministic_algorithms(True)`` they take the library's
  deterministic grouped mode (bitwise reproducible), never an atomic path.
- Any layout torch accepts is accepted: out with a non-unit column stride is
  computed in a contiguous copy and copied back; such a src is copied.
- Everything else (CPU or other devices, GPUs below sm_90, other dtypes or
  ranks) runs torch's own ``index_add_`` (weighted: of ``src * w[:, None]``,
  the product in float32, float64 for float64) or ``scatter_reduce_`` (with
  the expanded index): same result, and torch's errors for invalid input
  (mismatched shapes, dtypes or devices; scatter_reduce's contract, 2-D out
  and src with a 1-D index of src's rows, and the weights' are checked
  first, alike on every device and in the fake kernels). Each reason is
  warned about once and counted in ``fallback_counts()``.
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
  differentiable torch ops, so double backward is exact.
  The in-place operator, when a gradient is needed, runs as the functional
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

import ctypes
import struct
import threading
import warnings

import torch

from . import _binding
from ._torch_allocator import use_torch_allocator

__all__ = ["disable", "enable", "enabled", "fallback_counts", "index_add", "index_add_", "reset_route_counts",
           "route_counts", "scatter", "scatter_reduce", "scatter_reduce_", "weighted_index_add", "weighted_index_add_"]

_SUPPORTED_DTYPES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16", torch.float64: "f64"}
_INDEX_TYPES = {torch.int32: "int32", torch.int64: "int64"}
_REDUCES = ("sum", "mean", "amax", "amin")  # scatter_reduce's, as torch names them
# scatter's reduce (torch_scatter's and PyG's names) -> scatter_reduce's
_SCATTER_REDUCES = {"sum": "sum", "add": "sum", "mean": "mean", "max": "amax", "min": "amin", "amax": "amax",
                    "amin": "amin"}
# Reductions torch_scatter and PyG offer that the library does not have.
_OTHER_REDUCES = ("mul", "prod", "any")
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
_args_template = None
_library_fn = None


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


def _fallback_reason(out, index, source):
    """Why the library cannot take these tensors (None when it can). Invalid
    combinations get a reason too: torch's op then raises torch's error."""
    if out.dim() != 2 or source.dim() != 2 or index.dim() != 1:
        return f"{out.dim()}-D out, {index.dim()}-D index, {source.dim()}-D src (the library takes 2-D, 1-D, 2-D)"
    if out.dtype not in _SUPPORTED_DTYPES:
        return f"dtype {out.dtype} (the library takes float32, float16, bfloat16, float64)"
    if index.dtype not in _INDEX_TYPES:
        return f"index dtype {index.dtype}"
    device = out.get_device()
    if source.get_device() != device or index.get_device() != device:
        return "tensors on different devices"
    if source.dtype != out.dtype or source.shape[1] != out.shape[1] or index.shape[0] != source.shape[0]:
        return "mismatched shapes or dtypes"
    major, minor = _device_capability(device)
    if major < 9:
        return f"compute capability {major}.{minor} (the library needs 9.0 or newer)"
    return None


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
            return _library_fn(ctypes.byref(args), stream)
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
            or device < 0 or index_device != device or source_device != device
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
    if not codes or index.dim() != 1 or torch.are_deterministic_algorithms_enabled():
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
        status = _library_fn(ctypes.byref(args), stream)
        if status == 3:  # SCATTERPTX_ERROR_NO_CONTEXT
            _make_context_current(device)
            status = _library_fn(ctypes.byref(args), stream)
    finally:
        torch._C._cuda_maybeExchangeDevice(previous)
    _binding.check(status)
    return True


def _args_template_or_init():
    global _args_template, _library_fn
    if _args_template is None:
        template = _binding.Args()
        _binding.library().scatterptx_scatter_add_args_init(ctypes.byref(template))
        _library_fn = _binding.library().scatterptx_scatter_add
        use_torch_allocator()  # the default call's grouping workspaces come from torch
        _args_template = template
    return _args_template


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


def _run_library(out, index, source, reduce="sum", include_self=True, weights=None):
    """_launch for any layout of tensors _reduce_fallback_reason takes: out
    with a non-unit column stride in a contiguous copy, copied back."""
    if source.shape[0] == 0 or source.shape[1] == 0:
        return
    device_index = out.get_device()
    if not index.is_contiguous():
        index = index.contiguous()
    if not _runs_as_is(source):
        source = source.contiguous()
    if weights is not None and not weights.is_contiguous():
        weights = weights.contiguous()
    target = out if _runs_as_is(out) else out.contiguous()
    previous = torch._C._cuda_exchangeDevice(device_index)  # the library runs in the current context
    try:
        _launch(target, index, source, device_index, reduce, include_self, weights)
    finally:
        torch._C._cuda_maybeExchangeDevice(previous)
    if target is not out:
        out.copy_(target)


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


def _product_dtype(source_dtype, weights_dtype):
    """What a weighted row is multiplied in: float32, float64 for float64."""
    wide = torch.promote_types(source_dtype, weights_dtype)
    return torch.promote_types(wide, torch.float32) if wide.is_floating_point else wide


def _weighted_rows(source, weights):
    """weights[i] * source[i] in source's dtype, the product taken in
    _product_dtype as the library's streaming path takes it."""
    wide = _product_dtype(source.dtype, weights.dtype)
    shape = (-1,) + (1,) * (source.dim() - 1)
    return (source.to(wide) * weights.to(wide).reshape(shape)).to(source.dtype)


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


@torch.library.register_fake("scatterptx::index_add_", lib=_lib)
def _index_add__fake(out, index, source):
    torch.ops.aten.index_add.default(out, 0, index, source)  # torch's shape, dtype and device checks
    return None


@torch.library.register_fake("scatterptx::index_add", lib=_lib)
def _index_add_fake(out, index, source):
    torch.ops.aten.index_add.default(out, 0, index, source)
    return torch.empty_like(out, memory_format=torch.contiguous_format)


@torch.library.register_fake("scatterptx::weighted_index_add_", lib=_lib)
def _weighted_index_add__fake(out, index, source, weights):
    _check_weights(source, weights)
    torch.ops.aten.index_add.default(out, 0, index, source)
    return None


@torch.library.register_fake("scatterptx::weighted_index_add", lib=_lib)
def _weighted_index_add_fake(out, index, source, weights):
    _check_weights(source, weights)
    torch.ops.aten.index_add.default(out, 0, index, source)
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

def source_grad(grad, index, out_rows):
    """grad[index], with zero rows where index is outside [0, out_rows): the
    gradient of src in out.index_add_(0, index, src) when bad rows are skipped."""
    index = index.reshape(-1)
    in_range = (index >= 0) & (index < out_rows)
    rows = grad.index_select(0, torch.where(in_range, index, 0))
    return torch.where(in_range.view((-1,) + (1,) * (grad.dim() - 1)), rows, 0)


class _IndexAddFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, out, index, source, keyset):
        ctx.save_for_backward(index)
        ctx.out_rows = out.shape[0]
        with torch._C._AutoDispatchBelowAutograd():
            return _index_add_op.redispatch(keyset & torch._C._after_autograd_keyset, out, index, source)

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        grad_out = grad if ctx.needs_input_grad[0] else None
        grad_source = source_grad(grad, index, ctx.out_rows) if ctx.needs_input_grad[2] else None
        return grad_out, None, grad_source, None


def _index_add_autograd(keyset, out, index, source):
    if torch.is_grad_enabled() and (out.requires_grad or source.requires_grad):
        return _IndexAddFunction.apply(out, index, source, keyset)
    with torch._C._AutoDispatchBelowAutograd():
        return _index_add_op.redispatch(keyset & torch._C._after_autograd_keyset, out, index, source)


def _index_add__autograd(keyset, out, index, source):
    if torch.is_grad_enabled() and (out.requires_grad or source.requires_grad):
        # Through the functional operator and copy_, whose autograd rebases
        # out's history (and refuses a leaf that requires grad), as torch's
        # in-place operators do.
        out.copy_(_index_add_op(out, index, source))
        return None
    # What an ADInplaceOrView kernel does for a mutating operator: readers of
    # out saved for backward must see that it changed.
    torch.autograd.graph.increment_version(out)
    with torch._C._AutoDispatchBelowADInplaceOrView():
        return _index_add__op.redispatch(keyset & torch._C._after_ADInplaceOrView_keyset, out, index, source)


_lib.impl("index_add", _index_add_autograd, "Autograd", with_keyset=True)
_lib.impl("index_add_", _index_add__autograd, "Autograd", with_keyset=True)


def weighted_source_grads(grad, index, source, weights, need_source=True, need_weights=True):
    """(gradient of source, gradient of weights) of
    out.index_add_(0, index, weights[:, None] * source) for the gradient grad
    of the result: weights[i] * grad[index[i]] and the dot product of
    grad[index[i]] with source[i], each zero where index[i] is outside
    [0, out_rows), and None where not needed. Products in float32 (float64
    for float64), as the forward's."""
    rows = source_grad(grad, index, grad.shape[0])
    grad_source = _weighted_rows(rows, weights) if need_source else None
    grad_weights = None
    if need_weights:
        wide = _product_dtype(source.dtype, weights.dtype)
        products = rows.to(wide) * source.to(wide)
        if products.dim() > 1:
            products = products.flatten(1).sum(1)
        grad_weights = products.to(weights.dtype)
    return grad_source, grad_weights


class _WeightedIndexAddFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, out, index, source, weights, keyset):
        ctx.save_for_backward(index, source, weights)
        with torch._C._AutoDispatchBelowAutograd():
            return _weighted_index_add_op.redispatch(keyset & torch._C._after_autograd_keyset, out, index, source,
                                                     weights)

    @staticmethod
    def backward(ctx, grad):
        index, source, weights = ctx.saved_tensors
        grad_source, grad_weights = weighted_source_grads(grad, index, source, weights, ctx.needs_input_grad[2],
                                                          ctx.needs_input_grad[3])
        return grad if ctx.needs_input_grad[0] else None, None, grad_source, grad_weights, None


def _wants_grad(*tensors):
    return torch.is_grad_enabled() and any(t.requires_grad for t in tensors)


def _weighted_index_add_autograd(keyset, out, index, source, weights):
    if _wants_grad(out, source, weights):
        return _WeightedIndexAddFunction.apply(out, index, source, weights, keyset)
    with torch._C._AutoDispatchBelowAutograd():
        return _weighted_index_add_op.redispatch(keyset & torch._C._after_autograd_keyset, out, index, source, weights)


def _weighted_index_add__autograd(keyset, out, index, source, weights):
    if _wants_grad(out, source, weights):
        out.copy_(_weighted_index_add_op(out, index, source, weights))  # as _index_add__autograd
        return None
    torch.autograd.graph.increment_version(out)
    with torch._C._AutoDispatchBelowADInplaceOrView():
        return _weighted_index_add__op.redispatch(keyset & torch._C._after_ADInplaceOrView_keyset, out, index, source,
                                                  weights)


def _accumulation_dtype(dtype):
    return torch.float64 if dtype == torch.float64 else torch.float32


def _target_counts(index, valid, out_rows):
    """How many entries of index within [0, out_rows) name each row, in float64 (exact)."""
    counts = torch.zeros(out_rows, dtype=torch.float64, device=index.device)
    return counts.index_add_(0, torch.where(valid, index, 0), valid.to(torch.float64))


def scatter_reduce_grads(grad, index, reduce, include_self, out=None, src=None, result=None):
    """(gradient of out, gradient of src) of
    out.scatter_reduce_(0, index.view(-1, 1).expand_as(src), src, reduce, include_self),
    torch's scatter_reduce_backward with the 1-D index; rows of src whose
    index is outside [0, out_rows) get zero. amax and amin need out (before
    the call), src and the result. Counts are exact (torch counts in the
    rows' dtype, exactly up to 256 operands in bfloat16, 2048 in float16)."""
    out_rows = grad.shape[0]
    valid = (index >= 0) & (index < out_rows)
    safe = torch.where(valid, index, 0)
    valid_rows = valid.unsqueeze(1)
    counts = _target_counts(index, valid, out_rows) if reduce == "mean" or not include_self else None
    if reduce == "sum":
        grad_out = grad
        grad_src = source_grad(grad, index, out_rows)
    elif reduce == "mean":
        operands = (counts + 1 if include_self else counts).clamp(min=1)
        grad_out = (grad / operands.to(_accumulation_dtype(grad.dtype)).unsqueeze(1)).to(grad.dtype)
        grad_src = torch.where(valid_rows, grad_out.index_select(0, safe), 0)
    else:  # amax, amin: the gradient shared equally among the operands equal to the result
        self_is_result = out == result  # torch counts out's value even without include_self
        src_is_result = (src == result.index_select(0, safe)) & valid_rows
        wide = _accumulation_dtype(grad.dtype)
        ties = self_is_result.to(wide).index_add(0, safe, src_is_result.to(wide))
        shared = (grad / ties).to(grad.dtype)
        grad_out = self_is_result.to(grad.dtype) * shared
        grad_src = torch.where(valid_rows, src_is_result.to(grad.dtype) * shared.index_select(0, safe), 0)
    if not include_self:
        grad_out = torch.where((counts > 0).unsqueeze(1), 0, grad_out)  # reached rows lost their values
    return grad_out, grad_src


class _ScatterReduceFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, out, index, src, reduce, include_self, keyset):
        with torch._C._AutoDispatchBelowAutograd():
            result = _scatter_reduce_op.redispatch(keyset & torch._C._after_autograd_keyset, out, index, src, reduce,
                                                   include_self=include_self)
        ctx.reduce, ctx.include_self = reduce, include_self
        if reduce in ("amax", "amin"):
            ctx.save_for_backward(index, out, src, result)
        else:
            ctx.save_for_backward(index)
        return result

    @staticmethod
    def backward(ctx, grad):
        index, *values = ctx.saved_tensors
        grad_out, grad_src = scatter_reduce_grads(grad, index, ctx.reduce, ctx.include_self, *values)
        return (grad_out if ctx.needs_input_grad[0] else None, None, grad_src if ctx.needs_input_grad[2] else None,
                None, None, None)


def _scatter_reduce_autograd(keyset, out, index, src, reduce, *, include_self=True):
    if _wants_grad(out, src):
        return _ScatterReduceFunction.apply(out, index, src, reduce, include_self, keyset)
    with torch._C._AutoDispatchBelowAutograd():
        return _scatter_reduce_op.redispatch(keyset & torch._C._after_autograd_keyset, out, index, src, reduce,
                                             include_self=include_self)


def _scatter_reduce__autograd(keyset, out, index, src, reduce, *, include_self=True):
    if _wants_grad(out, src):
        # amax and amin save out for their backward: a copy, as out is overwritten.
        before = out.clone() if reduce in ("amax", "amin") else out
        out.copy_(_scatter_reduce_op(before, index, src, reduce, include_self=include_self))
        return None
    torch.autograd.graph.increment_version(out)
    with torch._C._AutoDispatchBelowADInplaceOrView():
        return _scatter_reduce__op.redispatch(keyset & torch._C._after_ADInplaceOrView_keyset, out, index, src, reduce,
                                              include_self=include_self)


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
    if _straight_to_cuda_kernel(out, index, src):
        torch._C._increment_version((out,))  # as the dispatcher's path does
        _index_add_cuda(out, index, src)
        return out
    _index_add__op(out, index, src)
    return out


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
    if _straight_with_weights(out, index, src, weights):
        torch._C._increment_version((out,))
        _weighted_index_add_cuda(out, index, src, weights)
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
    if _straight_to_cuda_kernel(out, index, src):
        torch._C._increment_version((out,))
        _scatter_reduce_cuda(out, index, src, reduce, include_self=include_self)
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
    """
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
