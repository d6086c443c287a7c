"""scatterptx as torch operators: ``torch.ops.scatterptx.index_add`` and
``index_add_``, and torch_scatter's / PyG's ``scatter`` on top of them.

Importing this module registers the operators (``import scatterptx`` alone
does not import torch)::

    import scatterptx.torch as spt
    out = spt.index_add(out, index, src)       # functional: out + the rows, as torch.index_add(out, 0, index, src)
    spt.index_add_(out, index, src)            # in place, as out.index_add_(0, index, src)
    agg = spt.scatter(src, index, dim=0, dim_size=n)   # PyG / torch_scatter "sum"

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
  ranks) runs torch's own ``index_add_``: same result, and torch's errors for
  invalid input (mismatched shapes, dtypes or devices). Each reason is warned
  about once and counted in ``fallback_counts()``.
- Autograd: the gradient of out is the incoming gradient, that of src is
  its rows at index (zero for out-of-range indices), none for index. The
  backward is made of differentiable torch ops, so double backward is exact.
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
from ._grouped import scatter_add_grouped
from ._torch_allocator import use_torch_allocator

__all__ = ["disable", "enable", "enabled", "fallback_counts", "index_add", "index_add_", "reset_route_counts",
           "route_counts", "scatter"]

_SUPPORTED_DTYPES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16", torch.float64: "f64"}
_INDEX_TYPES = {torch.int32: "int32", torch.int64: "int64"}
_SUM_REDUCES = ("sum", "add")
# Reductions torch_scatter and PyG offer that the library does not have yet.
_LATER_REDUCES = ("mean", "mul", "prod", "min", "max", "amin", "amax")

# ---------------------------------------------------------------------------
# Fallback accounting

_fallback_lock = threading.Lock()
_fallback_counts = {}


def fallback_counts():
    """{reason: calls} of the calls that ran torch's own index_add_ instead of
    the library, since the process started (or reset_fallback_counts)."""
    with _fallback_lock:
        return dict(_fallback_counts)


def reset_fallback_counts():
    """Forgets the counts; a reason seen again is warned about again."""
    with _fallback_lock:
        _fallback_counts.clear()


def _count_fallback(reason):
    with _fallback_lock:
        first = reason not in _fallback_counts
        _fallback_counts[reason] = _fallback_counts.get(reason, 0) + 1
    if first:
        warnings.warn(f"scatterptx: {reason}; running torch's index_add_ instead (warned once per reason; "
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


def _make_context_current(device_index):
    # A thread that has made no CUDA runtime call yet has no current context
    # for the driver API; any runtime call binds the device's primary context.
    torch.cuda.mem_get_info(device_index)


def _launch(out, index, source, device_index):
    """out[index[i], :] += source[i, :] by the library, on torch's current
    stream of device_index; out and source satisfy _runs_as_is."""
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
    stream = ctypes.c_void_p(torch._C._cuda_getCurrentRawStream(device_index) or None)
    status = _library_fn(ctypes.byref(args), stream)
    if status == 3:  # SCATTERPTX_ERROR_NO_CONTEXT
        _make_context_current(device_index)
        status = _library_fn(ctypes.byref(args), stream)
    _binding.check(status)


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


def _launch_deterministic(out, index, source):
    try:
        scatter_add_grouped(out, index, source, deterministic=True)
    except _binding.ScatterPtxError as error:
        if error.code != 3:
            raise
        _make_context_current(out.get_device())
        scatter_add_grouped(out, index, source, deterministic=True)


def _index_add_cuda(out, index, source):
    """The in-place kernel for CUDA tensors."""
    if _launch_as_is(out, index, source):
        return
    reason = _fallback_reason(out, index, source)
    if reason is not None:
        out.index_add_(0, index, source)  # raises torch's error where the input is invalid
        _count_fallback(reason)
        return
    if source.shape[0] == 0 or source.shape[1] == 0:
        return
    device_index = out.get_device()
    if not index.is_contiguous():
        index = index.contiguous()
    if not _runs_as_is(source):
        source = source.contiguous()
    target = out if _runs_as_is(out) else out.contiguous()
    previous = torch._C._cuda_exchangeDevice(device_index)  # the library runs in the current context
    try:
        if torch.are_deterministic_algorithms_enabled():
            _launch_deterministic(target, index, source)
        else:
            _launch(target, index, source, device_index)
    finally:
        torch._C._cuda_maybeExchangeDevice(previous)
    if target is not out:
        out.copy_(target)


def _index_add_other(out, index, source):
    """The in-place kernel for every other device: torch's own op."""
    out.index_add_(0, index, source)
    _count_fallback(f"{out.device.type} tensors")


# ---------------------------------------------------------------------------
# Operator registration

_lib = torch.library.Library("scatterptx", "DEF")
_TAGS = (torch.Tag.pt2_compliant_tag,)
_lib.define("index_add(Tensor out, Tensor index, Tensor source) -> Tensor", tags=_TAGS)
_lib.define("index_add_(Tensor(a!) out, Tensor index, Tensor source) -> ()", tags=_TAGS)
_index_add_op = torch.ops.scatterptx.index_add.default
_index_add__op = torch.ops.scatterptx.index_add_.default


def _functional(inplace_kernel):
    def kernel(out, index, source):
        result = out.clone(memory_format=torch.contiguous_format)
        inplace_kernel(result, index, source)
        return result

    return kernel


_index_add_functional_cuda = _functional(_index_add_cuda)
_lib.impl("index_add_", _index_add_cuda, "CUDA")
_lib.impl("index_add", _index_add_functional_cuda, "CUDA")
_lib.impl("index_add_", _index_add_other, "CompositeExplicitAutograd")
_lib.impl("index_add", _functional(_index_add_other), "CompositeExplicitAutograd")


@torch.library.register_fake("scatterptx::index_add_", lib=_lib)
def _index_add__fake(out, index, source):
    torch.ops.aten.index_add.default(out, 0, index, source)  # torch's shape, dtype and device checks
    return None


@torch.library.register_fake("scatterptx::index_add", lib=_lib)
def _index_add_fake(out, index, source):
    torch.ops.aten.index_add.default(out, 0, index, source)
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


def scatter(src, index, dim=0, out=None, dim_size=None, reduce="sum"):
    """torch_scatter's scatter and PyG's torch_geometric.utils.scatter for a 1-D
    index along dim 0: row i of src is summed into row index[i] of the result.

    out given: the rows are added into it (torch_scatter's semantics) and it
    is returned; dim_size is then ignored. Otherwise the result has dim_size
    rows, or index.max() + 1 when dim_size is None, which reads the index on
    the host (a synchronisation, as in PyG; pass dim_size under torch.compile
    and CUDA graph capture). reduce: "sum" or "add"; the other reductions of
    torch_scatter raise NotImplementedError for now.
    """
    if reduce not in _SUM_REDUCES:
        if reduce in _LATER_REDUCES:
            raise NotImplementedError(f"scatterptx.torch.scatter: reduce={reduce!r} is not yet supported "
                                      "(only 'sum' and 'add')")
        raise ValueError(f"scatterptx.torch.scatter: unknown reduce {reduce!r}")
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
    if torch.is_grad_enabled() and src.requires_grad:
        return index_add(result, index, src)
    return index_add_(result, index, src)


# The drop-in switch that routes torch's own calls here: scatterptx/dropin.py.
from .dropin import disable, enable, enabled, reset_route_counts, route_counts  # noqa: E402
