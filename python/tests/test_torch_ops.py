"""Tests of scatterptx.torch: the torch.library operators and scatter.

Without torch every case skips. The CPU cases run wherever torch does (CPU
tensors take the fallback to torch's own op, which exercises the operator
registration, fake implementations, autograd, torch.compile and export);
the GPU cases need an sm_90+ GPU. The fallback for GPUs below sm_90 cannot
be exercised on an sm_90+ machine: only its counter and reason are shared
with the CPU cases.
"""

import contextlib
import importlib.util
import os
import subprocess
import sys
import unittest
from unittest import mock
import warnings

import fresh_seeds
from package_under_test import scatterptx  # noqa: F401 - puts the package under test on sys.path
from torch_devices import GPUS, NO_GPU

HAVE_TORCH = importlib.util.find_spec("torch") is not None
if HAVE_TORCH:
    import torch

    import scatterptx.torch as spt
    from scatterptx import _torch_math as torch_math

NO_TORCH = "torch is not installed"


DTYPES = ("float32", "float16", "bfloat16", "float64")


def case(device="cpu", dtype="float64", index_dtype="int64", rows=7, out_rows=5, cols=3, seed=0):
    generator = torch.Generator().manual_seed(fresh_seeds.seed(seed))
    dtype = getattr(torch, dtype)
    out = torch.randn(out_rows, cols, generator=generator, dtype=torch.float64).to(dtype).to(device)
    src = torch.randn(rows, cols, generator=generator, dtype=torch.float64).to(dtype).to(device)
    index = torch.randint(0, out_rows, (rows,), generator=generator).to(getattr(torch, index_dtype)).to(device)
    return out, index, src


def reference(out, index, src):
    return out.double().index_add(0, index.long(), src.double())


def quietly(function, *args, **kwargs):
    """function(*args, **kwargs) with the once-per-reason fallback warning silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return function(*args, **kwargs)


@unittest.skipUnless(HAVE_TORCH, NO_TORCH)
class Registration(unittest.TestCase):
    def test_the_operators_have_torch_schemas(self):
        self.assertEqual(str(torch.ops.scatterptx.index_add.default._schema),
                         "scatterptx::index_add(Tensor out, Tensor index, Tensor source) -> Tensor")
        self.assertEqual(str(torch.ops.scatterptx.index_add_.default._schema),
                         "scatterptx::index_add_(Tensor(a!) out, Tensor index, Tensor source) -> ()")
        self.assertIn(torch.Tag.pt2_compliant_tag, torch.ops.scatterptx.index_add.default.tags)

    def test_importing_scatterptx_alone_does_not_import_torch(self):
        import subprocess
        import sys

        from package_under_test import CHECKOUT_PYTHON_DIR, TESTING_INSTALLED

        path = "" if TESTING_INSTALLED else f"sys.path.insert(0, {CHECKOUT_PYTHON_DIR!r}); "
        code = f"import sys; {path}import scatterptx; print('torch' in sys.modules)"
        self.assertEqual(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                        check=True).stdout.strip(), "False")


@unittest.skipUnless(HAVE_TORCH, NO_TORCH)
class CpuFallback(unittest.TestCase):
    def test_index_add_and_index_add__match_torch(self):
        for index_dtype in ("int32", "int64"):
            out, index, src = case(index_dtype=index_dtype)
            expected = reference(out, index, src)
            self.assertTrue(torch.equal(quietly(spt.index_add, out, index, src), expected))
            copy = out.clone()
            self.assertIs(quietly(spt.index_add_, copy, index, src), copy)
            self.assertTrue(torch.equal(copy, expected))

    def test_the_functional_operator_leaves_out_alone(self):
        out, index, src = case()
        before = out.clone()
        quietly(spt.index_add, out, index, src)
        self.assertTrue(torch.equal(out, before))

    def test_fallbacks_are_counted_and_warned_about_once_per_reason(self):
        spt.reset_fallback_counts()
        out, index, src = case()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(3):
                spt.index_add_(out, index, src)
        self.assertEqual(spt.fallback_counts(), {"cpu tensors": 3})
        self.assertEqual(len([w for w in caught if "scatterptx" in str(w.message)]), 1)

    def test_a_rocm_build_of_torch_takes_torchs_op(self):
        # ROCm's torch calls AMD GPUs "cuda" and reports gfx90a as (9, 0):
        # neither the general path nor the fast one may call the library.
        from scatterptx import _torch_call

        out, index, src = case(dtype="float32")
        key = (torch.float32, torch.int64, torch.float32, 0, 0, 0)
        with mock.patch.object(_torch_call, "_device_capability", return_value=(9, 0)):
            self.assertNotEqual(_torch_call._signature_codes(*key), ())  # what CUDA's torch gets
            with mock.patch.object(_torch_call, "_ROCM", True):
                self.assertIn("ROCm", _torch_call._fallback_reason(out, index, src))
                self.assertEqual(_torch_call._signature_codes(*key), ())

    def test_a_first_call_inside_a_graph_capture_takes_torchs_op(self):
        # The library loads its kernels and allocates on a device's first
        # call, which would break a capture: that call takes torch's op (which
        # captures), and the first call outside a capture prepares the device
        # once. CUDA stood in for.
        from scatterptx import _torch_call

        prepares = []

        class Library:
            def scatterptx_prepare(self):
                prepares.append(1)
                return 0

        device = 7  # no real device: the set of prepared ones is this test's own
        with mock.patch.object(_torch_call, "_prepared_devices", set()), \
                mock.patch.object(torch._C, "_cuda_exchangeDevice", create=True, new=lambda d: 0), \
                mock.patch.object(torch._C, "_cuda_maybeExchangeDevice", create=True, new=lambda d: d), \
                mock.patch.object(_torch_call._binding, "library", new=Library):
            with mock.patch.object(torch.cuda, "is_current_stream_capturing", return_value=True):
                self.assertIn("inside a CUDA graph capture", _torch_call._first_call_reason(device))
            self.assertEqual(prepares, [])
            with mock.patch.object(torch.cuda, "is_current_stream_capturing", return_value=False):
                self.assertIsNone(_torch_call._first_call_reason(device))
                self.assertIsNone(_torch_call._first_call_reason(device))
            self.assertEqual(len(prepares), 1)
            with mock.patch.object(torch.cuda, "is_current_stream_capturing", return_value=True):
                self.assertIsNone(_torch_call._first_call_reason(device))  # prepared: captures run the library

    @staticmethod
    def library_prepares(cuda_started, **current_device):
        """The patches under which scatterptx.prepare() succeeds without a
        GPU: the library's prepare answering SUCCESS, a record of prepared
        devices of the test's own, torch's CUDA started or not, and
        current_device answering as given (return_value or side_effect)."""
        from scatterptx import _binding, _torch_call

        class Library:
            def scatterptx_prepare(self):
                return 0

        patches = contextlib.ExitStack()
        patches.enter_context(mock.patch.object(_torch_call, "_prepared_devices", set()))
        patches.enter_context(mock.patch.object(_binding, "library", new=Library))
        patches.enter_context(mock.patch.object(torch.cuda, "is_initialized", return_value=cuda_started))
        patches.enter_context(mock.patch.object(torch.cuda, "current_device", **current_device))
        return patches

    def test_prepare_makes_the_current_device_ready_for_captures(self):
        # scatterptx.prepare() before a capture, as its docstring says: the
        # operators then run the library inside the capture, not torch's op.
        from scatterptx import _torch_call

        with self.library_prepares(cuda_started=True, return_value=5), \
                mock.patch.object(torch._C, "_cuda_exchangeDevice", create=True, new=lambda d: 0), \
                mock.patch.object(torch._C, "_cuda_maybeExchangeDevice", create=True, new=lambda d: d), \
                mock.patch.object(torch.cuda, "is_current_stream_capturing", return_value=True):
            scatterptx.prepare()
            self.assertIsNone(_torch_call._first_call_reason(5))
            self.assertIn("inside a CUDA graph capture", _torch_call._first_call_reason(4) or "")

    def test_prepare_where_torch_has_not_started_cuda_readies_nothing_and_does_not_raise(self):
        # A process that imports torch but runs the library on arrays of
        # another library: torch's CUDA is neither asked nor started.
        from scatterptx import _torch_call

        with self.library_prepares(cuda_started=False, side_effect=RuntimeError("no NVIDIA driver")):
            scatterptx.prepare()
            self.assertEqual(_torch_call._prepared_devices, set())

    def test_prepare_before_the_operators_are_imported_counts_too(self):
        # A fresh process: torch imported, scatterptx.torch not yet.
        code = "\n".join([
            "import sys, torch",
            "from unittest import mock",
            "import package_under_test",
            "import scatterptx",
            "from scatterptx import _binding",
            "class Library:",
            "    def scatterptx_prepare(self): return 0",
            "assert 'scatterptx._torch_call' not in sys.modules",
            "with mock.patch.object(_binding, 'library', new=Library), \\",
            "        mock.patch.object(torch.cuda, 'is_initialized', return_value=True), \\",
            "        mock.patch.object(torch.cuda, 'current_device', return_value=3):",
            "    scatterptx.prepare()",
            "from scatterptx import _torch_call",
            "print(sorted(_torch_call._prepared_devices))",
        ])
        done = subprocess.run([sys.executable, "-c", code], cwd=os.path.dirname(os.path.abspath(__file__)),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
        self.assertEqual(done.returncode, 0, done.stdout)
        self.assertEqual(done.stdout.strip().splitlines()[-1], "[3]", done.stdout)

    def test_non_contiguous_layouts_match_torch(self):
        out, index, src = case(rows=6, out_rows=6, cols=6)
        for o, s in ((out.t(), src), (out, src.t()), (out[:, ::2], src[:, 1::2]), (out[1:4], src)):
            idx = index.clamp(max=o.shape[0] - 1)
            expected = o.index_add(0, idx, s)
            got = o.clone()
            quietly(spt.index_add_, got, idx, s)
            self.assertTrue(torch.equal(got, expected))
            self.assertTrue(torch.equal(quietly(spt.index_add, o, idx, s), expected))

    def test_invalid_input_raises_torchs_error(self):
        out, index, src = case()
        for bad_out, bad_index, bad_src in ((out, index[:-1], src), (out, index, src[:, :2]),
                                            (out, index.float(), src), (out, index, src.float())):
            with self.assertRaises((RuntimeError, IndexError)) as ours:
                quietly(spt.index_add_, bad_out.clone(), bad_index, bad_src)
            with self.assertRaises(type(ours.exception)) as torchs:
                bad_out.clone().index_add_(0, bad_index, bad_src)
            self.assertEqual(str(ours.exception), str(torchs.exception))

    def test_the_fake_implementation_raises_for_bad_shapes(self):
        # The same type and message as eager index_add_ on the CPU, where
        # aten's own meta kernel would let the input through.
        out, index, src = case()
        for what, bad in (("index length", (out, index[:-1], src)), ("columns", (out, index, src[:, :2])),
                          ("dtypes", (out, index, src.float())), ("float index", (out, index.float(), src)),
                          ("ranks", (out, index, src.unsqueeze(2))), ("2-D index", (out, index.view(-1, 1), src))):
            with self.subTest(what):
                with self.assertRaises(Exception) as eager:
                    bad[0].clone().index_add_(0, bad[1], bad[2])
                for op in (spt.index_add, spt.index_add_):
                    with self.assertRaises(type(eager.exception)) as fake:
                        op(*(t.to("meta") for t in bad))
                    self.assertEqual(str(fake.exception), str(eager.exception))
        meta = [t.to("meta") for t in (out, index, src)]
        self.assertEqual(spt.index_add(*meta).shape, out.shape)
        self.assertEqual(spt.index_add(meta[0], meta[1].int(), meta[2]).shape, out.shape)


@unittest.skipUnless(HAVE_TORCH, NO_TORCH)
class Scatter(unittest.TestCase):
    def test_sum_matches_a_reference(self):
        out, index, src = case(rows=9, out_rows=4)
        zeros = torch.zeros(int(index.max()) + 1, 3, dtype=src.dtype)
        self.assertTrue(torch.equal(quietly(spt.scatter, src, index), zeros.index_add(0, index, src)))
        self.assertTrue(torch.equal(quietly(spt.scatter, src, index, dim=-2, dim_size=6, reduce="add"),
                                    torch.zeros(6, 3, dtype=src.dtype).index_add(0, index, src)))

    def test_out_is_added_into_and_returned_and_dim_size_ignored(self):
        out, index, src = case()
        expected = out.index_add(0, index, src)
        got = quietly(spt.scatter, src, index, 0, out, dim_size=99)
        self.assertIs(got, out)
        self.assertTrue(torch.equal(out, expected))

    def test_one_dimensional_src(self):
        _, index, src = case()
        self.assertTrue(torch.equal(quietly(spt.scatter, src[:, 0], index, dim_size=5),
                                    torch.zeros(5, dtype=src.dtype).index_add(0, index, src[:, 0])))
        out = torch.ones(5, dtype=src.dtype)
        self.assertIs(quietly(spt.scatter, src[:, 0], index, out=out), out)
        self.assertTrue(torch.equal(out, torch.ones(5, dtype=src.dtype).index_add(0, index, src[:, 0])))

    def test_pyg_positional_order_is_taken(self):
        # PyG's scatter(src, index, dim, dim_size, reduce) by position; the
        # values are PyG's formulas (a result of zeros, include_self off).
        _, index, src = case(rows=9, out_rows=4)
        for reduce, name in (("sum", "sum"), ("mean", "mean"), ("max", "amax")):
            expected = torch.zeros(6, 3, dtype=src.dtype).scatter_reduce(
                0, index.view(-1, 1).expand_as(src), src, name, include_self=False)
            with self.subTest(reduce):
                self.assertTrue(torch.allclose(quietly(spt.scatter, src, index, 0, 6, reduce), expected))
                self.assertTrue(torch.allclose(quietly(spt.scatter, src, index, 0, 6, reduce=reduce), expected))
        by_max = quietly(spt.scatter, src, index, 0, None, "mean")
        self.assertEqual(by_max.shape, (int(index.max()) + 1, 3))
        for args, kwargs in (((0, 6, 7), {}), ((0, 6.0), {}), ((0, None, "mean"), {"reduce": "max"})):
            with self.subTest(args=args, kwargs=kwargs), self.assertRaises(TypeError):
                spt.scatter(src, index, *args, **kwargs)

    def test_mul_and_the_other_reductions_are_not_supported(self):
        # mean, max and min: test_torch_reduce.Scatter
        _, index, src = case()
        for reduce in ("mul", "prod", "any"):
            with self.assertRaisesRegex(NotImplementedError, "is not supported"):
                spt.scatter(src, index, reduce=reduce)
        with self.assertRaises(ValueError):
            spt.scatter(src, index, reduce="median")
        with self.assertRaises(NotImplementedError):
            spt.scatter(src, index, dim=1)

    def test_gradient_flows_to_src(self):
        _, index, src = case()
        src.requires_grad_()
        quietly(spt.scatter, src, index, dim_size=5).pow(2).sum().backward()
        expected_src = src.detach().clone().requires_grad_()
        torch.zeros(5, 3, dtype=src.dtype).index_add(0, index, expected_src).pow(2).sum().backward()
        self.assertTrue(torch.allclose(src.grad, expected_src.grad))


@unittest.skipUnless(HAVE_TORCH, NO_TORCH)
class Autograd(unittest.TestCase):
    def test_gradcheck_f64(self):
        out, index, src = case()
        out.requires_grad_()
        src.requires_grad_()
        self.assertTrue(quietly(torch.autograd.gradcheck, spt.index_add, (out, index, src)))
        self.assertTrue(quietly(torch.autograd.gradgradcheck, spt.index_add, (out, index, src)))

    def test_in_place_gradcheck_through_a_non_leaf(self):
        out, index, src = case()
        out.requires_grad_()
        src.requires_grad_()
        self.assertTrue(quietly(torch.autograd.gradcheck, lambda o, s: spt.index_add_(o * 1, index, s),
                                (out, src)))

    def test_gradients_of_other_ranks_match_torch(self):
        # What the library does not take (0-dim, 1-D, 3-D) runs torch's op;
        # its gradients are still this operator's and must be torch's.
        for out_shape, src_shape, index in (((), (), torch.tensor([0])), ((5,), (3,), torch.tensor([0, 4, 0])),
                                            ((4, 2, 3), (2, 2, 3), torch.tensor([3, 3]))):
            with self.subTest(out_shape):
                out = torch.randn(out_shape, dtype=torch.float64, requires_grad=True)
                src = torch.randn(src_shape, dtype=torch.float64, requires_grad=True)
                self.assertTrue(quietly(torch.autograd.gradcheck, lambda o, s: spt.index_add(o, index, s),
                                        (out, src)))
                got = torch.autograd.grad(quietly(spt.index_add, out, index, src).sum() * 3, (out, src))
                expected = torch.autograd.grad(torch.index_add(out, 0, index, src).sum() * 3, (out, src))
                for g, e in zip(got, expected):
                    self.assertEqual(g.shape, e.shape)
                    self.assertTrue(torch.equal(g, e))

    def test_forward_mode_and_torch_func_match_torch(self):
        from torch.autograd import forward_ad

        out, index, src = case()
        out_t, src_t = torch.randn_like(out), torch.randn_like(src)
        expected = torch.index_add(out_t, 0, index, src_t)
        got = torch.func.jvp(lambda o, s: quietly(spt.index_add, o, index, s), (out, src), (out_t, src_t))[1]
        self.assertTrue(torch.allclose(got, expected))
        with forward_ad.dual_level():
            dual = forward_ad.make_dual(out.clone(), out_t)
            quietly(spt.index_add_, dual, index, forward_ad.make_dual(src, src_t))
            self.assertTrue(torch.allclose(forward_ad.unpack_dual(dual).tangent, expected))
            only_src = quietly(spt.index_add, out, index, forward_ad.make_dual(src, src_t))
            self.assertTrue(torch.allclose(forward_ad.unpack_dual(only_src).tangent,
                                           torch.zeros_like(out).index_add(0, index, src_t)))
        self.assertTrue(quietly(torch.autograd.gradcheck, spt.index_add,
                                (out.requires_grad_(), index, src.requires_grad_()), check_forward_ad=True))
        ours = torch.func.grad(lambda s: quietly(spt.index_add, out.detach(), index, s).pow(2).sum())
        theirs = torch.func.grad(lambda s: torch.index_add(out.detach(), 0, index, s).pow(2).sum())
        self.assertTrue(torch.allclose(ours(src.detach()), theirs(src.detach())))

    def test_in_place_on_a_leaf_that_requires_grad_raises_like_torch(self):
        out, index, src = case()
        out.requires_grad_()
        with self.assertRaisesRegex(RuntimeError, "leaf Variable that requires grad"):
            quietly(spt.index_add_, out, index, src)

    def test_in_place_bumps_the_version_for_saved_tensors(self):
        out, index, src = case()
        weight = torch.ones(3, dtype=out.dtype, requires_grad=True)
        product = out * weight  # saves out for backward
        quietly(spt.index_add_, out, index, src)
        with self.assertRaisesRegex(RuntimeError, "modified by an inplace operation"):
            product.sum().backward()

    def test_a_refused_call_leaves_the_version_alone(self):
        # torch bumps out's version once its kernel has run: a refused input
        # must not make a later backward report out as modified.
        out, index, src = case()
        for what, call in (("index_add_", lambda: spt.index_add_(out, index, src[:, :2])),
                           ("scatter_reduce_", lambda: spt.scatter_reduce_(out, index, src[:, :2], "amax")),
                           ("weighted_index_add_", lambda: spt.weighted_index_add_(out, index, src[:, :2],
                                                                                   torch.ones(len(index))))):
            with self.subTest(what):
                before = out._version
                with self.assertRaises(RuntimeError):
                    quietly(call)
                self.assertEqual(out._version, before)
        before = out._version
        quietly(spt.index_add_, out, index, src)
        self.assertEqual(out._version, before + 1)

    def test_source_gradient_is_zero_for_out_of_range_rows(self):
        grad = torch.arange(12, dtype=torch.float64).reshape(4, 3)
        index = torch.tensor([3, -1, 4, 0, 100])
        got = torch_math.source_grad(grad, index, 4)
        self.assertTrue(torch.equal(got, torch.stack([grad[3], torch.zeros(3, dtype=grad.dtype),
                                                      torch.zeros(3, dtype=grad.dtype), grad[0],
                                                      torch.zeros(3, dtype=grad.dtype)])))


def opcheck_cases(device="cpu", dtype="float64", index_dtype="int64"):
    """(op, args) pairs for torch.library.opcheck: every op with and without grad."""
    out, index, src = case(device, dtype, index_dtype)
    grad_out, grad_src = out.clone().requires_grad_(), src.clone().requires_grad_()
    return [(torch.ops.scatterptx.index_add.default, (out, index, src)),
            (torch.ops.scatterptx.index_add.default, (grad_out, index, grad_src)),
            (torch.ops.scatterptx.index_add_.default, (out.clone(), index, src)),
            (torch.ops.scatterptx.index_add_.default, (out.clone(), index, grad_src))]


@unittest.skipUnless(HAVE_TORCH, NO_TORCH)
class TorchLibraryChecks(unittest.TestCase):
    def test_opcheck_cpu(self):
        for op, args in opcheck_cases():
            with self.subTest(op=str(op), grad=any(a.requires_grad for a in args)):
                quietly(torch.library.opcheck, op, args)

    def test_compile_fullgraph(self):
        out, index, src = case()

        def model(out, index, src):
            doubled = spt.index_add(out, index, src) * 2
            return spt.index_add_(doubled, index, src) + 1

        compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
        self.assertTrue(torch.equal(quietly(compiled, out, index, src), quietly(model, out, index, src)))

    def test_export_keeps_the_operators(self):
        out, index, src = case()

        class Model(torch.nn.Module):
            def forward(self, out, index, src):
                return spt.scatter(src, index, out=spt.index_add(out, index, src))

        exported = quietly(torch.export.export, Model(), (out, index, src))
        text = str(exported.graph)
        self.assertIn("scatterptx.index_add", text)
        self.assertTrue(torch.equal(quietly(exported.module(), out, index, src),
                                    out.index_add(0, index, src).index_add(0, index, src)))


@unittest.skipUnless(GPUS, NO_GPU)
class Gpu(unittest.TestCase):
    def setUp(self):
        spt.reset_fallback_counts()

    def assert_no_fallback(self):
        self.assertEqual(spt.fallback_counts(), {})

    def test_a_binding_call_on_a_device_readies_it_for_the_operators_captures(self):
        from scatterptx import _torch_call

        out = torch.rand(50, 8, device="cuda", dtype=torch.float64) - 0.5
        src = torch.rand(200, 8, device="cuda", dtype=torch.float64) - 0.5
        index = torch.randint(0, 50, (200,), device="cuda")
        expected = out.cpu().index_add(0, index.cpu(), src.cpu())
        with mock.patch.object(_torch_call, "_prepared_devices", set()):
            scatterptx.scatter_add_(out, index[:0], src[:0])  # an empty call loads nothing
            self.assertEqual(_torch_call._prepared_devices, set())
            scatterptx.scatter_add_(out, index, src)
            self.assertEqual(_torch_call._prepared_devices, {out.get_device()})
        self.assertTrue(torch.allclose(out.cpu(), expected, rtol=1e-12, atol=1e-12))

    def test_every_dtype_and_index_type_matches_torch(self):
        tolerance = {"float32": 1e-5, "float16": 1e-2, "bfloat16": 5e-2, "float64": 1e-12}
        for dtype in DTYPES:
            for index_dtype in ("int32", "int64"):
                out, index, src = case("cuda", dtype, index_dtype, rows=3000, out_rows=100, cols=40)
                expected = reference(out, index, src)
                got = spt.index_add(out, index, src)
                torch.testing.assert_close(got.double(), expected, rtol=tolerance[dtype], atol=tolerance[dtype] * 30)
                spt.index_add_(out, index, src)
                torch.testing.assert_close(out.double(), expected, rtol=tolerance[dtype], atol=tolerance[dtype] * 30)
        self.assert_no_fallback()

    def test_one_dimensional_src(self):
        # scatter runs 1-D rows as one column: the library's, not torch's op
        _, index, src = case("cuda")
        rows, exact_index = src[:, 0], index.cpu()
        out = torch.ones(5, dtype=src.dtype, device="cuda")
        self.assertIs(spt.scatter(rows, index, out=out), out)
        expected = torch.ones(5, dtype=src.dtype).index_add(0, exact_index, rows.cpu())
        torch.testing.assert_close(out.cpu(), expected, rtol=1e-12, atol=1e-12)
        expected = torch.zeros(5, dtype=src.dtype).index_add(0, exact_index, rows.cpu())
        torch.testing.assert_close(spt.scatter(rows, index, dim_size=5).cpu(), expected, rtol=1e-12, atol=1e-12)
        self.assert_no_fallback()

    def test_opcheck_cuda(self):
        for dtype in DTYPES:
            for index_dtype in ("int32", "int64"):
                for op, args in opcheck_cases("cuda", dtype, index_dtype):
                    with self.subTest(op=str(op), dtype=dtype, index_dtype=index_dtype):
                        torch.library.opcheck(op, args, atol=1e-2, rtol=1e-2)
        self.assert_no_fallback()

    def test_gradcheck_f64_cuda(self):
        for index_dtype in ("int32", "int64"):
            out, index, src = case("cuda", index_dtype=index_dtype)
            out.requires_grad_()
            src.requires_grad_()
            self.assertTrue(torch.autograd.gradcheck(spt.index_add, (out, index, src), check_forward_ad=True))
            self.assertTrue(torch.autograd.gradcheck(lambda o, s: spt.index_add_(o * 1, index, s), (out, src),
                                                     check_forward_ad=True))
        self.assert_no_fallback()

    def test_an_out_whose_rows_overlap_runs_torchs_op(self):
        # Rows that share elements (no stride of 0): torch adds into each
        # alias; the library's copy written back would keep one of them.
        base = torch.zeros(16, device="cuda", dtype=torch.float64)
        theirs = base.clone()
        index = torch.tensor([0, 5, 2, 2, 1], device="cuda")
        src = torch.arange(20, device="cuda", dtype=torch.float64).view(5, 4)
        spt.reset_fallback_counts()
        quietly(spt.index_add_, base.as_strided((6, 4), (2, 1)), index, src)
        theirs.as_strided((6, 4), (2, 1)).index_add_(0, index, src)
        self.assertTrue(torch.equal(base, theirs))
        self.assertEqual(spt.fallback_counts(), {"out's elements may share memory": 1})

    def test_a_refused_call_leaves_the_version_alone(self):
        out, index, src = case("cuda", dtype="float32")
        before = out._version
        with self.assertRaises(RuntimeError):
            quietly(spt.index_add_, out, index, src[:, :2])
        self.assertEqual(out._version, before)
        spt.index_add_(out, index, src)
        self.assertEqual(out._version, before + 1)

    def test_out_of_range_rows_are_skipped_and_get_zero_gradient(self):
        out, index, src = case("cuda")
        index[1], index[4] = -1, out.shape[0]
        src.requires_grad_()
        got = spt.index_add(out, index, src)
        keep = (index >= 0) & (index < out.shape[0])
        torch.testing.assert_close(got, out.index_add(0, index[keep], src.detach()[keep]))
        got.sum().backward()
        self.assertTrue(torch.equal(src.grad[~keep], torch.zeros_like(src.grad[~keep])))
        self.assertEqual(scatterptx.take_index_error(), 1)

    def test_compile_fullgraph_cuda(self):
        out, index, src = case("cuda", "float32", rows=500, out_rows=50, cols=16)

        def model(out, index, src):
            return spt.index_add_(spt.index_add(out, index, src) * 2, index, src)

        exact_index, exact_src = index.cpu(), src.double().cpu()
        exact = (out.double().cpu().index_add(0, exact_index, exact_src) * 2).index_add(0, exact_index, exact_src)
        expected = model(out, index, src)
        torch.testing.assert_close(expected.double().cpu(), exact, rtol=1e-5, atol=1e-4)
        for backend in ("aot_eager", "inductor"):
            compiled = torch.compile(model, fullgraph=True, backend=backend)
            got = compiled(out, index, src)
            torch.testing.assert_close(got, expected)
            torch.testing.assert_close(got.double().cpu(), exact, rtol=1e-5, atol=1e-4)
        self.assert_no_fallback()

    def test_cuda_graph_capture_and_replay(self):
        out, index, src = case("cuda", "float32", rows=500, out_rows=50, cols=16)
        start = out.clone()
        spt.index_add_(out, index, src)  # loads the kernels before capture
        torch.cuda.synchronize()
        out.copy_(start)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            spt.index_add_(out, index, src)
        for replays in range(1, 4):
            graph.replay()
            torch.cuda.synchronize()
            expected = start.double()
            for _ in range(replays):
                expected = expected.index_add(0, index, src.double())
            torch.testing.assert_close(out.double(), expected, rtol=1e-5, atol=1e-4)
        self.assert_no_fallback()

    def test_a_capture_with_no_call_before_it_captures_and_replays(self):
        # A fresh process whose first call is inside torch.cuda.graph: that
        # call takes torch's op, so the capture holds; the next call prepares
        # the device and runs the library, captures included.
        import subprocess
        import sys

        from package_under_test import CHECKOUT_PYTHON_DIR, TESTING_INSTALLED

        path = "" if TESTING_INSTALLED else f"sys.path.insert(0, {CHECKOUT_PYTHON_DIR!r}); "
        code = path + """
import warnings; warnings.simplefilter("ignore")
import torch, scatterptx.torch as spt
out = torch.zeros(50, 16, device="cuda"); index = torch.randint(0, 50, (500,), device="cuda")
src = torch.randn(500, 16, device="cuda")
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    spt.index_add_(out, index, src)
for _ in range(3):
    graph.replay()
torch.cuda.synchronize()
expected = torch.zeros(50, 16, device="cuda", dtype=torch.float64)
for _ in range(3):
    expected.index_add_(0, index, src.double())
torch.testing.assert_close(out.double(), expected, rtol=1e-5, atol=1e-4)
first = spt.fallback_counts()
spt.index_add_(out, index, src)
print(sorted(first), spt.fallback_counts() == first)
"""
        result = subprocess.run([sys.executable, "-c", "import sys; " + code], capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stderr)
        reasons, unchanged = result.stdout.strip().rsplit(" ", 1)
        self.assertIn("inside a CUDA graph capture", reasons)
        self.assertEqual(unchanged, "True")  # the call after it ran the library

    def test_deterministic_mode_is_bitwise_reproducible(self):
        out, index, src = case("cuda", "float32", rows=200_000, out_rows=64, cols=64)
        previous = torch.are_deterministic_algorithms_enabled()
        torch.use_deterministic_algorithms(True)
        try:
            first = spt.index_add(out, index, src)
            for _ in range(10):
                self.assertTrue(torch.equal(spt.index_add(out, index, src).view(torch.int32),
                                            first.view(torch.int32)))
        finally:
            torch.use_deterministic_algorithms(previous)
        torch.testing.assert_close(first.double(), reference(out, index, src), rtol=1e-4, atol=1e-3)
        self.assert_no_fallback()

    def test_non_contiguous_layouts(self):
        out, index, src = case("cuda", "float32", rows=64, out_rows=64, cols=64)
        for o, s in ((out.t(), src), (out, src.t()), (out[:, ::2], src[:, 1::2]), (out[1:40], src),
                     (out[:, :1], src[:, 5:6]), (out, src[:1].expand(64, 64))):
            idx = index.clamp(max=o.shape[0] - 1)
            expected = o.double().index_add(0, idx, s.double())
            got = o.clone()
            spt.index_add_(got, idx, s)
            torch.testing.assert_close(got.double(), expected, rtol=1e-5, atol=1e-4)
            torch.testing.assert_close(spt.index_add(o, idx, s).double(), expected, rtol=1e-5, atol=1e-4)
        self.assert_no_fallback()

    def test_mixed_devices_raise_torchs_error(self):
        out, index, src = case("cuda")
        for bad in ((out, index, src.cpu()), (out, index.cpu(), src.cpu())):
            with self.assertRaises(RuntimeError) as ours:
                quietly(spt.index_add_, bad[0].clone(), *bad[1:])
            with self.assertRaises(RuntimeError) as torchs:
                bad[0].clone().index_add_(0, *bad[1:])
            self.assertEqual(str(ours.exception), str(torchs.exception))

    def test_unsupported_dtype_falls_back_and_is_counted(self):
        out, index, src = case("cuda")
        out, src = out.to(torch.int32), src.to(torch.int32)
        expected = out.index_add(0, index, src)
        self.assertTrue(torch.equal(quietly(spt.index_add, out, index, src), expected))
        self.assertEqual(list(spt.fallback_counts().values()), [1])

    def test_the_tensors_device_is_made_current_and_its_current_stream_used(self):
        # One GPU cannot set the current device elsewhere; it can show which
        # device the op makes current and that it queues on torch's stream.
        device = GPUS[0]
        out, index, src = case(f"cuda:{device}", "float32", rows=500, out_rows=50, cols=16)
        expected = reference(out, index, src)
        spt.index_add(out, index, src)  # prepares the device: a first call makes it current once more to do so
        made_current = []
        exchange = torch._C._cuda_exchangeDevice

        def recording_exchange(index_):
            made_current.append(index_)
            return exchange(index_)

        stream = torch.cuda.Stream(device)
        torch.cuda.synchronize(device)
        with mock.patch.object(torch._C, "_cuda_exchangeDevice", recording_exchange):
            with torch.cuda.stream(stream):
                torch.cuda._sleep(100_000_000)
                late_src = src.clone()  # written only after the sleep: another stream would read it too early
                got = spt.index_add(out, index, late_src)
        stream.synchronize()
        self.assertEqual(made_current, [device])
        torch.testing.assert_close(got.double(), expected, rtol=1e-5, atol=1e-4)
        self.assert_no_fallback()

    def test_a_sorted_call_on_a_high_priority_stream_is_ordered_on_it(self):
        # A sorted f32 index of short runs streams on a side stream of the
        # library's, forked from torch's current stream (here one of high
        # priority) and joined back: work queued next on it sees the sum.
        out, index, src = case("cuda", "float32", rows=400_000, out_rows=100_000, cols=128)
        index = index.sort().values
        expected = reference(out, index, src)
        stream = torch.cuda.Stream(priority=-1)
        torch.cuda.synchronize()
        with torch.cuda.stream(stream):
            torch.cuda._sleep(100_000_000)
            late_src = src.clone()  # written only after the sleep: a fork that did not wait would read it early
            got = spt.index_add(out, index, late_src)
            seen_next = got.clone()
        stream.synchronize()
        torch.testing.assert_close(seen_next.double(), expected, rtol=1e-5, atol=1e-4)
        self.assert_no_fallback()

    @unittest.skipUnless(len(GPUS) >= 2, "needs two sm_90+ GPUs")
    def test_a_tensor_runs_on_its_own_device_and_stream(self):
        out, index, src = case(f"cuda:{GPUS[0]}", "float32", rows=500, out_rows=50, cols=16)
        expected = reference(out, index, src)
        stream = torch.cuda.Stream(GPUS[0])
        torch.cuda.synchronize(GPUS[0])
        with torch.cuda.stream(stream):  # torch's current stream of GPUS[0] from here
            torch.cuda._sleep(100_000_000)
            late_src = src.clone()  # written only after the sleep: read on another stream, it is not there yet
            with torch.cuda.device(GPUS[1]):
                got = spt.index_add(out, index, late_src)
                self.assertEqual(torch.cuda.current_device(), GPUS[1])
        stream.synchronize()
        torch.testing.assert_close(got.double(), expected, rtol=1e-5, atol=1e-4)
        self.assert_no_fallback()

    @unittest.skipUnless(len(GPUS) >= 2, "needs two sm_90+ GPUs")
    def test_the_reduces_weights_and_the_switch_run_on_the_tensors_device(self):
        out, index, src = case(f"cuda:{GPUS[1]}", "float32", rows=4000, out_rows=300, cols=64)
        weights = torch.rand(src.shape[0], device=src.device) + 0.5
        exact = out.double()
        expected_max = exact.scatter_reduce(0, index.view(-1, 1).expand_as(src), src.double(), "amax")
        expected_weighted = exact.index_add(0, index, src.double() * weights.double()[:, None])
        with torch.cuda.device(GPUS[0]):
            got_max = spt.scatter_reduce(out, index, src, "amax")
            got_weighted = spt.weighted_index_add(out, index, src, weights)
            with spt.enable():
                got_switched = out.clone().index_add_(0, index, src)
            self.assertEqual(torch.cuda.current_device(), GPUS[0])
        torch.testing.assert_close(got_max.double(), expected_max, rtol=0, atol=0)
        torch.testing.assert_close(got_weighted.double(), expected_weighted, rtol=1e-5, atol=1e-4)
        torch.testing.assert_close(got_switched.double(), reference(out, index, src), rtol=1e-5, atol=1e-4)
        self.assert_no_fallback()

    @unittest.skipUnless(len(GPUS) >= 2, "needs two sm_90+ GPUs")
    def test_calls_on_two_devices_from_two_threads_at_once(self):
        import threading
        results, failures = {}, []

        def run(device):
            try:
                torch.cuda.set_device(device)
                out, index, src = case(f"cuda:{device}", "float32", rows=200_000, out_rows=40_000, cols=128,
                                       seed=device)
                got = out
                for _ in range(5):
                    got = spt.index_add(got, index, src)
                expected = out.double().index_add(0, index, 5 * src.double())
                torch.cuda.synchronize(device)
                results[device] = (got.double() - expected).abs().max().item() / expected.abs().max().item()
            except Exception as error:  # reported by the main thread
                failures.append(f"cuda:{device}: {error!r}")

        threads = [threading.Thread(target=run, args=(device,)) for device in GPUS[:2]]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual(failures, [])
        for device in GPUS[:2]:
            self.assertLess(results[device], 1e-5, f"cuda:{device}")
        self.assert_no_fallback()


if __name__ == "__main__":
    unittest.main()
