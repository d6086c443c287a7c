"""The float64 reference of a scatter_reduce along dim 0 with a 1-D index (or
of a weighted sum), and the checks that hold the library's results to it
element by element: a tolerance scaled by the largest element of the whole
result would let a wrong divisor of a small mean pass. Needs torch.
"""

import torch

UNIT_ROUNDOFF = {torch.float64: 2.0**-53, torch.float32: 2.0**-24, torch.float16: 2.0**-11,
                 torch.bfloat16: 2.0**-8}
_SAME_SIZE_INTEGERS = {2: torch.int16, 4: torch.int32, 8: torch.int64}


def float64_reference(out, index, src, reduce, include_self=True, weights=None):
    """out.scatter_reduce(0, index expanded over the columns, src, reduce,
    include_self) in float64 on the CPU, src's rows scaled by weights if given."""
    out, index, src = out.double().cpu(), index.long().cpu(), src.double().cpu()
    if weights is not None:
        src = src * weights.double().cpu().view(-1, 1)
    return out.scatter_reduce(0, index.view(-1, 1).expand(src.shape), src, reduce, include_self=include_self)


def rounding_bound(out, index, src, reduce, include_self=True, weights=None):
    """Per element, how far the library's sum or mean may lie from
    float64_reference, for n operands of magnitudes |terms| and u the unit
    roundoff of the rows' dtype. A sum with include_self may stream, adding
    in the rows' dtype after rounding each weighted product to it:
    2 (n + 2) u |terms|. The other reduces run grouped only, summing in
    float32 (float64 for f64) and rounding once: 2 u |result| +
    2 (n + 2) u_sum |terms|, over the divisor for a mean. 0 for the targets
    no row reaches: they keep their values."""
    unit = UNIT_ROUNDOFF[out.dtype]
    sum_unit = UNIT_ROUNDOFF[torch.float64 if out.dtype == torch.float64 else torch.float32]
    rows = torch.bincount(index.long().cpu(), minlength=out.shape[0]).double().unsqueeze(1)
    operands = rows + (1 if include_self else 0)
    terms = float64_reference(out.abs() if include_self else torch.zeros_like(out), index, src.abs(), "sum",
                              weights=None if weights is None else weights.abs())
    if reduce == "sum" and include_self:
        bound = 2 * (operands + 2) * unit * terms
    else:
        divisor = operands.clamp(min=1) if reduce == "mean" else 1
        result = float64_reference(out, index, src, reduce, include_self, weights).abs()
        bound = 2 * unit * result + 2 * (operands + 2) * sum_unit * terms / divisor
    return torch.where(rows > 0, bound, 0.0)


def assert_within_bound(test, got, expected, bound, what=""):
    """NaN where expected has NaN, its infinities, and each finite element of
    got within that element's bound of expected."""
    got, expected, bound = got.double().cpu(), expected.double().cpu(), bound.cpu()
    test.assertTrue(torch.equal(got.isnan(), expected.isnan()), f"{what}: NaN not where the reference has it")
    infinite = expected.isinf()
    test.assertTrue(torch.equal(got[infinite], expected[infinite]), f"{what}: infinities differ")
    finite = expected.isfinite()
    error = (got[finite] - expected[finite]).abs()
    worst = float((error / bound[finite].clamp(min=1e-300)).max()) if finite.any() else 0.0
    test.assertLessEqual(worst, 1.0, f"{what}: max |error| / bound = {worst:.3g}")


def assert_same_bits_with_nans(test, got, expected, what=""):
    """NaN where expected has NaN, and elsewhere got bit for bit expected in
    got's dtype (an amax or amin picks one of its operands)."""
    got, expected = got.cpu().contiguous(), expected.cpu().to(got.dtype).contiguous()
    nan = expected.isnan()
    test.assertTrue(torch.equal(got.isnan(), nan), f"{what}: NaN not where the reference has it")
    integers = _SAME_SIZE_INTEGERS[got.element_size()]
    test.assertTrue(torch.equal(got.view(integers)[~nan], expected.view(integers)[~nan]),
                    f"{what}: not bit for bit the reference")


def assert_matches_float64(test, got, out, index, src, reduce, include_self=True, weights=None, what=""):
    """got, the library's out.scatter_reduce (weighted sum with weights),
    against float64_reference: amax and amin bit for bit, a sum or mean within
    rounding_bound, element by element."""
    expected = float64_reference(out, index, src, reduce, include_self, weights)
    if reduce in ("amax", "amin"):
        assert_same_bits_with_nans(test, got, expected, what)
    else:
        assert_within_bound(test, got, expected, rounding_bound(out, index, src, reduce, include_self, weights), what)
