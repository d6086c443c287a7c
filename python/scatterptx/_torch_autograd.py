"""The operators' autograd kernels: reverse-mode gradients, forward-mode AD
(jvp) and torch.func's transforms, through small handwritten
autograd.Functions (torch.library.custom_op's layers would cost several
microseconds a call); the in-place operators' checks and version bumps."""

import torch
import torch._functorch.autograd_function as _functorch_autograd
import torch.autograd.forward_ad as _forward_ad

from ._torch_call import check_written_alone
from ._torch_library import (_index_add__op, _index_add_op, _lib, _scatter_reduce__op, _scatter_reduce_op,
                             _weighted_index_add__op, _weighted_index_add_op)
from ._torch_math import scatter_reduce_grads, scatter_reduce_tangent, source_grad, weighted_source_grads


def _differentiating(*tensors):
    """Whether a call must go through its autograd.Function: a gradient
    wanted of one of tensors, or forward-mode AD (forward_ad.dual_level,
    torch.func.jvp) active, whose tangents only the Function carries."""
    return ((torch.is_grad_enabled() and any(t.requires_grad for t in tensors))
            or _forward_ad._current_level >= 0)


def _apply(function, *args):
    """function.apply(*args) as a C++ operator's autograd kernel would: the
    autograd (and forward AD) of the level the kernel runs at. Function.apply
    itself would hand the call to torch.func's transforms, which have already
    lifted this operator to this level."""
    if not torch._C._are_functorch_transforms_active():
        return super(torch.autograd.Function, function).apply(*args)
    with _functorch_autograd.enable_single_level_autograd_function():
        return super(torch.autograd.Function, function).apply(*args)


def _tangent(tangent, like):
    """tangent, or zeros where an input has none; like is (shape, dtype, device)."""
    if tangent is not None:
        return tangent
    shape, dtype, device = like
    return torch.zeros(shape, dtype=dtype, device=device)


def _like(t):
    return t.shape, t.dtype, t.device


# The Functions define setup_context apart from forward, as torch.func's
# transforms need; jvp gives forward-mode AD.
class _IndexAddFunction(torch.autograd.Function):
    @staticmethod
    def forward(out, index, source, keyset):
        with torch._C._AutoDispatchBelowAutograd():
            return _index_add_op.redispatch(keyset & torch._C._after_autograd_keyset, out, index, source)

    @staticmethod
    def setup_context(ctx, inputs, output):
        out, index, source, _ = inputs
        ctx.save_for_backward(index)
        ctx.save_for_forward(index)
        ctx.out_rows = out.shape[0] if out.dim() else 1  # torch takes a 0-dim out as one row
        ctx.source_shape = source.shape
        ctx.out_like = _like(out)  # for a missing tangent

    @staticmethod
    def jvp(ctx, out_t, index_t, source_t, keyset_t):
        (index,) = ctx.saved_tensors
        out_t = _tangent(out_t, ctx.out_like)
        return out_t if source_t is None else _index_add_op(out_t, index, source_t)

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        grad_out = grad if ctx.needs_input_grad[0] else None
        grad_source = None
        if ctx.needs_input_grad[2]:
            grad_source = source_grad(grad.reshape(-1) if grad.dim() == 0 else grad, index, ctx.out_rows)
            grad_source = grad_source.reshape(ctx.source_shape)
        return grad_out, None, grad_source, None


def _index_add_autograd(keyset, out, index, source):
    if _differentiating(out, source):
        return _apply(_IndexAddFunction, out, index, source, keyset)
    with torch._C._AutoDispatchBelowAutograd():
        return _index_add_op.redispatch(keyset & torch._C._after_autograd_keyset, out, index, source)


_INFERENCE_TENSOR = ("Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to "
                     "get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for "
                     "more details.")


def _check_in_place(out, *inputs, differentiating):
    """What torch's in-place operators refuse before they write: an inference
    tensor outside inference mode (where this kernel runs); and, where the
    functional operator and copy_ stand in (differentiating), memory shared
    with an input, which that path would hide."""
    if out.is_inference():
        raise RuntimeError(_INFERENCE_TENSOR)
    if differentiating:
        check_written_alone(out, *inputs)


def _index_add__autograd(keyset, out, index, source):
    differentiating = _differentiating(out, source)
    _check_in_place(out, index, source, differentiating=differentiating)
    if differentiating:
        # Through the functional operator and copy_, whose autograd rebases
        # out's history (and refuses a leaf that requires grad), as torch's
        # in-place operators do.
        out.copy_(_index_add_op(out, index, source))
        return None
    # What an ADInplaceOrView kernel does for a mutating operator, once the
    # kernel has run (an input it refuses changes nothing): readers of out
    # saved for backward must see that it changed.
    with torch._C._AutoDispatchBelowADInplaceOrView():
        _index_add__op.redispatch(keyset & torch._C._after_ADInplaceOrView_keyset, out, index, source)
    torch.autograd.graph.increment_version(out)


_lib.impl("index_add", _index_add_autograd, "Autograd", with_keyset=True)
_lib.impl("index_add_", _index_add__autograd, "Autograd", with_keyset=True)


class _WeightedIndexAddFunction(torch.autograd.Function):
    @staticmethod
    def forward(out, index, source, weights, keyset):
        with torch._C._AutoDispatchBelowAutograd():
            return _weighted_index_add_op.redispatch(keyset & torch._C._after_autograd_keyset, out, index, source,
                                                     weights)

    @staticmethod
    def setup_context(ctx, inputs, output):
        out, index, source, weights, _ = inputs
        ctx.save_for_backward(index, source, weights)
        ctx.save_for_forward(index, source, weights)
        ctx.out_like = _like(out)

    @staticmethod
    def jvp(ctx, out_t, index_t, source_t, weights_t, keyset_t):
        # The product rule: w * source_t and weights_t * source.
        index, source, weights = ctx.saved_tensors
        result_t = _tangent(out_t, ctx.out_like)
        if source_t is not None:
            result_t = _weighted_index_add_op(result_t, index, source_t, weights)
        if weights_t is not None:
            result_t = _weighted_index_add_op(result_t, index, source, weights_t)
        return result_t

    @staticmethod
    def backward(ctx, grad):
        index, source, weights = ctx.saved_tensors
        grad_source, grad_weights = weighted_source_grads(grad, index, source, weights, ctx.needs_input_grad[2],
                                                          ctx.needs_input_grad[3])
        return grad if ctx.needs_input_grad[0] else None, None, grad_source, grad_weights, None


def _weighted_index_add_autograd(keyset, out, index, source, weights):
    if _differentiating(out, source, weights):
        return _apply(_WeightedIndexAddFunction, out, index, source, weights, keyset)
    with torch._C._AutoDispatchBelowAutograd():
        return _weighted_index_add_op.redispatch(keyset & torch._C._after_autograd_keyset, out, index, source, weights)


def _weighted_index_add__autograd(keyset, out, index, source, weights):
    differentiating = _differentiating(out, source, weights)
    _check_in_place(out, index, source, weights, differentiating=differentiating)
    if differentiating:
        out.copy_(_weighted_index_add_op(out, index, source, weights))  # as _index_add__autograd
        return None
    with torch._C._AutoDispatchBelowADInplaceOrView():
        _weighted_index_add__op.redispatch(keyset & torch._C._after_ADInplaceOrView_keyset, out, index, source,
                                           weights)
    torch.autograd.graph.increment_version(out)  # as _index_add__autograd


class _ScatterReduceFunction(torch.autograd.Function):
    @staticmethod
    def forward(out, index, src, reduce, include_self, keyset):
        with torch._C._AutoDispatchBelowAutograd():
            return _scatter_reduce_op.redispatch(keyset & torch._C._after_autograd_keyset, out, index, src, reduce,
                                                 include_self=include_self)

    @staticmethod
    def setup_context(ctx, inputs, output):
        out, index, src, reduce, include_self, _ = inputs
        ctx.reduce, ctx.include_self = reduce, include_self
        saved = (index, out, src, output) if reduce in ("amax", "amin") else (index,)
        ctx.save_for_backward(*saved)
        ctx.save_for_forward(*saved)
        ctx.out_like, ctx.src_like = _like(out), _like(src)

    @staticmethod
    def jvp(ctx, out_t, index_t, src_t, reduce_t, include_self_t, keyset_t):
        index, *values = ctx.saved_tensors
        out_t, src_t = _tangent(out_t, ctx.out_like), _tangent(src_t, ctx.src_like)
        if ctx.reduce in ("sum", "mean"):  # linear in out and src
            return _scatter_reduce_op(out_t, index, src_t, ctx.reduce, include_self=ctx.include_self)
        return scatter_reduce_tangent(out_t, src_t, index, ctx.include_self, *values)

    @staticmethod
    def backward(ctx, grad):
        index, *values = ctx.saved_tensors
        grad_out, grad_src = scatter_reduce_grads(grad, index, ctx.reduce, ctx.include_self, *values)
        return (grad_out if ctx.needs_input_grad[0] else None, None, grad_src if ctx.needs_input_grad[2] else None,
                None, None, None)


def _scatter_reduce_autograd(keyset, out, index, src, reduce, *, include_self=True):
    if _differentiating(out, src):
        return _apply(_ScatterReduceFunction, out, index, src, reduce, include_self, keyset)
    with torch._C._AutoDispatchBelowAutograd():
        return _scatter_reduce_op.redispatch(keyset & torch._C._after_autograd_keyset, out, index, src, reduce,
                                             include_self=include_self)


def _scatter_reduce__autograd(keyset, out, index, src, reduce, *, include_self=True):
    differentiating = _differentiating(out, src)
    _check_in_place(out, index, src, differentiating=differentiating)
    if differentiating:
        # amax and amin save out for their backward: a copy, as out is overwritten.
        before = out.clone() if reduce in ("amax", "amin") else out
        out.copy_(_scatter_reduce_op(before, index, src, reduce, include_self=include_self))
        return None
    with torch._C._AutoDispatchBelowADInplaceOrView():
        _scatter_reduce__op.redispatch(keyset & torch._C._after_ADInplaceOrView_keyset, out, index, src, reduce,
                                       include_self=include_self)
    torch.autograd.graph.increment_version(out)  # as _index_add__autograd


_lib.impl("weighted_index_add", _weighted_index_add_autograd, "Autograd", with_keyset=True)
_lib.impl("weighted_index_add_", _weighted_index_add__autograd, "Autograd", with_keyset=True)
_lib.impl("scatter_reduce", _scatter_reduce_autograd, "Autograd", with_keyset=True)
_lib.impl("scatter_reduce_", _scatter_reduce__autograd, "Autograd", with_keyset=True)
