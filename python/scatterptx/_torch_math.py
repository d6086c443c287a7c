"""The pure torch formulas of scatterptx.torch: the weighted rows' product
(the fallback's and the backward's, as the library's streaming path takes
it) and the backward of each operator. No library call."""

import torch


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


def source_grad(grad, index, out_rows):
    """grad[index], with zero rows where index is outside [0, out_rows): the
    gradient of src in out.index_add_(0, index, src) when bad rows are skipped."""
    index = index.reshape(-1)
    in_range = (index >= 0) & (index < out_rows)
    rows = grad.index_select(0, torch.where(in_range, index, 0))
    return torch.where(in_range.view((-1,) + (1,) * (grad.dim() - 1)), rows, 0)


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


def scatter_reduce_tangent(out_t, src_t, index, include_self, out, src, result):
    """The forward-mode derivative of an amax or amin scatter_reduce: each
    target's tangent is the mean of the tangents of the operands equal to
    its result (out's only with include_self: unlike the backward, torch's
    forward derivative does not count an excluded out value among the ties),
    a row no index reaches keeps out's; rows of src outside [0, out_rows)
    add none."""
    out_rows = result.shape[0]
    valid = (index >= 0) & (index < out_rows)
    safe = torch.where(valid, index, 0)
    valid_rows = valid.unsqueeze(1)
    wide = _accumulation_dtype(result.dtype)
    self_is_result = out == result
    if not include_self:
        reached = _target_counts(index, valid, out_rows) > 0
        self_is_result &= ~reached.unsqueeze(1)
    src_is_result = (src == result.index_select(0, safe)) & valid_rows
    ties = self_is_result.to(wide).index_add(0, safe, src_is_result.to(wide))
    total = torch.where(self_is_result, out_t, 0).to(wide).index_add(
        0, safe, torch.where(src_is_result, src_t, 0).to(wide))
    return (total / ties).to(result.dtype)
