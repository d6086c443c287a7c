"""Tests of scatterptx.torch's reductions beyond the plain sum: the operators
scatter_reduce / scatter_reduce_ (sum, mean, amax, amin, include_self) and
weighted_index_add / weighted_index_add_, their gradients, and scatter's
PyG reductions.

Without torch every case skips. The CPU cases run wherever torch does: CPU
tensors take the fallback to torch's own ops, which exercises the contracts,
registration, fake kernels, the hand-written autograd (checked against
torch.scatter_reduce's own autograd and by gradcheck in float64),
torch.compile and export. The GPU cases need an sm_90+ GPU and check the
library's results against float64 references.
"""

import importlib.util
import unittest
from unittest import mock
import warnings

import fresh_seeds
from package_under_test import scatterptx  # noqa: F401 - puts the package under test on sys.path
from torch_devices import GPUS, NO_GPU

HAVE_TORCH = importlib.util.find_spec("torch") is not None
HAVE_PYG = HAVE_TORCH and importlib.util.find_spec("torch_geometric") is not None
if HAVE_TORCH:
    import torch

    import scatterptx.torch as spt
    from scatterptx import _torch_call as torch_call
    from scatterptx import _torch_math as torch_math
    from reduce_reference import assert_matches_float64, assert_same_bits_with_nans, assert_within_bound, rounding_bound

NO_TORCH = "torch is not installed"
REDUCES = ("sum", "mean", "amax", "amin")
DTYPES = ("float32", "float16", "bfloat16", "float64")


def quietly(function, *args, **kwargs):
    """function(*args, **kwargs) with the once-per-reason fallback warning silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return function(*args, **kwargs)


def case(device="cpu", dtype="float64", index_dtype="int64", rows=9, out_rows=6, cols=3, targets=None, seed=0,
         integers=False):
    """out (out_rows, cols), index (rows,) into the first `targets` rows (all by
    default: the others are targets no row reaches), src (rows, cols).
    integers=True: small integer values, so that amax and amin tie."""
    generator = torch.Generator().manual_seed(fresh_seeds.seed(seed))
    if integers:
        out = torch.randint(-2, 3, (out_rows, cols), generator=generator).double()
        src = torch.randint(-2, 3, (rows, cols), generator=generator).double()
    else:
        out = torch.randn(out_rows, cols, generator=generator, dtype=torch.float64)
        src = torch.randn(rows, cols, generator=generator, dtype=torch.float64)
    index = torch.randint(0, targets or out_rows, (rows,), generator=generator)
    dtype = getattr(torch, dtype)
    return out.to(dtype).to(device), index.to(getattr(torch, index_dtype)).to(device), src.to(dtype).to(device)


def expanded(index, src):
    return index.long().view(-1, 1).expand(src.shape)


def reference(out, index, src, reduce, include_self):
    """torch's scatter_reduce in float64 on the CPU."""
    out, index, src = out.double().cpu(), index.cpu(), src.double().cpu()
    return out.scatter_reduce(0, expanded(index, src), src, reduce, include_self=include_self)


def weighted_reference(out, index, src, weights):
    out, index, src, weights = out.double().cpu(), index.cpu(), src.double().cpu(), weights.double().cpu()
    return out.index_add(0, index.long(), src * weights.view(-1, 1))


def rounding_rule_case(device="cpu", rows=3, cols=1):
    """A bf16 weighted sum into one target whose result tells the rounding
    rules apart: three rows of ones (any more are zeros) weighted by float32
    1 + 3 * 2^-9. Each product rounded to bf16 before it is added gives
    3.03125; the float32 products summed in float32, rounded once, 3.015625;
    the weights ignored, 3.0."""
    out = torch.zeros(1, cols, dtype=torch.bfloat16, device=device)
    src = torch.zeros(rows, cols, dtype=torch.bfloat16, device=device)
    src[:3] = 1
    weights = torch.full((rows,), 1 + 3 * 2**-9, dtype=torch.float32, device=device)
    return out, torch.zeros(rows, dtype=torch.int64, device=device), src, weights


def torch_gradients(out, index, src, reduce, include_self, grad):
    """(result, gradient of out, gradient of src) of torch.scatter_reduce."""
    out, src = out.detach().clone().requires_grad_(), src.detach().clone().requires_grad_()
    result = torch.scatter_reduce(out, 0, expanded(index, src), src, reduce, include_self=include_self)
    result.backward(grad)
    return result.detach(), out.grad, src.grad


def our_gradients(out, index, src, reduce, include_self, grad, in_place=False):
    out, src = out.detach().clone().requires_grad_(), src.detach().clone().requires_grad_()
    if in_place:
        result = quietly(spt.scatter_reduce_, out * 1, index, src, reduce, include_self=include_self)
    else:
        result = quietly(spt.scatter_reduce, out, index, src, reduce, include_self=include_self)
    result.backward(grad)
    return result.detach(), out.grad, src.grad


def assert_equal_with_nans(test, got, expected, what=""):
    test.assertTrue(torch.equal(got.isnan(), expected.isnan()), what)
    test.assertTrue(torch.equal(torch.nan_to_num(got, nan=0.0), torch.nan_to_num(expected, nan=0.0)), what)


@unittest.skipUnless(HAVE_TORCH, NO_TORCH)
class Registration(unittest.TestCase):
    def test_the_operators_have_torch_schemas(self):
        ops = torch.ops.scatterptx
        self.assertEqual(str(ops.scatter_reduce.default._schema),
                         "scatterptx::scatter_reduce(Tensor out, Tensor index, Tensor src, str reduce, *, "
                         "bool include_self=True) -> Tensor")
        self.assertEqual(str(ops.scatter_reduce_.default._schema),
                         "scatterptx::scatter_reduce_(Tensor(a!) out, Tensor index, Tensor src, str reduce, *, "
                         "bool include_self=True) -> ()")
        self.assertEqual(str(ops.weighted_index_add.default._schema),
                         "scatterptx::weighted_index_add(Tensor out, Tensor index, Tensor source, Tensor weights) "
                         "-> Tensor")
        self.assertEqual(str(ops.weighted_index_add_.default._schema),
                         "scatterptx::weighted_index_add_(Tensor(a!) out, Tensor index, Tensor source, "
                         "Tensor weights) -> ()")
        for op in (ops.scatter_reduce, ops.scatter_reduce_, ops.weighted_index_add, ops.weighted_index_add_):
            self.assertIn(torch.Tag.pt2_compliant_tag, op.default.tags)


@unittest.skipUnless(HAVE_TORCH, NO_TORCH)
class CpuFallback(unittest.TestCase):
    def test_scatter_reduce_matches_float64_for_every_reduce_and_include_self(self):
        for dtype in ("float64", "float32", "bfloat16"):
            for index_dtype in ("int32", "int64"):
                # 8 targets, 5 reached: three keep out's values
                out, index, src = case(dtype=dtype, index_dtype=index_dtype, rows=20, out_rows=8, cols=5, targets=5)
                for reduce in REDUCES:
                    for include_self in (True, False):
                        with self.subTest(dtype=dtype, index_dtype=index_dtype, reduce=reduce,
                                          include_self=include_self):
                            expected = reference(out, index, src, reduce, include_self)
                            got = quietly(spt.scatter_reduce, out, index, src, reduce, include_self=include_self)
                            in_place = out.clone()
                            self.assertIs(quietly(spt.scatter_reduce_, in_place, index, src, reduce,
                                                  include_self=include_self), in_place)
                            tolerance = {"float64": 1e-12, "float32": 1e-5, "bfloat16": 2e-2}[dtype]
                            for result in (got, in_place):
                                self.assertEqual(result.dtype, out.dtype)
                                torch.testing.assert_close(result.double(), expected, rtol=tolerance,
                                                           atol=tolerance)
                            self.assertTrue(torch.equal(got[5:], out[5:]))  # targets no row reaches

    def test_nan_and_infinities_propagate_as_in_torch(self):
        out, index, src = case(rows=12, out_rows=6, cols=4, targets=4)
        src[0, 0], src[1, 1], src[2, 2] = float("nan"), float("inf"), -float("inf")
        out[index[3], 3] = float("nan")
        out[5, 0] = float("nan")  # a target no row reaches keeps its NaN
        for reduce in REDUCES:
            for include_self in (True, False):
                got = quietly(spt.scatter_reduce, out, index, src, reduce, include_self=include_self)
                assert_equal_with_nans(self, got, reference(out, index, src, reduce, include_self),
                                       f"{reduce} include_self={include_self}")

    def test_no_rows_leave_out_unchanged(self):
        out, index, src = case(rows=0)
        for reduce in REDUCES:
            for include_self in (True, False):
                self.assertTrue(torch.equal(quietly(spt.scatter_reduce, out, index, src, reduce,
                                                    include_self=include_self), out))

    def test_the_functional_operators_leave_out_alone_and_return_contiguous_results(self):
        out, index, src = case(rows=6, out_rows=6, cols=6)
        weights = torch.rand(6, dtype=torch.float64)
        transposed = out.t()
        before = transposed.clone()
        got = quietly(spt.scatter_reduce, transposed, index, src, "amax", include_self=False)
        self.assertTrue(torch.equal(got, reference(transposed, index, src, "amax", False)))
        self.assertTrue(got.is_contiguous())
        got = quietly(spt.weighted_index_add, transposed, index, src, weights)
        torch.testing.assert_close(got, weighted_reference(transposed, index, src, weights))
        self.assertTrue(got.is_contiguous())
        self.assertTrue(torch.equal(transposed, before))

    def test_weighted_index_add_matches_float64(self):
        for dtype, weights_dtypes, tolerance in (("float64", ("float64", "float32"), 1e-12),
                                                 ("float32", ("float32",), 1e-5),
                                                 ("bfloat16", ("bfloat16", "float32"), 3e-2)):
            for weights_dtype in weights_dtypes:
                for index_dtype in ("int32", "int64"):
                    with self.subTest(dtype=dtype, weights_dtype=weights_dtype, index_dtype=index_dtype):
                        out, index, src = case(dtype=dtype, index_dtype=index_dtype, rows=20, out_rows=8, cols=5)
                        weights = torch.randn(20, dtype=torch.float64).to(getattr(torch, weights_dtype))
                        expected = weighted_reference(out, index, src, weights)
                        got = quietly(spt.weighted_index_add, out, index, src, weights)
                        in_place = out.clone()
                        self.assertIs(quietly(spt.weighted_index_add_, in_place, index, src, weights), in_place)
                        for result in (got, in_place):
                            self.assertEqual(result.dtype, out.dtype)
                            torch.testing.assert_close(result.double(), expected, rtol=tolerance, atol=tolerance)

    def test_weighted_index_add_rounds_each_product_to_the_rows_dtype(self):
        # the fallback takes the library's streaming rule (_torch_math._weighted_rows):
        # each product in float32, rounded to bf16 before it is added
        out, index, src, weights = rounding_rule_case()
        self.assertEqual(quietly(spt.weighted_index_add, out, index, src, weights).item(), 3.03125)

    def test_fallbacks_are_counted_and_name_torchs_op(self):
        spt.reset_fallback_counts()
        out, index, src = case()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(2):
                spt.scatter_reduce_(out, index, src, "mean")
            spt.weighted_index_add_(out, index, src, torch.ones(9, dtype=torch.float64))
        self.assertEqual(spt.fallback_counts(), {"cpu tensors": 3})
        messages = [str(w.message) for w in caught if "scatterptx" in str(w.message)]
        self.assertEqual(len(messages), 1)
        self.assertIn("scatter_reduce_", messages[0])

    def test_the_contracts_raise_alike_on_cpu_and_in_the_fake_kernels(self):
        out, index, src = case()
        weights = torch.ones(9, dtype=torch.float64)
        scatter_reduce_cases = {
            "reduce must be one of": (out, index, src, "prod"),
            "out and src must be 2-D": (out[:, 0], index, src[:, 0], "sum"),
            "index must be int32 or int64": (out, index.float(), src, "sum"),
            "src is torch.float32 but out is torch.float64": (out, index, src.float(), "sum"),
            "8 indices for 9 rows": (out, index[:-1], src, "sum"),
            "src has 2 columns but out 3": (out, index, src[:, :2], "sum"),
        }
        weighted_cases = {
            "weights must be 1-D": (out, index, src, weights.view(9, 1)),
            "8 weights for 9 rows": (out, index, src, weights[:-1]),
            "weights must be float32 or src's dtype": (out, index, src, weights.half()),
        }
        for device in ("cpu", "meta"):
            for message, (o, i, s, reduce) in scatter_reduce_cases.items():
                o, i, s = o.to(device), i.to(device), s.to(device)
                for op in (spt.scatter_reduce, spt.scatter_reduce_):
                    with self.subTest(device=device, op=op.__name__, message=message):
                        with self.assertRaisesRegex(RuntimeError, message):
                            quietly(op, o.clone(), i, s, reduce)
            for message, (o, i, s, w) in weighted_cases.items():
                o, i, s, w = o.to(device), i.to(device), s.to(device), w.to(device)
                for op in (spt.weighted_index_add, spt.weighted_index_add_):
                    with self.subTest(device=device, op=op.__name__, message=message):
                        with self.assertRaisesRegex(RuntimeError, message):
                            quietly(op, o.clone(), i, s, w)
        # out, index and src of the weighted operators: torch's index_add_ errors
        with self.assertRaises(RuntimeError) as ours:
            quietly(spt.weighted_index_add_, out.clone(), index, src.float(), weights.float())
        with self.assertRaises(RuntimeError) as torchs:
            out.clone().index_add_(0, index, src.float())
        self.assertEqual(str(ours.exception), str(torchs.exception))

    def test_what_only_torch_takes_falls_back_with_its_reason(self):
        # CPU tensors passing for an sm_90 GPU's, and meta tensors of sizes no test could allocate
        with mock.patch.object(torch_call, "_device_capability", return_value=(9, 0)), \
                mock.patch.object(torch_call, "_first_call_reason", return_value=None):
            out, index, src = case(dtype="float32")
            reason = torch_call._reduce_fallback_reason
            self.assertIsNone(reason(out, index, src, "amax", False))
            self.assertIsNone(reason(out, index, src, weights=torch.ones(9)))
            storage = torch.ones(30)
            self.assertEqual(reason(storage[:18].view(6, 3), index, src, weights=storage[20:29]),
                             "weights share memory with out")
            many = torch.empty(2**32, 1, device="meta")
            for rows, targets in ((many, many[:5]), (many[:9], many)):
                rows_index = torch.empty(rows.shape[0], dtype=torch.int64, device="meta")
                self.assertIsNone(reason(targets, rows_index, rows))
                for reduce, include_self in (("sum", False), ("mean", True), ("amax", True), ("amin", False)):
                    self.assertIn("beyond 2^32 - 1 source rows or 2^32 - 2 targets",
                                  reason(targets, rows_index, rows, reduce, include_self))

    def test_an_index_out_of_range_raises_torchs_error_on_cpu(self):
        out, index, src = case()
        index[2] = 6
        for reduce in REDUCES:
            with self.assertRaisesRegex(RuntimeError, "out of bounds"):
                quietly(spt.scatter_reduce, out, index, src, reduce)


@unittest.skipUnless(HAVE_TORCH, NO_TORCH)
class Autograd(unittest.TestCase):
    def test_gradcheck_f64_every_reduce_and_include_self(self):
        out, index, src = case(rows=9, out_rows=6, targets=5)  # row 5: a target no row reaches
        out.requires_grad_()
        src.requires_grad_()
        for reduce in REDUCES:
            for include_self in (True, False):
                with self.subTest(reduce=reduce, include_self=include_self):
                    def functional(o, s):
                        return spt.scatter_reduce(o, index, s, reduce, include_self=include_self)

                    def in_place(o, s):
                        return spt.scatter_reduce_(o * 1, index, s, reduce, include_self=include_self)

                    self.assertTrue(quietly(torch.autograd.gradcheck, functional, (out, src)))
                    self.assertTrue(quietly(torch.autograd.gradgradcheck, functional, (out, src)))
                    self.assertTrue(quietly(torch.autograd.gradcheck, in_place, (out, src)))

    def test_weighted_gradcheck_f64(self):
        out, index, src = case(targets=5)
        weights = torch.randn(9, dtype=torch.float64)
        leaves = [t.clone().requires_grad_() for t in (out, src, weights)]
        self.assertTrue(quietly(torch.autograd.gradcheck,
                                lambda o, s, w: spt.weighted_index_add(o, index, s, w), leaves))
        self.assertTrue(quietly(torch.autograd.gradgradcheck,
                                lambda o, s, w: spt.weighted_index_add(o, index, s, w), leaves))
        self.assertTrue(quietly(torch.autograd.gradcheck,
                                lambda o, s, w: spt.weighted_index_add_(o * 1, index, s, w), leaves))
        # only some inputs wanting a gradient
        for wanted in ((False, True, False), (False, False, True), (True, False, False)):
            inputs = [t.clone().requires_grad_(w) for t, w in zip((out, src, weights), wanted)]
            self.assertTrue(quietly(torch.autograd.gradcheck,
                                    lambda o, s, w: spt.weighted_index_add(o, index, s, w), inputs))

    def test_forward_mode_equals_torchs_with_ties_and_include_self_both_ways(self):
        # Tangents through forward_ad.dual_level and torch.func.jvp, functional
        # and in place, against torch.scatter_reduce's own forward derivative.
        from torch.autograd import forward_ad
        from torch.func import jvp

        for seed in range(3):
            out, index, src = case(rows=30, out_rows=8, cols=4, targets=6, seed=seed, integers=True)
            generator = torch.Generator().manual_seed(fresh_seeds.seed(seed))
            out_t = torch.randn(8, 4, dtype=torch.float64, generator=generator)
            src_t = torch.randn(30, 4, dtype=torch.float64, generator=generator)
            for reduce in REDUCES:
                for include_self in (True, False):
                    def theirs(o, s):
                        return torch.scatter_reduce(o, 0, expanded(index, s), s, reduce, include_self=include_self)

                    def ours(o, s):
                        return quietly(spt.scatter_reduce, o, index, s, reduce, include_self=include_self)

                    expected = jvp(theirs, (out, src), (out_t, src_t))[1]
                    with self.subTest(seed=seed, reduce=reduce, include_self=include_self):
                        self.assertTrue(torch.allclose(jvp(ours, (out, src), (out_t, src_t))[1], expected))
                        with forward_ad.dual_level():
                            dual = forward_ad.make_dual(out.clone(), out_t.clone())
                            quietly(spt.scatter_reduce_, dual, index, forward_ad.make_dual(src, src_t), reduce,
                                    include_self=include_self)
                            tangent = forward_ad.unpack_dual(dual).tangent
                        self.assertIsNotNone(tangent)
                        self.assertTrue(torch.allclose(tangent, expected))

    def test_forward_mode_gradcheck_and_torch_func_transforms(self):
        out, index, src = case(targets=5)
        weights = torch.randn(9, dtype=torch.float64)
        leaves = [t.clone().requires_grad_() for t in (out, src, weights)]
        self.assertTrue(quietly(torch.autograd.gradcheck, lambda o, s, w: spt.weighted_index_add(o, index, s, w),
                                leaves, check_forward_ad=True))
        for reduce in ("mean", "amax"):
            self.assertTrue(quietly(torch.autograd.gradcheck,
                                    lambda o, s: spt.scatter_reduce(o, index, s, reduce, include_self=False),
                                    leaves[:2], check_forward_ad=True))
        # torch.func.grad and vmap over it, against torch's op
        def loss(op, s):
            return op(s).pow(2).sum()

        ours = torch.func.grad(lambda s: loss(lambda t: quietly(spt.scatter_reduce, out, index, t, "mean"), s))
        theirs = torch.func.grad(lambda s: loss(lambda t: torch.scatter_reduce(out, 0, expanded(index, t), t, "mean"),
                                                s))
        self.assertTrue(torch.allclose(ours(src), theirs(src)))
        batch = torch.stack([src, 2 * src])
        self.assertTrue(torch.allclose(quietly(torch.func.vmap(ours), batch), torch.func.vmap(theirs)(batch)))

    def test_gradients_equal_torchs_with_ties_empty_targets_and_include_self_both_ways(self):
        for seed in range(4):
            # integer values: amax and amin tie within src and with out's own values
            out, index, src = case(rows=30, out_rows=8, cols=4, targets=6, seed=seed, integers=True)
            generator = torch.Generator().manual_seed(fresh_seeds.seed(seed))
            grad = torch.randn(8, 4, dtype=torch.float64, generator=generator)
            for reduce in REDUCES:
                for include_self in (True, False):
                    expected = torch_gradients(out, index, src, reduce, include_self, grad)
                    for in_place in (False, True):
                        with self.subTest(seed=seed, reduce=reduce, include_self=include_self, in_place=in_place):
                            got = our_gradients(out, index, src, reduce, include_self, grad, in_place)
                            for a, b in zip(got, expected):
                                self.assertTrue(torch.equal(a, b))

    def test_gradients_equal_torchs_in_low_precision(self):
        out, index, src = case(rows=30, out_rows=8, cols=4, targets=6, integers=True)
        grad = torch.randn(8, 4, generator=torch.Generator().manual_seed(fresh_seeds.seed(3)))
        for dtype in (torch.float32, torch.bfloat16, torch.float16):
            for reduce in REDUCES:
                for include_self in (True, False):
                    with self.subTest(dtype=dtype, reduce=reduce, include_self=include_self):
                        o, s, g = out.to(dtype), src.to(dtype), grad.to(dtype)
                        got = our_gradients(o, index, s, reduce, include_self, g)
                        expected = torch_gradients(o, index, s, reduce, include_self, g)
                        for a, b in zip(got, expected):
                            self.assertEqual(a.dtype, dtype)
                            torch.testing.assert_close(a, b, rtol=0, atol=0)

    def test_gradients_with_nans_equal_torchs(self):
        out, index, src = case(rows=12, out_rows=6, cols=4, targets=4, integers=True)
        src[0, 0], src[1, 1] = float("nan"), float("inf")
        out[index[3], 2], out[5, 3] = float("nan"), float("nan")
        grad = torch.randn(6, 4, dtype=torch.float64)
        for reduce in REDUCES:
            for include_self in (True, False):
                got = our_gradients(out, index, src, reduce, include_self, grad)
                expected = torch_gradients(out, index, src, reduce, include_self, grad)
                for a, b in zip(got, expected):
                    assert_equal_with_nans(self, a, b, f"{reduce} include_self={include_self}")

    def test_an_excluded_out_value_equal_to_the_result_counts_among_the_ties_as_in_torch(self):
        # torch's scatter_reduce_backward counts out's value among amax's ties
        # even without include_self: src[0] gets half the gradient, not all of it.
        out = torch.tensor([[3.0], [5.0]], dtype=torch.float64)
        src = torch.tensor([[3.0], [1.0]], dtype=torch.float64)
        index = torch.tensor([0, 0])
        grad = torch.ones(2, 1, dtype=torch.float64)
        for reduce in ("amax", "amin"):
            got = our_gradients(out, index, src, reduce, False, grad)
            expected = torch_gradients(out, index, src, reduce, False, grad)
            for a, b in zip(got, expected):
                self.assertTrue(torch.equal(a, b))
        self.assertEqual(our_gradients(out, index, src, "amax", False, grad)[2][0].item(), 0.5)

    def test_weighted_gradients_equal_those_of_the_float64_formula(self):
        out, index, src = case(rows=20, out_rows=8, cols=5, targets=6)
        weights = torch.randn(20, dtype=torch.float64)
        grad = torch.randn(8, 5, dtype=torch.float64)
        leaves = [t.clone().requires_grad_() for t in (out, src, weights)]
        quietly(spt.weighted_index_add, leaves[0], index, leaves[1], leaves[2]).backward(grad)
        expected = [t.clone().requires_grad_() for t in (out, src, weights)]
        expected[0].index_add(0, index, expected[1] * expected[2].view(-1, 1)).backward(grad)
        for a, b in zip(leaves, expected):
            torch.testing.assert_close(a.grad, b.grad, rtol=1e-12, atol=1e-12)
        # float32 weights with bf16 rows: each gradient in its own tensor's dtype
        src16, weights32 = src.to(torch.bfloat16).requires_grad_(), weights.float().requires_grad_()
        quietly(spt.weighted_index_add, out.to(torch.bfloat16), index, src16, weights32).backward(
            grad.to(torch.bfloat16))
        self.assertEqual((src16.grad.dtype, weights32.grad.dtype), (torch.bfloat16, torch.float32))
        torch.testing.assert_close(src16.grad.double(), expected[1].grad, rtol=2e-2, atol=2e-2)
        torch.testing.assert_close(weights32.grad.double(), expected[2].grad, rtol=3e-2, atol=3e-2)

    def test_rows_out_of_range_get_zero_gradient(self):
        # what the library's skipped rows get on the GPU, computed on the CPU
        grad = torch.arange(12, dtype=torch.float64).reshape(4, 3) + 1
        index = torch.tensor([3, -1, 4, 0, 100, 3])
        src = torch.ones(6, 3, dtype=torch.float64)
        weights = torch.full((6,), 2.0, dtype=torch.float64)
        bad = torch.tensor([False, True, True, False, True, False])
        grad_src, grad_weights = torch_math.weighted_source_grads(grad, index, src, weights)
        self.assertTrue(torch.equal(grad_src[bad], torch.zeros(3, 3, dtype=torch.float64)))
        self.assertTrue(torch.equal(grad_src[~bad], 2 * grad[index[~bad]]))
        self.assertTrue(torch.equal(grad_weights, torch.where(bad, 0, grad[index.clamp(0, 3)].sum(1))))
        out = torch.zeros(4, 3, dtype=torch.float64)
        for reduce in REDUCES:
            for include_self in (True, False):
                result = torch.ones(4, 3, dtype=torch.float64)
                result[1:3] = out[1:3]  # targets no valid row reaches keep out's value
                grads = torch_math.scatter_reduce_grads
                grad_out, grad_src = grads(grad, index, reduce, include_self, out, src, result)
                self.assertTrue(torch.equal(grad_src[bad], torch.zeros(3, 3, dtype=torch.float64)), reduce)
                # the valid rows reach targets 0 and 3, twice target 3: as torch with those rows alone
                valid = index[~bad]
                expected_out, expected_src = grads(grad, valid, reduce, include_self, out, src[~bad], result)
                self.assertTrue(torch.equal(grad_out, expected_out), reduce)
                self.assertTrue(torch.equal(grad_src[~bad], expected_src), reduce)

    def test_in_place_on_a_leaf_that_requires_grad_raises_like_torch(self):
        out, index, src = case()
        out.requires_grad_()
        with self.assertRaisesRegex(RuntimeError, "leaf Variable that requires grad"):
            quietly(spt.scatter_reduce_, out, index, src, "amax")
        with self.assertRaisesRegex(RuntimeError, "leaf Variable that requires grad"):
            quietly(spt.weighted_index_add_, out, index, src, torch.ones(9, dtype=torch.float64))

    def test_in_place_bumps_the_version_for_saved_tensors(self):
        out, index, src = case()
        weight = torch.ones(3, dtype=out.dtype, requires_grad=True)
        for call in (lambda: spt.scatter_reduce_(out, index, src, "amin", include_self=False),
                     lambda: spt.weighted_index_add_(out, index, src, torch.ones(9, dtype=torch.float64))):
            product = out * weight  # saves out for backward
            quietly(call)
            with self.assertRaisesRegex(RuntimeError, "modified by an inplace operation"):
                product.sum().backward()


@unittest.skipUnless(HAVE_TORCH, NO_TORCH)
class Scatter(unittest.TestCase):
    """scatter's reductions, as PyG's torch_geometric.utils.scatter computes them."""

    @staticmethod
    def pyg_reference(src, index, dim_size, reduce):
        # PyG: "sum"/"add" scatter_add_; "mean" the sum over clamp(count, 1); "max"/"min" scatter_reduce_
        # with amax/amin and include_self=False into zeros (targets no row reaches stay 0)
        zeros = src.new_zeros((dim_size,) + src.shape[1:])
        full = index.view((-1,) + (1,) * (src.dim() - 1)).expand_as(src)
        if reduce in ("sum", "add"):
            return zeros.scatter_add(0, full, src)
        if reduce == "mean":
            count = src.new_zeros(dim_size).scatter_add(0, index, src.new_ones(index.numel())).clamp(min=1)
            return zeros.scatter_add(0, full, src) / count.view((-1,) + (1,) * (src.dim() - 1))
        return zeros.scatter_reduce(0, full, src, "a" + reduce[-3:], include_self=False)

    def test_every_reduce_matches_pygs_semantics(self):
        _, index, src = case(rows=20, out_rows=8, cols=4, targets=6)
        src = -src.abs()  # all negative: a maximum of zeros would show
        for reduce in ("sum", "add", "mean", "max", "min", "amax", "amin"):
            for rows in (src, src[:, 0]):
                with self.subTest(reduce=reduce, dims=rows.dim()):
                    got = quietly(spt.scatter, rows, index, 0, dim_size=8, reduce=reduce)
                    expected = self.pyg_reference(rows, index, 8, reduce)
                    torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12)
                    self.assertTrue(torch.equal(got[6:], torch.zeros_like(got[6:])))
        # dim_size from the index
        self.assertEqual(quietly(spt.scatter, src, index, reduce="max").shape[0], int(index.max()) + 1)

    def test_gradients_match_pygs_semantics(self):
        _, index, src = case(rows=20, out_rows=8, cols=4, targets=6, integers=True)
        grad = torch.randn(8, 4, dtype=torch.float64)
        for reduce in ("mean", "max", "min"):
            with self.subTest(reduce=reduce):
                ours, theirs = src.clone().requires_grad_(), src.clone().requires_grad_()
                quietly(spt.scatter, ours, index, dim_size=8, reduce=reduce).backward(grad)
                self.pyg_reference(theirs, index, 8, reduce).backward(grad)
                torch.testing.assert_close(ours.grad, theirs.grad, rtol=1e-12, atol=1e-12)

    @unittest.skipUnless(HAVE_PYG, "torch_geometric is not installed")
    def test_torch_geometric_gives_the_same_values_and_gradients(self):
        from torch_geometric.utils import scatter as pyg_scatter

        _, index, src = case(rows=20, out_rows=8, cols=4, targets=6, integers=True)
        for reduce in ("sum", "add", "mean", "max", "min"):
            with self.subTest(reduce=reduce):
                ours, theirs = src.clone().requires_grad_(), src.clone().requires_grad_()
                got = quietly(spt.scatter, ours, index, 0, dim_size=8, reduce=reduce)
                expected = pyg_scatter(theirs, index, 0, dim_size=8, reduce=reduce)
                torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12)
                got.pow(2).sum().backward()
                expected.pow(2).sum().backward()
                torch.testing.assert_close(ours.grad, theirs.grad, rtol=1e-12, atol=1e-12)

    def test_out_takes_sums_only(self):
        out, index, src = case()
        for reduce in ("mean", "max", "min"):
            with self.assertRaisesRegex(NotImplementedError, "scatter_reduce_"):
                spt.scatter(src, index, out=out, reduce=reduce)


def opcheck_cases(device="cpu", dtype="float64", index_dtype="int64"):
    """(op, args, kwargs) for torch.library.opcheck: every new op, every reduce
    and include_self, with and without grad."""
    out, index, src = case(device, dtype, index_dtype, targets=5)
    weights = torch.rand(9, dtype=torch.float64).to(src.dtype).to(device)
    ops = torch.ops.scatterptx
    cases = []
    for reduce in REDUCES:
        for include_self in (True, False):
            kwargs = {"include_self": include_self}
            cases += [(ops.scatter_reduce.default, (out, index, src, reduce), kwargs),
                      (ops.scatter_reduce.default,
                       (out.clone().requires_grad_(), index, src.clone().requires_grad_(), reduce), kwargs),
                      (ops.scatter_reduce_.default, (out.clone(), index, src, reduce), kwargs),
                      (ops.scatter_reduce_.default, (out.clone(), index, src.clone().requires_grad_(), reduce),
                       kwargs)]
    for w in (weights, weights.float()):
        cases += [(ops.weighted_index_add.default, (out, index, src, w), {}),
                  (ops.weighted_index_add.default, (out.clone().requires_grad_(), index, src.clone().requires_grad_(),
                                                    w.clone().requires_grad_()), {}),
                  (ops.weighted_index_add_.default, (out.clone(), index, src, w), {}),
                  (ops.weighted_index_add_.default, (out.clone(), index, src.clone().requires_grad_(),
                                                     w.clone().requires_grad_()), {})]
    return cases


def reduce_model(out, index, src, weights):
    """Every new operator in one function."""
    largest = spt.scatter_reduce(out, index, src, "amax", include_self=False)
    weighted = spt.weighted_index_add(largest, index, src, weights)
    spt.scatter_reduce_(weighted, index, src, "mean")
    return weighted + spt.scatter(src, index, dim_size=out.shape[0], reduce="min")


@unittest.skipUnless(HAVE_TORCH, NO_TORCH)
class TorchLibraryChecks(unittest.TestCase):
    def setUp(self):
        torch._dynamo.reset()

    def test_opcheck_cpu(self):
        for op, args, kwargs in opcheck_cases():
            with self.subTest(op=str(op), args=[getattr(a, "requires_grad", a) for a in args], **kwargs):
                quietly(torch.library.opcheck, op, args, kwargs)

    def test_compile_fullgraph_forward_and_backward(self):
        out, index, src = case(targets=5)
        weights = torch.randn(9, dtype=torch.float64)

        def loss(o, s, w):
            return reduce_model(o, index, s, w).pow(2).sum()

        for backend in ("aot_eager", "inductor"):
            with self.subTest(backend=backend):
                torch._dynamo.reset()
                compiled = torch.compile(loss, fullgraph=True, backend=backend)
                leaves = [t.clone().requires_grad_() for t in (out, src, weights)]
                expected_leaves = [t.clone().requires_grad_() for t in (out, src, weights)]
                got = quietly(compiled, *leaves)
                expected = quietly(loss, *expected_leaves)
                torch.testing.assert_close(got, expected)
                got.backward()
                expected.backward()
                for a, b in zip(leaves, expected_leaves):
                    torch.testing.assert_close(a.grad, b.grad)

    def test_export_keeps_the_operators(self):
        out, index, src = case(targets=5)
        weights = torch.randn(9, dtype=torch.float64)

        class Model(torch.nn.Module):
            def forward(self, out, index, src, weights):
                return reduce_model(out, index, src, weights)

        exported = quietly(torch.export.export, Model(), (out, index, src, weights))
        text = str(exported.graph)
        for name in ("scatterptx.scatter_reduce.default", "scatterptx.weighted_index_add.default",
                     "scatterptx.scatter_reduce_.default"):
            self.assertIn(name, text)
        self.assertTrue(torch.equal(quietly(exported.module(), out, index, src, weights),
                                    quietly(reduce_model, out, index, src, weights)))


# ---------------------------------------------------------------------------
# GPU: the library against float64, element by element (reduce_reference.py)


def with_specials(out, index, src, out_rows):
    """NaN and infinities among src's rows and out's reached and unreached rows."""
    src[5, 3], src[7, 0], src[8, 1], src[9, 1] = float("nan"), float("inf"), -float("inf"), float("inf")
    out[int(index[11]), 2] = float("nan")
    out[out_rows - 1, 0] = float("nan")  # not reached
    out[out_rows - 2, 1] = float("inf")  # not reached
    return out, index, src


def planned_bf16_weighted_sum(out, index, src, weights):
    """What scatterptx_describe_plan says the default call runs for
    out[index[i], :] += weights[i] * src[i, :] on bf16 rows, int64 index and
    float32 weights: "mode=segmented ..." where it groups."""
    import ctypes

    from scatterptx import _binding
    from scatterptx._arrays import Problem
    from scatterptx._dispatch import problem_args

    args = problem_args(Problem(out.data_ptr(), out.shape[0], out.stride(0), src.data_ptr(), src.shape[0],
                                src.stride(0), src.shape[1], "bf16", index.data_ptr(), "int64"))
    args.weights, args.weights_dtype = weights.data_ptr(), _binding.DTYPES["f32"]
    text = ctypes.create_string_buffer(512)
    _binding.check(scatterptx.library().scatterptx_describe_plan(ctypes.byref(args), text, len(text)))
    return text.value.decode()


@unittest.skipUnless(GPUS, NO_GPU)
class Gpu(unittest.TestCase):
    def setUp(self):
        spt.reset_fallback_counts()
        torch.cuda.synchronize()
        scatterptx.take_index_error()  # start from an empty record

    def assert_no_fallback(self):
        self.assertEqual(spt.fallback_counts(), {})

    def layouts(self, dtype, index_dtype):
        """(name, out, index, src, reached): aligned rows of 64 columns and odd
        rows of 37 columns, with NaN and infinities, whose rows from `reached`
        on no index names; and enough rows of 256 bytes into an out beyond
        16 MiB for the default call to group a plain sum (reached None)."""
        yield ("aligned", *with_specials(*case("cuda", dtype, index_dtype, rows=3000, out_rows=120, cols=64,
                                                    targets=100), 120), 100)
        yield ("odd columns", *with_specials(*case("cuda", dtype, index_dtype, rows=1000, out_rows=60, cols=37,
                                                        targets=50, seed=1), 60), 50)
        cols = 256 // torch.empty((), dtype=getattr(torch, dtype)).element_size()
        yield ("grouped sum", *case("cuda", dtype, index_dtype, rows=70000, out_rows=70000, cols=cols, seed=2), None)

    def test_every_dtype_reduce_include_self_and_index_type_matches_float64(self):
        for dtype in DTYPES:
            for index_dtype in ("int32", "int64"):
                for layout, out, index, src, reached in self.layouts(dtype, index_dtype):
                    for reduce in REDUCES:
                        for include_self in (True, False):
                            what = f"{dtype} {index_dtype} {layout} {reduce} include_self={include_self}"
                            with self.subTest(what):
                                got = spt.scatter_reduce(out, index, src, reduce, include_self=include_self)
                                assert_matches_float64(self, got, out, index, src, reduce, include_self, what=what)
                                in_place = out.clone()
                                spt.scatter_reduce_(in_place, index, src, reduce, include_self=include_self)
                                assert_matches_float64(self, in_place, out, index, src, reduce, include_self,
                                                       what=what + " in place")
                                if reached is not None:  # targets no row reaches keep their bytes, NaN included
                                    assert_equal_with_nans(self, got[reached:], out[reached:], what)
                                    assert_equal_with_nans(self, in_place[reached:], out[reached:], what)
        self.assertEqual(scatterptx.take_index_error(), -1)
        self.assert_no_fallback()

    def test_weighted_sums_of_every_dtype_and_weights_dtype_match_float64(self):
        previous = torch.are_deterministic_algorithms_enabled()
        try:
            for deterministic in (False, True):
                torch.use_deterministic_algorithms(deterministic)
                for dtype in DTYPES:
                    for weights_dtype in sorted({"float32", dtype}):
                        for index_dtype in ("int32", "int64"):
                            for layout, out, index, src, _ in self.layouts(dtype, index_dtype):
                                what = f"{dtype} weights {weights_dtype} {index_dtype} {layout} " \
                                       f"deterministic={deterministic}"
                                with self.subTest(what):
                                    generator = torch.Generator().manual_seed(fresh_seeds.seed(4))
                                    weights = torch.randn(src.shape[0], generator=generator)
                                    weights = weights.to("cuda", getattr(torch, weights_dtype))
                                    got = spt.weighted_index_add(out, index, src, weights)
                                    assert_matches_float64(self, got, out, index, src, "sum", weights=weights,
                                                           what=what)
                                    in_place = out.clone()
                                    spt.weighted_index_add_(in_place, index, src, weights)
                                    assert_matches_float64(self, in_place, out, index, src, "sum", weights=weights,
                                                           what=what + " in place")
        finally:
            torch.use_deterministic_algorithms(previous)
        self.assert_no_fallback()

    def test_weighted_bf16_sums_round_as_each_path_documents(self):
        # docs/design.md "Reduces and weights": streamed, each product is
        # rounded to bf16 before its red; grouped, the products are fused into
        # a float32 sum rounded once. One-column rows stream; 2^16 rows of 256
        # bytes into one target group (host/group_plan.cpp auto_reason).
        for rows, cols, plan, expected in ((3, 1, "path=red", 3.03125), (1 << 16, 128, "mode=segmented", 3.015625)):
            with self.subTest(plan):
                out, index, src, weights = rounding_rule_case("cuda", rows, cols)
                described = planned_bf16_weighted_sum(out, index, src, weights)
                self.assertTrue(described.startswith(plan), described)
                got = spt.weighted_index_add(out, index, src, weights)
                self.assertTrue(torch.equal(got, torch.full_like(got, expected)), f"{plan}: {got.unique().tolist()}")
        self.assert_no_fallback()

    def test_scatter_matches_pygs_semantics(self):
        _, index, src = case("cuda", "float32", rows=3000, out_rows=120, cols=64, targets=100)
        zeros = torch.zeros(120, 64, device="cuda")
        for reduce in ("sum", "mean", "max", "min"):
            with self.subTest(reduce=reduce):
                got = spt.scatter(src, index, dim_size=120, reduce=reduce)
                expected = Scatter.pyg_reference(src.double().cpu(), index.cpu(), 120, reduce)
                if reduce in ("max", "min"):
                    assert_same_bits_with_nans(self, got, expected, reduce)
                else:  # PyG's sum and mean: scatter_reduce's into zeros, the mean without include_self
                    bound = rounding_bound(zeros, index, src, reduce, include_self=reduce == "sum")
                    assert_within_bound(self, got, expected, bound, reduce)
        self.assert_no_fallback()

    def test_opcheck_cuda(self):
        for dtype in DTYPES:
            for index_dtype in ("int32", "int64"):
                for op, args, kwargs in opcheck_cases("cuda", dtype, index_dtype):
                    with self.subTest(op=str(op), dtype=dtype, index_dtype=index_dtype, **kwargs):
                        torch.library.opcheck(op, args, kwargs, atol=2e-2, rtol=2e-2)
        self.assert_no_fallback()

    def test_gradcheck_f64_cuda(self):
        for index_dtype in ("int32", "int64"):
            out, index, src = case("cuda", index_dtype=index_dtype, targets=5)
            out.requires_grad_()
            src.requires_grad_()
            weights = torch.randn(9, dtype=torch.float64, device="cuda", requires_grad=True)
            for reduce in REDUCES:
                for include_self in (True, False):
                    with self.subTest(index_dtype=index_dtype, reduce=reduce, include_self=include_self):
                        self.assertTrue(torch.autograd.gradcheck(
                            lambda o, s: spt.scatter_reduce(o, index, s, reduce, include_self=include_self),
                            (out, src)))
                        self.assertTrue(torch.autograd.gradcheck(
                            lambda o, s: spt.scatter_reduce_(o * 1, index, s, reduce, include_self=include_self),
                            (out, src)))
            self.assertTrue(torch.autograd.gradcheck(lambda o, s, w: spt.weighted_index_add(o, index, s, w),
                                                     (out, src, weights)))
            self.assertTrue(torch.autograd.gradgradcheck(lambda o, s, w: spt.weighted_index_add(o, index, s, w),
                                                         (out, src, weights)))
        self.assert_no_fallback()

    def test_gradients_equal_torchs_with_ties(self):
        for dtype in ("float64", "float32", "bfloat16"):
            out, index, src = case("cuda", dtype, rows=3000, out_rows=120, cols=64, targets=100, integers=True)
            grad = torch.randn(120, 64, device="cuda").to(out.dtype)
            for reduce in REDUCES:
                for include_self in (True, False):
                    with self.subTest(dtype=dtype, reduce=reduce, include_self=include_self):
                        got = our_gradients(out, index, src, reduce, include_self, grad)
                        expected = torch_gradients(out, index, src, reduce, include_self, grad)
                        # integer values: sums are exact and amax/amin pick the same ties as torch
                        tolerance = 1e-2 if dtype == "bfloat16" else 1e-6
                        for a, b in zip(got, expected):
                            torch.testing.assert_close(a, b, rtol=tolerance, atol=tolerance)
        self.assert_no_fallback()

    def test_grouped_reduces_are_bitwise_reproducible(self):
        out, index, src = case("cuda", "float32", rows=200_000, out_rows=64, cols=64)
        weights = torch.randn(200_000, device="cuda")
        calls = {f"{reduce} include_self={include_self}":
                 (lambda r=reduce, i=include_self: spt.scatter_reduce(out, index, src, r, include_self=i))
                 for reduce in REDUCES for include_self in (True, False) if (reduce, include_self) != ("sum", True)}
        previous = torch.are_deterministic_algorithms_enabled()
        try:
            for deterministic in (False, True):
                torch.use_deterministic_algorithms(deterministic)
                cases = dict(calls)
                if deterministic:
                    cases["weighted sum"] = lambda: spt.weighted_index_add(out, index, src, weights)
                    cases["sum"] = lambda: spt.scatter_reduce(out, index, src, "sum")
                for what, call in cases.items():
                    with self.subTest(what, deterministic=deterministic):
                        first = call()
                        for _ in range(5):
                            self.assertTrue(torch.equal(call().view(torch.int32), first.view(torch.int32)))
        finally:
            torch.use_deterministic_algorithms(previous)
        self.assert_no_fallback()

    def test_out_of_range_rows_are_skipped_recorded_and_get_zero_gradient(self):
        out, index, src = case("cuda", rows=40, out_rows=10, cols=8)
        index[3], index[17] = -1, 10
        keep = (index >= 0) & (index < 10)
        weights = torch.randn(40, dtype=torch.float64, device="cuda")
        for reduce in REDUCES:
            for include_self in (True, False):
                with self.subTest(reduce=reduce, include_self=include_self):
                    leaf = src.clone().requires_grad_()
                    got = spt.scatter_reduce(out, index, leaf, reduce, include_self=include_self)
                    expected = reference(out, index[keep], src[keep], reduce, include_self)
                    torch.testing.assert_close(got.cpu(), expected, rtol=1e-12, atol=1e-12)
                    got.sum().backward()
                    self.assertTrue(torch.equal(leaf.grad[~keep], torch.zeros_like(leaf.grad[~keep])))
                    self.assertEqual(scatterptx.take_index_error(), 3)
        leaf, w = src.clone().requires_grad_(), weights.clone().requires_grad_()
        got = spt.weighted_index_add(out, index, leaf, w)
        torch.testing.assert_close(got.cpu(), weighted_reference(out, index[keep], src[keep], weights[keep]))
        got.sum().backward()
        self.assertTrue(torch.equal(leaf.grad[~keep], torch.zeros_like(leaf.grad[~keep])))
        self.assertTrue(torch.equal(w.grad[~keep], torch.zeros_like(w.grad[~keep])))
        self.assertEqual(scatterptx.take_index_error(), 3)

    def test_non_contiguous_layouts(self):
        out, index, src = case("cuda", "float32", rows=64, out_rows=64, cols=64)
        weights = torch.randn(128, generator=torch.Generator().manual_seed(fresh_seeds.seed(5))).to("cuda")[::2]
        for o, s in ((out.t(), src), (out, src.t()), (out[:, ::2], src[:, 1::2]), (out[1:40], src),
                     (out[:, :1], src[:, 5:6])):
            idx = index.clamp(max=o.shape[0] - 1)
            for reduce in REDUCES:
                assert_matches_float64(self, spt.scatter_reduce(o, idx, s, reduce, include_self=False), o, idx, s,
                                       reduce, False, what=reduce)
                got = o.clone()
                spt.scatter_reduce_(got, idx, s, reduce, include_self=False)
                assert_matches_float64(self, got, o, idx, s, reduce, False, what=reduce + " in place")
            assert_matches_float64(self, spt.weighted_index_add(o, idx, s, weights), o, idx, s, "sum", weights=weights,
                                   what="weighted")
        self.assert_no_fallback()

    def test_compile_fullgraph_cuda(self):
        out, index, src = case("cuda", "float32", rows=500, out_rows=50, cols=16)
        weights = torch.randn(500, generator=torch.Generator().manual_seed(fresh_seeds.seed(6))).to("cuda")
        # reduce_model's steps by torch's own ops in float64 on the CPU
        largest = reference(out, index, src, "amax", False)
        averaged = reference(weighted_reference(largest, index, src, weights), index, src, "mean", True)
        exact = averaged + reference(torch.zeros(out.shape, dtype=torch.float64), index, src, "amin", False)
        expected = reduce_model(out, index, src, weights)
        torch.testing.assert_close(expected.double().cpu(), exact, rtol=1e-5, atol=1e-4)
        for backend in ("aot_eager", "inductor"):
            torch._dynamo.reset()
            compiled = torch.compile(reduce_model, fullgraph=True, backend=backend)
            got = compiled(out, index, src, weights)
            torch.testing.assert_close(got, expected)
            torch.testing.assert_close(got.double().cpu(), exact, rtol=1e-5, atol=1e-4)
        self.assert_no_fallback()

    def test_cuda_graph_capture_and_replay(self):
        out, index, src = case("cuda", "float32", rows=500, out_rows=50, cols=16)
        weights = torch.randn(500, generator=torch.Generator().manual_seed(fresh_seeds.seed(3))).to("cuda")
        start = out.clone()
        spt.scatter_reduce_(out, index, src, "amax")  # loads the kernels before capture
        spt.weighted_index_add_(out, index, src, weights)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            spt.scatter_reduce_(out, index, src, "amax")
            spt.weighted_index_add_(out, index, src, weights)
        out.copy_(start)  # what a call run during the capture (not captured) wrote is gone
        for _ in range(2):
            graph.replay()
        torch.cuda.synchronize()
        expected = start
        for _ in range(2):
            expected = weighted_reference(reference(expected, index, src, "amax", True), index, src, weights)
        torch.testing.assert_close(out.double().cpu(), expected, rtol=1e-5, atol=1e-4)
        self.assert_no_fallback()

    def test_unsupported_dtypes_fall_back_and_are_counted(self):
        out, index, src = case("cuda", integers=True)
        out, src = out.to(torch.int32), src.to(torch.int32)
        got = quietly(spt.scatter_reduce, out, index, src, "amax", include_self=False)
        self.assertTrue(torch.equal(got, out.scatter_reduce(0, expanded(index, src), src, "amax",
                                                            include_self=False)))
        self.assertEqual(sum(spt.fallback_counts().values()), 1)


if __name__ == "__main__":
    unittest.main()
