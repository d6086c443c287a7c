"""Drop-in routing: torch's own row scatter-adds on CUDA tensors run the library.

Opt-in, for code that is not to be changed::

    import scatterptx.torch as spt
    spt.enable()                       # from here on; or, for a block:
    with spt.enable():                 # the previous state comes back on exit
        loss = model(batch); loss.backward()
    spt.disable()                      # torch's own kernels, exactly as before
    spt.enabled(), spt.route_counts()  # {op: {"routed": calls, reason: calls, ...}}

What is routed: calls that add whole rows of src into out along dim 0, on
tensors the library takes (sm_90+ CUDA; f32, f16, bf16, f64 alike; int32 or
int64 index; ``scatterptx.torch``'s fallback reasons apply):

- ``index_add_`` / ``index_add`` (``torch.index_add``, ``Tensor.index_add``)
  along dim 0 with alpha 1;
- ``scatter_add_`` / ``scatter_add``, and ``scatter_reduce_`` /
  ``scatter_reduce`` with reduce "sum", "mean", "amax" or "amin" and
  include_self either way, along dim 0 with the expanded index
  (``index.view(-1, 1).expand_as(src)``, as PyG's ``scatter`` builds it):
  stride 0, or size 1, on every dimension past 0, spanning out's rows;
- ``index_put_`` with accumulate=True (``_index_put_impl_``) through one
  index tensor on the first dimension (leading dimensions of size 1 may be
  skipped by None): ``out[index] += values`` without broadcasting; negative
  indices count from the end, as in torch.

out and src of more than two dimensions are taken as rows of their trailing
dimensions when out's flatten without a copy. Every other call (other dims,
1-D tensors, reduce "prod", other dtypes, a materialised index, GPUs below
sm_90, tensors on different devices) runs torch's own kernel, and is counted
with its reason.

Why the dispatcher: the gradients of ``index_select`` and ``x[index]`` (how
message passing and MoE dispatch gather rows) are ``index_add_`` and
``_index_put_impl_`` calls that autograd makes in C++; a Python-level override
(``__torch_function__``, patching ``torch.Tensor``) never sees them. A kernel
registered for the CUDA dispatch key (``torch.library.Library("aten",
"IMPL")``) sees every call that reaches CUDA: forward and backward, eager, and
the aten calls that compiled code makes. Calls on other devices do not reach
it and cost nothing; a CUDA call it leaves goes on to torch's kernel, which
``torch.library.get_kernel`` took before the registration. A
TorchDispatchMode would see the same calls, but runs Python for every op of
the model. Autograd is untouched: the kernels sit below it, so gradients are
torch's formulas, computed with the library where they add rows.

torch.compile: tracing never reaches a backend kernel, so the switch breaks
no graph. At run time inductor's own Triton code does the scatters it
lowers (f32/f16 index_add and scatter_add, index_put); the aten calls it
falls back to (bf16 index_add, deterministic mode, boolean masks) reach the
switch and are routed when they match. Backends that run aten ops
(aot_eager) are routed call by call.

Cost: a CUDA call left to torch pays the Python kernel in front of it, a
few microseconds of host time (``bench/dropin_overhead.py`` measures it);
a routed call pays the decision before the library's own call.

Numerics follow the library's default call (``torch.use_deterministic_algorithms``
selects its bitwise-reproducible mode; a scatter_reduce other than a sum
with include_self runs grouped, reproducible in any mode, f16/bf16 combined
in float32). torch's own ``index_put_`` with
accumulate sorts and is reproducible run to run; routed, it is as
reproducible as the library's default call. An out-of-range index skips its
row where torch would raise a device-side assert.
"""

import math
import threading
import warnings

import torch

__all__ = ["disable", "enable", "enabled", "reset_route_counts", "route_counts"]

ROUTED = "routed"

# ---------------------------------------------------------------------------
# Counting: what each call became

_count_lock = threading.Lock()
_counts = {}  # op -> {ROUTED or reason: calls}


def _count(op, outcome):
    with _count_lock:
        outcomes = _counts.setdefault(op, {})
        outcomes[outcome] = outcomes.get(outcome, 0) + 1


def route_counts():
    """{op: {"routed": calls, reason: calls, ...}} of the CUDA calls the switch
    has seen since the process started (or reset_route_counts): routed to the
    library, or left to torch's kernel for the reason given."""
    with _count_lock:
        return {op: dict(outcomes) for op, outcomes in _counts.items()}


def reset_route_counts():
    with _count_lock:
        _counts.clear()


# ---------------------------------------------------------------------------
# The pattern: each returns why the call is not out[index[i], :] += src[i, :]
# on rows (or scatter_reduce_'s other reductions of them), or the operands
# (out_rows, index, src_rows, wrap_negative).

def _as_rows(t):
    """t as (t.shape[0], the rest) without a copy, or None."""
    if t.dim() == 2:
        return t
    try:
        return t.view(t.shape[0], math.prod(t.shape[1:]))
    except RuntimeError:  # strides that do not flatten
        return None


def _shares_memory(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def _operands(out, index, src, wrap_negative=False):
    if out.numel() == 0 or src.numel() == 0:
        return "empty tensors"
    out_rows = _as_rows(out)
    if out_rows is None:
        return "out's trailing dimensions do not flatten without a copy"
    if _shares_memory(out, src) or _shares_memory(out, index):
        return "out shares memory with src or index"
    if torch._debug_has_internal_overlap(out) == 1:  # an expanded out: torch raises
        return "out overlaps itself"
    src_rows = src if src.dim() == 2 else src.reshape(src.shape[0], out_rows.shape[1])
    return out_rows, index, src_rows, wrap_negative


def _index_add_operands(out, dim, index, source, alpha):
    if out.dim() < 2:
        return "out has fewer than 2 dimensions"
    if dim != 0 and dim != -out.dim():
        return "dim is not 0"
    if alpha != 1:
        return "alpha is not 1"
    if index.dim() != 1 or source.shape[:1] != index.shape or source.shape[1:] != out.shape[1:]:
        return "shapes other than out (n, ...), index (m,), source (m, ...)"
    return _operands(out, index, source)


def _scatter_add_operands(out, dim, index, src):
    rank = out.dim()
    if rank < 2:
        return "out has fewer than 2 dimensions"
    if dim != 0 and dim != -rank:
        return "dim is not 0"
    if index.dim() != rank or src.dim() != rank:
        return "index or src of another rank than out"
    if index.dtype != torch.int64:
        return f"index dtype {index.dtype} (torch's scatter takes int64)"
    shape = index.shape
    if shape[1:] != out.shape[1:]:
        return "index does not span out's rows"
    if any(n > m for n, m in zip(shape, src.shape)):
        return "index larger than src"
    strides = index.stride()
    for d in range(1, rank):
        if strides[d] != 0 and shape[d] != 1:
            return "index not expanded past dim 0 (a stride is not 0)"
    if src.shape != shape:  # torch reads only the index's extent of src
        src = src[tuple(slice(0, n) for n in shape)]
    return _operands(out, index.as_strided((shape[0],), (strides[0],)), src)


_LIBRARY_REDUCES = ("sum", "mean", "amax", "amin")


def _scatter_reduce_operands(out, dim, index, src, reduce, include_self):
    if reduce not in _LIBRARY_REDUCES:
        return f"reduce={reduce!r} (the library takes {', '.join(_LIBRARY_REDUCES)})"
    return _scatter_add_operands(out, dim, index, src)


def _index_put_operands(out, indices, values, accumulate):
    if not accumulate:
        return "accumulate=False (an assignment)"
    lead = 0
    while lead < len(indices) and indices[lead] is None:
        lead += 1
    if lead != len(indices) - 1:
        return "not one index tensor"
    index = indices[lead]
    if index.dtype not in (torch.int32, torch.int64):
        return f"index dtype {index.dtype}"
    if out.dim() - lead < 2:
        return "the index is on out's last dimension"
    if any(n != 1 for n in out.shape[:lead]):
        return "the index is not on out's first dimension"
    if values.shape != out.shape[:lead] + index.shape + out.shape[lead + 1:]:
        return "values broadcast"
    if lead or index.dim() != 1:  # to out (n, ...), index (m,), values (m, ...)
        out = out.view(out.shape[lead:])
        index = index.reshape(-1)
        values = values.reshape(index.shape + out.shape[1:])
    return _operands(out, index, values, wrap_negative=True)


# ---------------------------------------------------------------------------
# The kernels

# aten operator -> the name calls are counted under
_OPS = {
    "index_add_": "aten::index_add_",
    "index_add": "aten::index_add",
    "scatter_add_": "aten::scatter_add_",
    "scatter_add": "aten::scatter_add",
    "scatter_reduce_.two": "aten::scatter_reduce_",
    "scatter_reduce.two": "aten::scatter_reduce",
    "_index_put_impl_": "aten::_index_put_impl_",
}


class _Router:
    """Kernels for _OPS on one dispatch key: launch(out_rows, index, src_rows)
    adds the rows; reason(out_rows, index, src_rows) says why it cannot (None
    when it can); launch_reduce and reduce_reason, with (reduce,
    include_self) after those, do the same for scatter_reduce_'s other forms.
    enable() makes the CUDA one; tests make one for CPU."""

    def __init__(self, dispatch_key, launch, reason, launch_reduce, reduce_reason):
        self.dispatch_key = dispatch_key
        self.launch = launch
        self.reason = reason
        self.launch_reduce = launch_reduce
        self.reduce_reason = reduce_reason
        self.original = {}
        self.library = None

    def register(self):
        original = {name: torch.library.get_kernel(f"aten::{name}", self.dispatch_key) for name in _OPS}
        library = torch.library.Library("aten", "IMPL")
        kernels = {"index_add_": self.index_add_, "index_add": self.index_add,
                   "scatter_add_": self.scatter_add_, "scatter_add": self.scatter_add,
                   "scatter_reduce_.two": self.scatter_reduce_, "scatter_reduce.two": self.scatter_reduce,
                   "_index_put_impl_": self.index_put_}
        try:
            with warnings.catch_warnings():
                # torch warns once that an aten kernel is being overridden: here that is the point.
                warnings.filterwarnings("ignore", "Warning only once for all operators")
                for name, kernel in kernels.items():
                    library.impl(name, kernel, self.dispatch_key, with_keyset=True)
        except BaseException:
            library._destroy()
            raise
        self.original, self.library = original, library

    def unregister(self):
        """Removes the kernels: the dispatcher computes its tables as before."""
        self.library._destroy()
        self.library = None

    def _route(self, op, operands, reduce="sum", include_self=True):
        """(out_rows, index, src_rows) for the library, or None to leave the call
        to torch; counts which, and why."""
        if not isinstance(operands, str):
            out_rows, index, src_rows, wrap_negative = operands
            if reduce == "sum" and include_self:
                reason = self.reason(out_rows, index, src_rows)
            else:
                reason = self.reduce_reason(out_rows, index, src_rows, reduce, include_self)
            if reason is None:
                _count(op, ROUTED)
                if wrap_negative:  # torch's advanced indexing counts negative rows from the end
                    rows = out_rows.shape[0]
                    if index.dtype == torch.int32 and rows > 2**31 - 1:
                        index = index.long()  # rows would not fit the int32 add
                    index = torch.add(index, index < 0, alpha=rows)
                return out_rows, index, src_rows
            operands = reason
        _count(op, operands)
        return None

    def _add_to_copy(self, out, out_rows, index, src_rows, reduce="sum", include_self=True):
        """The functional operators' result: a contiguous copy of out (as
        torch's is, whatever out's layout) with the rows added (reduced)."""
        result = out.clone(memory_format=torch.contiguous_format)
        self._reduce(result.view(out_rows.shape), index, src_rows, reduce, include_self)
        return result

    def _reduce(self, out_rows, index, src_rows, reduce="sum", include_self=True):
        if reduce == "sum" and include_self:
            self.launch(out_rows, index, src_rows)
        else:
            self.launch_reduce(out_rows, index, src_rows, reduce, include_self)

    def index_add_(self, keyset, out, dim, index, source, *, alpha=1):
        routed = self._route("aten::index_add_", _index_add_operands(out, dim, index, source, alpha))
        if routed is None:
            return self.original["index_add_"].call_boxed(keyset, out, dim, index, source, alpha=alpha)
        self.launch(*routed)
        return out

    def index_add(self, keyset, out, dim, index, source, *, alpha=1):
        routed = self._route("aten::index_add", _index_add_operands(out, dim, index, source, alpha))
        if routed is None:
            return self.original["index_add"].call_boxed(keyset, out, dim, index, source, alpha=alpha)
        return self._add_to_copy(out, *routed)

    def scatter_add_(self, keyset, out, dim, index, src):
        routed = self._route("aten::scatter_add_", _scatter_add_operands(out, dim, index, src))
        if routed is None:
            return self.original["scatter_add_"].call_boxed(keyset, out, dim, index, src)
        self.launch(*routed)
        return out

    def scatter_add(self, keyset, out, dim, index, src):
        routed = self._route("aten::scatter_add", _scatter_add_operands(out, dim, index, src))
        if routed is None:
            return self.original["scatter_add"].call_boxed(keyset, out, dim, index, src)
        return self._add_to_copy(out, *routed)

    def scatter_reduce_(self, keyset, out, dim, index, src, reduce, *, include_self=True):
        routed = self._route("aten::scatter_reduce_",
                             _scatter_reduce_operands(out, dim, index, src, reduce, include_self), reduce, include_self)
        if routed is None:
            return self.original["scatter_reduce_.two"].call_boxed(keyset, out, dim, index, src, reduce,
                                                                   include_self=include_self)
        self._reduce(*routed, reduce, include_self)
        return out

    def scatter_reduce(self, keyset, out, dim, index, src, reduce, *, include_self=True):
        routed = self._route("aten::scatter_reduce",
                             _scatter_reduce_operands(out, dim, index, src, reduce, include_self), reduce, include_self)
        if routed is None:
            return self.original["scatter_reduce.two"].call_boxed(keyset, out, dim, index, src, reduce,
                                                                  include_self=include_self)
        return self._add_to_copy(out, *routed, reduce, include_self)

    def index_put_(self, keyset, out, indices, values, accumulate=False, unsafe=False):
        routed = self._route("aten::_index_put_impl_", _index_put_operands(out, indices, values, accumulate))
        if routed is None:
            return self.original["_index_put_impl_"].call_boxed(keyset, out, indices, values, accumulate, unsafe)
        self.launch(*routed)
        return out


# ---------------------------------------------------------------------------
# The switch

_switch_lock = threading.Lock()
_active = None  # the registered _Router, if any
_cuda_router = None


def _install(router):
    """Makes router (or None) the registered one; returns the one before."""
    global _active
    with _switch_lock:
        previous = _active
        if router is not previous:
            if previous is not None:
                previous.unregister()
                _active = None
            if router is not None:
                router.register()
                _active = router
        return previous


def _cuda():
    global _cuda_router
    if _cuda_router is None:
        from . import _torch_call, _torch_kernels  # the library call and its fallback reasons

        _cuda_router = _Router("CUDA", _torch_kernels._index_add_cuda, _torch_call._fallback_reason,
                               _torch_kernels._scatter_reduce_rows, _torch_call._reduce_fallback_reason)
    return _cuda_router


class _Restore:
    """What enable() and disable() return: used in a with statement, the
    switch goes back to where it was at the end of the block."""

    def __init__(self, previous):
        self._previous = previous

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        _install(self._previous)
        return False


def enable():
    """Routes torch's row scatter-adds on CUDA tensors through the library
    until disable(); ``with enable():`` for a block. Enabling twice is one."""
    return _Restore(_install(_cuda()))


def disable():
    """Removes the routing: every call runs torch's kernels as if enable()
    had never been called; ``with disable():`` for a block."""
    return _Restore(_install(None))


def enabled():
    """Whether the routing is on."""
    return _active is not None
