"""Tests of the drop-in switch, scatterptx.torch.enable() (scatterptx/dropin.py).

Without torch every case skips. The CPU cases test the switch itself (the
CUDA dispatch tables while it is on, and exactly as before once it is off;
CPU calls never reaching it) and, through a router registered for the CPU
dispatch key with a stand-in for the library (a one-hot matmul) and the
capability check answering 9.0, the same routing kernels that enable()
registers for CUDA: which calls are routed and which are left to torch (the
counters), results, autograd, PyG and torch.compile. The GPU cases need an
sm_90+ GPU and run the real switch against float64 references; the PyG cases
also need torch_geometric.
"""

import contextlib
import importlib.util
import unittest
from unittest import mock

import fresh_seeds
from package_under_test import scatterptx  # noqa: F401 - puts the package under test on sys.path
from torch_devices import GPUS, NO_GPU

HAVE_TORCH = importlib.util.find_spec("torch") is not None
HAVE_PYG = HAVE_TORCH and importlib.util.find_spec("torch_geometric") is not None
if HAVE_TORCH:
    import torch
    import torch.nn.functional as F

    import scatterptx.torch as spt
    from scatterptx import _torch_call as torch_call
    from scatterptx import dropin
    from reduce_reference import (UNIT_ROUNDOFF, assert_matches_float64, assert_same_bits_with_nans,
                                  assert_within_bound, float64_reference, rounding_bound)

NO_TORCH = "torch is not installed"
NO_PYG = "torch_geometric is not installed"
OPS = ("index_add_", "index_add", "scatter_add_", "scatter_add", "scatter_reduce_.two", "scatter_reduce.two",
       "_index_put_impl_")


def cuda_tables():
    return {op: [line for line in torch._C._dispatch_dump_table(f"aten::{op}").splitlines()
                 if line.startswith("CUDA:")] for op in OPS}


def integers(*shape, dtype=None, device="cpu", seed=0, high=8):
    """Small integer values (float64 by default): every sum is exact in any
    order, so results compare bitwise."""
    generator = torch.Generator().manual_seed(fresh_seeds.seed(seed))
    return torch.randint(-high, high, shape, generator=generator).to(dtype or torch.float64).to(device)


def indices(n, rows, device="cpu", seed=1, dtype=None):
    generator = torch.Generator().manual_seed(fresh_seeds.seed(seed))
    index = torch.randint(0, rows, (n,), generator=generator)
    return index.to(dtype or torch.int64).to(device)


def routed(op):
    return dropin.route_counts().get(op, {}).get(dropin.ROUTED, 0)


def left(op):
    """{reason: calls} of the calls of op left to torch."""
    return {reason: calls for reason, calls in dropin.route_counts().get(op, {}).items() if reason != dropin.ROUTED}


def as_torch(function, *args):
    """function(*args) with the switch off: torch's own kernels."""
    with dropin.disable():
        return function(*args)


@contextlib.contextmanager
def cpu_routing(capability=(9, 0)):
    """The switch's kernels for the CPU dispatch key, with a stand-in for the
    library; yields the list of the stand-in's launches, each (out's shape,
    index's, src's) and, for scatter_reduce's other forms, (reduce, include_self)."""
    launches = []

    def stand_in(out_rows, index, src_rows):
        launches.append((tuple(out_rows.shape), tuple(index.shape), tuple(src_rows.shape)))
        out_rows.addmm_(F.one_hot(index.long(), out_rows.shape[0]).T.to(out_rows.dtype), src_rows)

    def reduce_stand_in(out_rows, index, src_rows, reduce, include_self):
        # by ops the switch does not route (torch's CPU index_reduce_ means through index_add_)
        launches.append((tuple(out_rows.shape), tuple(index.shape), tuple(src_rows.shape), reduce, include_self))
        if reduce in ("amax", "amin"):
            out_rows.index_reduce_(0, index.long(), src_rows, reduce, include_self=include_self)
            return
        one_hot = F.one_hot(index.long(), out_rows.shape[0]).T.to(out_rows.dtype)
        reached = (one_hot.sum(1) > 0).unsqueeze(1)
        total = one_hot @ src_rows + (out_rows if include_self else 0)
        if reduce == "mean":
            total = total / (one_hot.sum(1, keepdim=True) + (1 if include_self else 0)).clamp(min=1)
        out_rows.copy_(torch.where(reached, total, out_rows))

    router = dropin._Router("CPU", stand_in, torch_call._fallback_reason, reduce_stand_in,
                            torch_call._reduce_fallback_reason)
    dropin.reset_route_counts()
    with mock.patch.object(torch_call, "_device_capability", return_value=capability), \
            mock.patch.object(torch_call, "_first_call_reason", return_value=None):  # no context to prepare
        previous = dropin._install(router)
        try:
            yield launches
        finally:
            dropin._install(previous)


@unittest.skipUnless(HAVE_TORCH, NO_TORCH)
class Switch(unittest.TestCase):
    def tearDown(self):
        spt.disable()

    def test_enable_registers_cuda_kernels_and_disable_restores_torchs_exactly(self):
        before = cuda_tables()
        self.assertFalse(spt.enabled())
        spt.enable()
        self.assertTrue(spt.enabled())
        during = cuda_tables()
        for op in OPS:
            self.assertIn("dropin.py", during[op][0], op)
            self.assertNotEqual(during[op], before[op])
        spt.disable()
        self.assertFalse(spt.enabled())
        self.assertEqual(cuda_tables(), before)

    def test_with_blocks_put_the_previous_state_back(self):
        before = cuda_tables()
        with spt.enable():
            self.assertTrue(spt.enabled())
            with spt.disable():
                self.assertFalse(spt.enabled())
                self.assertEqual(cuda_tables(), before)
            self.assertTrue(spt.enabled())
            with spt.enable():
                self.assertTrue(spt.enabled())
            self.assertTrue(spt.enabled())
        self.assertFalse(spt.enabled())
        self.assertEqual(cuda_tables(), before)

    def test_enabling_twice_is_enabling_once(self):
        before = cuda_tables()
        spt.enable()
        spt.enable()
        spt.disable()
        self.assertEqual(cuda_tables(), before)
        spt.disable()
        self.assertEqual(cuda_tables(), before)

    def test_cpu_calls_never_reach_the_switch(self):
        dropin.reset_route_counts()
        out, src, index = integers(6, 3), integers(5, 3, seed=2), indices(5, 6)
        expected = out.index_add(0, index, src)
        with spt.enable():
            self.assertTrue(torch.equal(out.clone().index_add_(0, index, src), expected))
            self.assertTrue(torch.equal(out.clone().scatter_add_(0, index.view(-1, 1).expand(5, 3), src),
                                        expected))
            self.assertTrue(torch.equal(out.clone().index_put_((index,), src, accumulate=True), expected))
            x = out.clone().requires_grad_()
            x.index_select(0, index).sum().backward()
        self.assertEqual(dropin.route_counts(), {})


@unittest.skipUnless(HAVE_TORCH, NO_TORCH)
class Routing(unittest.TestCase):
    """Which calls the kernels route, on CPU tensors through cpu_routing()."""

    def test_index_add_along_dim_0_is_routed(self):
        with cpu_routing() as launches:
            for index_dtype in (torch.int32, torch.int64):
                out, src, index = integers(6, 3), integers(9, 3, seed=2), indices(9, 6, dtype=index_dtype)
                expected = as_torch(torch.index_add, out, 0, index, src)
                self.assertTrue(torch.equal(out.clone().index_add_(0, index, src), expected))
                self.assertTrue(torch.equal(out.clone().index_add_(-2, index, src, alpha=1), expected))
                before = out.clone()
                self.assertTrue(torch.equal(torch.index_add(out, 0, index, src), expected))
                self.assertTrue(torch.equal(out, before))  # the functional operator leaves out alone
            # rows of several dimensions
            out, src, index = integers(6, 2, 3), integers(9, 2, 3, seed=2), indices(9, 6)
            self.assertTrue(torch.equal(out.clone().index_add_(0, index, src),
                                        as_torch(torch.index_add, out, 0, index, src)))
            # a transposed out: the functional result is contiguous, as torch's is
            out, src, index = integers(6, 6).t(), integers(9, 6, seed=2), indices(9, 6)
            got, expected = torch.index_add(out, 0, index, src), as_torch(torch.index_add, out, 0, index, src)
            self.assertTrue(torch.equal(got, expected))
            self.assertEqual(got.stride(), expected.stride())
        self.assertEqual(routed("aten::index_add_"), 5)
        self.assertEqual(routed("aten::index_add"), 3)
        self.assertEqual(left("aten::index_add_"), {})
        self.assertEqual(launches[-1], ((6, 6), (9,), (9, 6)))
        self.assertEqual(launches[-2], ((6, 6), (9,), (9, 6)))

    def test_index_add_outside_the_pattern_is_left_to_torch(self):
        out, src, index = integers(6, 4), integers(9, 4, seed=2), indices(9, 4)
        cases = {
            "dim is not 0": lambda: out.clone().index_add_(1, index[:4], integers(6, 4, seed=3)),
            "alpha is not 1": lambda: out.clone().index_add_(0, index, src, alpha=2),
            "out has fewer than 2 dimensions": lambda: out[:, 0].clone().index_add_(0, index, src[:, 0]),
            "dtype torch.int32": lambda: out.int().index_add_(0, index, src.int()),
            "do not flatten": lambda: integers(4, 5, 3).transpose(1, 2).index_add_(0, index[:2], integers(2, 3, 5)),
            "empty": lambda: out.clone().index_add_(0, index[:0], src[:0]),
            "shares memory": lambda: (lambda o: o.index_add_(0, index[:2], o[4:]))(out.clone()),
            "overlaps itself": lambda: integers(1, 4).expand(6, 4).index_add_(0, index, src),
            # rows that overlap without a stride of 0: torch adds into each alias
            "may share memory": lambda: integers(16).as_strided((6, 4), (2, 1)).index_add_(0, index, src),
        }
        for reason, call in cases.items():
            with self.subTest(reason=reason):
                with cpu_routing() as launches:
                    try:
                        got = call()
                    except RuntimeError as error:
                        with self.assertRaises(RuntimeError) as torchs:
                            as_torch(call)
                        self.assertEqual(str(error), str(torchs.exception))
                    else:
                        self.assertTrue(torch.equal(got, as_torch(call)))
                    self.assertEqual(routed("aten::index_add_"), 0)
                    self.assertEqual(launches, [])
                    self.assertTrue(any(reason in why for why in left("aten::index_add_")), left("aten::index_add_"))

    def test_scatter_add_with_the_expanded_index_is_routed(self):
        out, src, index = integers(6, 3), integers(9, 3, seed=2), indices(9, 6)
        expanded = index.view(-1, 1).expand_as(src)  # what PyG's scatter builds
        with cpu_routing():
            expected = as_torch(torch.index_add, out, 0, index, src)
            self.assertTrue(torch.equal(out.clone().scatter_add_(0, expanded, src), expected))
            self.assertTrue(torch.equal(torch.scatter_add(out, 0, expanded, src), expected))
            self.assertTrue(torch.equal(out.clone().scatter_reduce_(0, expanded, src, "sum"), expected))
            self.assertTrue(torch.equal(torch.scatter_reduce(out, 0, expanded, src, "sum"), expected))
            # an index shorter than src reads its first rows only
            self.assertTrue(torch.equal(out.clone().scatter_add_(0, expanded[:5], src),
                                        as_torch(torch.index_add, out, 0, index[:5], src[:5])))
            # three dimensions, index expanded over both trailing ones (PyG's GAT heads)
            src3 = integers(9, 2, 3, seed=4)
            out3 = integers(6, 2, 3)
            self.assertTrue(torch.equal(out3.clone().scatter_add_(0, index.view(-1, 1, 1).expand_as(src3), src3),
                                        as_torch(torch.index_add, out3, 0, index, src3)))
        self.assertEqual(routed("aten::scatter_add_"), 3)
        self.assertEqual(routed("aten::scatter_add"), 1)
        self.assertEqual(routed("aten::scatter_reduce_"), 1)
        self.assertEqual(routed("aten::scatter_reduce"), 1)
        for op in ("aten::scatter_add_", "aten::scatter_add", "aten::scatter_reduce_", "aten::scatter_reduce"):
            self.assertEqual(left(op), {})

    def test_scatter_outside_the_pattern_is_left_to_torch(self):
        out, src, index = integers(6, 3), integers(9, 3, seed=2), indices(9, 6)
        expanded = index.view(-1, 1).expand_as(src)
        cases = {
            "not expanded": ("aten::scatter_add_", lambda: out.clone().scatter_add_(0, expanded.contiguous(), src)),
            "dim is not 0": ("aten::scatter_add_",
                             lambda: out.clone().scatter_add_(1, indices(18, 3).view(6, 3), integers(6, 3))),
            "fewer than 2": ("aten::scatter_add_", lambda: out[:, 0].clone().scatter_add_(0, index, src[:, 0])),
            "does not span": ("aten::scatter_add_", lambda: out.clone().scatter_add_(0, expanded[:, :2], src)),
            "index dtype torch.int32": ("aten::scatter_add_",
                                        lambda: out.clone().scatter_add_(0, expanded.int(), src)),
            "reduce='prod'": ("aten::scatter_reduce_",
                              lambda: out.clone().scatter_reduce_(0, expanded, src, "prod")),
            "not expanded past dim 0": ("aten::scatter_reduce",
                                        lambda: torch.scatter_reduce(out, 0, expanded.contiguous(), src, "mean")),
        }
        for reason, (op, call) in cases.items():
            with self.subTest(reason=reason):
                with cpu_routing() as launches:
                    try:
                        got = call()
                    except RuntimeError as error:
                        with self.assertRaises(RuntimeError) as torchs:
                            as_torch(call)
                        self.assertEqual(str(error), str(torchs.exception))
                    else:
                        self.assertTrue(torch.equal(got, as_torch(call)))
                    self.assertEqual(launches, [])
                    self.assertEqual(routed(op), 0)
                    self.assertTrue(any(reason in why for why in left(op)), left(op))

    def test_scatter_reduce_with_the_expanded_index_is_routed_for_every_reduce(self):
        out, src, index = integers(6, 3), integers(9, 3, seed=2), indices(9, 5)  # row 5: no row reaches it
        expanded = index.view(-1, 1).expand_as(src)
        calls = 0
        with cpu_routing() as launches:
            for reduce in ("sum", "mean", "amax", "amin"):
                for include_self in (True, False):
                    with self.subTest(reduce=reduce, include_self=include_self):
                        expected = as_torch(lambda: torch.scatter_reduce(out, 0, expanded, src, reduce,
                                                                         include_self=include_self))
                        self.assertTrue(torch.equal(torch.scatter_reduce(out, 0, expanded, src, reduce,
                                                                         include_self=include_self), expected))
                        self.assertTrue(torch.equal(out.clone().scatter_reduce_(0, expanded, src, reduce,
                                                                                include_self=include_self), expected))
                        calls += 1
                        plain = reduce == "sum" and include_self
                        self.assertEqual(launches[-1],
                                         ((6, 3), (9,), (9, 3)) + (() if plain else (reduce, include_self)))
            # rows of several dimensions, and the gradient of a routed amax: torch's formula on the routed result
            out3, src3 = integers(6, 2, 3), integers(9, 2, 3, seed=4)
            full = index.view(-1, 1, 1).expand_as(src3)
            self.assertTrue(torch.equal(out3.clone().scatter_reduce_(0, full, src3, "amin", include_self=False),
                                        as_torch(lambda: out3.clone().scatter_reduce_(0, full, src3, "amin",
                                                                                      include_self=False))))
            self.assertEqual(launches[-1], ((6, 6), (9,), (9, 6), "amin", False))

            def gradients():
                leaves = [out.clone().requires_grad_(), src.clone().requires_grad_()]
                result = torch.scatter_reduce(leaves[0], 0, expanded, leaves[1], "amax", include_self=False)
                result.pow(2).sum().backward()
                return [leaf.grad for leaf in leaves]

            for a, b in zip(gradients(), as_torch(gradients)):
                self.assertTrue(torch.equal(a, b))
        self.assertEqual(routed("aten::scatter_reduce"), calls + 1)
        self.assertEqual(routed("aten::scatter_reduce_"), calls + 1)
        self.assertEqual(left("aten::scatter_reduce"), {})
        self.assertEqual(left("aten::scatter_reduce_"), {})

    def test_scatter_reduce_the_library_cannot_take_is_left_to_torch_with_its_reason(self):
        out, src, index = integers(6, 3), integers(9, 3, seed=2), indices(9, 6)
        expanded = index.view(-1, 1).expand_as(src)
        cases = {
            "dtype torch.int32": lambda: out.int().scatter_reduce_(0, expanded, src.int(), "amax"),
            "compute capability 8.0": lambda: out.clone().scatter_reduce_(0, expanded, src, "mean"),
            "index dtype torch.int32": lambda: out.clone().scatter_reduce_(0, expanded.int(), src, "amin"),
            "empty tensors": lambda: out.clone().scatter_reduce_(0, expanded[:0], src[:0], "mean"),
        }
        for reason, call in cases.items():
            with self.subTest(reason=reason):
                capability = (8, 0) if "8.0" in reason else (9, 0)
                with cpu_routing(capability) as launches:
                    try:
                        got = call()
                    except RuntimeError as error:
                        with self.assertRaises(RuntimeError) as torchs:
                            as_torch(call)
                        self.assertEqual(str(error), str(torchs.exception))
                    else:
                        self.assertTrue(torch.equal(got, as_torch(call)))
                    self.assertEqual(launches, [])
                    self.assertEqual(routed("aten::scatter_reduce_"), 0)
                    self.assertTrue(any(reason in why for why in left("aten::scatter_reduce_")),
                                    left("aten::scatter_reduce_"))

    def test_index_put_accumulate_is_routed_with_torchs_negative_indices(self):
        out, src = integers(6, 3), integers(9, 3, seed=2)
        index = indices(9, 6) - 3  # -3..2: negative rows count from the end
        with cpu_routing():
            for i in (index, index.int()):
                self.assertTrue(torch.equal(out.clone().index_put_((i,), src, accumulate=True),
                                            as_torch(lambda: out.clone().index_put_((i,), src, accumulate=True))))
            # an index of two dimensions, and the leading None of x[None, index]
            self.assertTrue(torch.equal(out.clone().index_put_((index.view(3, 3),), src.view(3, 3, 3),
                                                               accumulate=True),
                                        as_torch(lambda: out.clone().index_put_((index,), src, accumulate=True))))
            unsqueezed = out.clone().unsqueeze(0)  # (Tensor.index_put_ takes no None: the aten op does)
            torch.ops.aten.index_put_(unsqueezed, [None, index], src.unsqueeze(0), True)
            self.assertTrue(torch.equal(unsqueezed[0],
                                        as_torch(lambda: out.clone().index_put_((index,), src, accumulate=True))))
        self.assertEqual(routed("aten::_index_put_impl_"), 4)
        self.assertEqual(left("aten::_index_put_impl_"), {})

    def test_negative_int32_indices_wrap_into_out_of_2_to_31_rows_or_more(self):
        # Such an out does not fit here: its rows stand in; the wrap must not
        # overflow int32 (torch takes an int32 index on any out).
        rows = 2**31 + 5

        class TallRows:
            shape = (rows, 3)

        router = dropin._Router("CPU", None, lambda *operands: None, None, None)
        index = torch.tensor([-1, 0, -(2**31), 7], dtype=torch.int32)
        _, wrapped, _ = router._route("aten::_index_put_impl_", (TallRows(), index, integers(4, 3), True))
        self.assertEqual(wrapped.tolist(), [rows - 1, 0, rows - 2**31, 7])
        small = dropin._Router("CPU", None, lambda *operands: None, None, None)
        _, wrapped, _ = small._route("aten::_index_put_impl_", (integers(6, 3), index[:2], integers(2, 3), True))
        self.assertEqual((wrapped.dtype, wrapped.tolist()), (torch.int32, [5, 0]))

    def test_index_put_outside_the_pattern_is_left_to_torch(self):
        out, src, index = integers(6, 3), integers(9, 3, seed=2), indices(9, 6)
        cases = {
            "accumulate=False": lambda: out.clone().index_put_((index,), src),
            "index dtype torch.bool": lambda: out.clone().index_put_((index[:6] > 2,), torch.ones(3, dtype=out.dtype),
                                                                     accumulate=True),
            "not one index tensor": lambda: out.clone().index_put_((index, index % 3), src[:, 0], accumulate=True),
            "values broadcast": lambda: out.clone().index_put_((index,), src[0], accumulate=True),
            "on out's last dimension": lambda: torch.ops.aten.index_put_(out.clone(), [None, index % 3],
                                                                         integers(6, 9), True),
            "not on out's first": lambda: torch.ops.aten.index_put_(integers(6, 3, 2), [None, index % 3],
                                                                    integers(6, 9, 2), True),
        }
        for reason, call in cases.items():
            with self.subTest(reason=reason):
                with cpu_routing() as launches:
                    try:
                        got = call()
                    except (RuntimeError, IndexError) as error:
                        with self.assertRaises(type(error)) as torchs:
                            as_torch(call)
                        self.assertEqual(str(error), str(torchs.exception))
                    else:
                        self.assertTrue(torch.equal(got, as_torch(call)))
                    self.assertEqual(launches, [])
                    self.assertEqual(routed("aten::_index_put_impl_"), 0)
                    self.assertTrue(any(reason in why for why in left("aten::_index_put_impl_")),
                                    left("aten::_index_put_impl_"))

    def test_a_gpu_below_sm90_is_left_to_torch(self):
        out, src, index = integers(6, 3), integers(9, 3, seed=2), indices(9, 6)
        with cpu_routing(capability=(8, 0)) as launches:
            self.assertTrue(torch.equal(out.clone().index_add_(0, index, src),
                                        as_torch(torch.index_add, out, 0, index, src)))
        self.assertEqual(launches, [])
        self.assertEqual(list(left("aten::index_add_")), ["compute capability 8.0 (the library needs 9.0 or newer)"])

    def test_invalid_input_raises_torchs_error(self):
        out, src, index = integers(6, 3), integers(9, 3, seed=2), indices(9, 6)
        for call in (lambda: out.clone().index_add_(0, index[:-1], src),
                     lambda: out.clone().index_add_(0, index, src.float()),
                     lambda: out.clone().scatter_add_(0, index.view(-1, 1).expand(9, 3), src[:4]),
                     lambda: out.clone().index_put_((index,), src[:4], accumulate=True)):
            with cpu_routing():
                with self.assertRaises(RuntimeError) as ours:
                    call()
            with self.assertRaises(RuntimeError) as torchs:
                call()
            self.assertEqual(str(ours.exception), str(torchs.exception))


def gather_scatter_model(x, weight, source, target, rows):
    """Message passing in plain torch: gather rows by index_select and x[index], add them up by index_add."""
    messages = x.index_select(0, source) * weight + x[target]
    return torch.zeros(rows, x.shape[1], dtype=x.dtype).index_add(0, target, messages).pow(2).sum()


@unittest.skipUnless(HAVE_TORCH, NO_TORCH)
class Autograd(unittest.TestCase):
    def test_the_gradients_calls_are_routed_and_equal_torchs(self):
        x, weight = integers(6, 3), integers(3, seed=5)
        source, target = indices(20, 6, seed=3), indices(20, 6, seed=4)

        def gradients():
            leaves = [x.clone().requires_grad_(), weight.clone().requires_grad_()]
            loss = gather_scatter_model(*leaves, source, target, 6)
            return [loss] + list(torch.autograd.grad(loss, leaves))

        expected = gradients()
        with cpu_routing():
            got = gradients()
        for a, b in zip(got, expected):
            self.assertTrue(torch.equal(a, b))
        # forward: index_add; backward: index_select's gradient (index_add_) and x[target]'s (_index_put_impl_)
        self.assertEqual(routed("aten::index_add"), 1)
        self.assertEqual(routed("aten::index_add_"), 1)
        self.assertEqual(routed("aten::_index_put_impl_"), 1)

    def test_gradcheck_through_the_routed_operators(self):
        x, src, index = integers(6, 3), integers(9, 3, seed=2), indices(9, 6)
        x.requires_grad_()
        src.requires_grad_()
        expanded = index.view(-1, 1).expand(9, 3)
        with cpu_routing():
            self.assertTrue(torch.autograd.gradcheck(lambda o, s: torch.index_add(o, 0, index, s), (x, src)))
            self.assertTrue(torch.autograd.gradcheck(lambda o, s: torch.scatter_add(o, 0, expanded, s), (x, src)))
            self.assertTrue(torch.autograd.gradgradcheck(lambda o, s: torch.index_add(o, 0, index, s), (x, src)))
        self.assertGreater(routed("aten::index_add"), 0)
        self.assertGreater(routed("aten::scatter_add"), 0)


@unittest.skipUnless(HAVE_PYG, NO_PYG)
class PygOnCpu(unittest.TestCase):
    def test_utils_scatter_sum_and_mean(self):
        from torch_geometric.utils import scatter

        src, index = integers(30, 4, seed=2), indices(30, 7)
        for reduce in ("sum", "mean"):
            with self.subTest(reduce=reduce):
                with cpu_routing():
                    got = scatter(src, index, 0, dim_size=7, reduce=reduce)
                self.assertTrue(torch.equal(got, as_torch(scatter, src, index, 0, 7, reduce)))
                self.assertEqual(routed("aten::scatter_add_"), 1)
                if reduce == "mean":  # the count of each target: a 1-D scatter, left to torch
                    self.assertEqual(left("aten::scatter_add_"), {"out has fewer than 2 dimensions": 1})

    def test_message_passing_sum_and_mean(self):
        from torch_geometric.nn import SAGEConv, SimpleConv

        x = integers(7, 4, seed=2)
        edge_index = torch.stack([indices(40, 7, seed=3), indices(40, 7, seed=4)])
        torch.manual_seed(fresh_seeds.seed(0))
        layers = [SimpleConv(aggr="sum"), SimpleConv(aggr="mean"), SAGEConv(4, 5, aggr="mean").double(),
                  SAGEConv(4, 5, aggr="sum").double()]
        for layer in layers:
            with self.subTest(layer=str(layer)):
                def run():
                    leaf = x.clone().requires_grad_()
                    out = layer(leaf, edge_index)
                    out.pow(2).sum().backward()
                    return out.detach(), leaf.grad

                expected = as_torch(run)
                with cpu_routing():
                    got = run()
                for a, b in zip(got, expected):
                    torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
                self.assertEqual(routed("aten::scatter_add_"), 1)   # the aggregation
                self.assertEqual(routed("aten::index_add_"), 1)     # the gradient of the gather of x_j

    def test_compiled_graphsage_runs_without_graph_breaks_and_matches_eager(self):
        from torch_geometric.nn import GraphSAGE

        x, edge_index, y = small_graph(device="cpu")
        torch.manual_seed(fresh_seeds.seed(0))
        model = GraphSAGE(32, 64, num_layers=2, out_channels=7)

        def loss_of(model, x, edge_index, y):
            return F.cross_entropy(model(x, edge_index), y)

        def step(loss_function):
            model.zero_grad()
            loss = loss_function(model, x, edge_index, y)
            loss.backward()
            return [loss.detach()] + [p.grad.clone() for p in model.parameters()]

        with cpu_routing():
            eager = step(loss_of)
            for backend in ("aot_eager", "inductor"):
                with self.subTest(backend=backend):
                    torch._dynamo.reset()
                    dropin.reset_route_counts()
                    compiled = step(torch.compile(loss_of, fullgraph=True, backend=backend))
                    for a, b in zip(compiled, eager):
                        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
                    if backend == "aot_eager":  # the graphs' aten scatters reach the kernels
                        self.assertGreater(routed("aten::scatter_add"), 0, dropin.route_counts())


@unittest.skipUnless(HAVE_TORCH, NO_TORCH)
class CompileOnCpu(unittest.TestCase):
    def setUp(self):
        torch._dynamo.reset()

    def step(self, x, weight, source, target):
        leaves = [x.clone().requires_grad_(), weight.clone().requires_grad_()]
        loss = gather_scatter_model(*leaves, source, target, 6)
        loss.backward()
        return loss.detach(), leaves[0].grad, leaves[1].grad

    def inputs(self):
        return integers(6, 3), integers(3, seed=5), indices(20, 6, seed=3), indices(20, 6, seed=4)

    def test_aot_eager_graphs_call_the_routed_aten_kernels(self):
        args = self.inputs()
        expected = self.step(*args)
        compiled = torch.compile(gather_scatter_model, fullgraph=True, backend="aot_eager")
        with cpu_routing():
            leaves = [args[0].clone().requires_grad_(), args[1].clone().requires_grad_()]
            loss = compiled(*leaves, args[2], args[3], 6)
            loss.backward()
        for a, b in zip((loss.detach(), leaves[0].grad, leaves[1].grad), expected):
            self.assertTrue(torch.equal(a, b))
        self.assertGreater(routed("aten::index_add"), 0)
        self.assertGreater(routed("aten::index_add_") + routed("aten::_index_put_impl_"), 0)

    def test_inductor_compiles_without_graph_breaks_and_matches_eager(self):
        args = self.inputs()
        expected = self.step(*args)
        compiled = torch.compile(gather_scatter_model, fullgraph=True)  # inductor: its own scatter code
        with cpu_routing():
            leaves = [args[0].clone().requires_grad_(), args[1].clone().requires_grad_()]
            loss = compiled(*leaves, args[2], args[3], 6)
            loss.backward()
        for a, b in zip((loss.detach(), leaves[0].grad, leaves[1].grad), expected):
            torch.testing.assert_close(a, b)


# ---------------------------------------------------------------------------
# GPU: the real switch

TOLERANCE = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2, torch.float64: 1e-12} \
    if HAVE_TORCH else {}


def assert_close_to_float64(test, got, reference, dtype):
    """got within dtype's rounding of a float64 reference, scaled by the reference's magnitude."""
    scale = reference.abs().max().clamp(min=1)
    error = (got.double() - reference).abs().max() / scale
    test.assertLessEqual(float(error), TOLERANCE[dtype] * 4, f"{dtype}: relative error {float(error):.3g}")


@unittest.skipUnless(GPUS, NO_GPU)
class Gpu(unittest.TestCase):
    def setUp(self):
        dropin.reset_route_counts()
        spt.reset_fallback_counts()
        spt.enable()

    def tearDown(self):
        spt.disable()

    def test_plain_calls_match_float64_and_are_routed(self):
        generator = torch.Generator().manual_seed(fresh_seeds.seed(7))
        for dtype in TOLERANCE:
            out = torch.randn(500, 64, dtype=torch.float64, generator=generator).to("cuda")
            src = torch.randn(3000, 64, dtype=torch.float64, generator=generator).to("cuda")
            index = torch.randint(0, 500, (3000,), generator=generator).to("cuda")
            o, s = out.to(dtype), src.to(dtype)
            expanded = index.view(-1, 1).expand_as(s)
            for got in (o.clone().index_add_(0, index, s), torch.index_add(o, 0, index, s),
                        o.clone().scatter_add_(0, expanded, s), torch.scatter_add(o, 0, expanded, s),
                        o.clone().scatter_reduce_(0, expanded, s, "sum"),
                        o.clone().index_put_((index,), s, accumulate=True)):
                assert_matches_float64(self, got, o, index, s, "sum", what=str(dtype))
        counts = dropin.route_counts()
        for op in ("aten::index_add_", "aten::index_add", "aten::scatter_add_", "aten::scatter_add",
                   "aten::scatter_reduce_", "aten::_index_put_impl_"):
            self.assertEqual(set(counts[op]), {dropin.ROUTED}, op)
        self.assertEqual(spt.fallback_counts(), {})

    def test_calls_outside_the_pattern_are_left_to_torch_with_its_results(self):
        out, src, index = integers(50, 8, dtype=torch.float32, device="cuda"), \
            integers(300, 8, dtype=torch.float32, device="cuda", seed=2), indices(300, 50, device="cuda")
        expanded = index.view(-1, 1).expand_as(src)
        calls = {
            "aten::index_add_": [lambda: out.clone().index_add_(1, index[:8] % 8, integers(50, 8, dtype=torch.float32,
                                                                                             device="cuda")),
                                 lambda: out.clone().index_add_(0, index, src, alpha=2),
                                 lambda: out[:, 0].clone().index_add_(0, index, src[:, 0]),
                                 lambda: out.int().index_add_(0, index, src.int())],
            "aten::scatter_add_": [lambda: out.clone().scatter_add_(0, expanded.contiguous(), src),
                                   lambda: out[:, 0].clone().scatter_add_(0, index, src[:, 0])],
            "aten::scatter_reduce_": [lambda: out.clone().scatter_reduce_(0, expanded, src, "prod")],
            "aten::_index_put_impl_": [lambda: out.clone().index_put_((index[:50].unique(),), src[:1]),
                                       lambda: out.clone().index_put_((index, index % 8), src[:, 0],
                                                                      accumulate=True)],
        }
        for op, functions in calls.items():
            for function in functions:
                self.assertTrue(torch.equal(function(), as_torch(function)))
            self.assertEqual(routed(op), 0, op)
            self.assertEqual(sum(left(op).values()), len(functions), (op, left(op)))

    def test_scatter_reduce_of_every_reduce_matches_float64_and_is_routed(self):
        generator = torch.Generator().manual_seed(fresh_seeds.seed(8))
        for dtype in TOLERANCE:
            out = torch.randn(120, 64, dtype=torch.float64, generator=generator).to("cuda")
            src = torch.randn(3000, 64, dtype=torch.float64, generator=generator).to("cuda")
            # rows 100 to 119: no row reaches them
            index = torch.randint(0, 100, (3000,), generator=generator).to("cuda")
            o, s = out.to(dtype), src.to(dtype)
            expanded = index.view(-1, 1).expand_as(s)
            for reduce in ("sum", "mean", "amax", "amin"):
                for include_self in (True, False):
                    what = f"{dtype} {reduce} include_self={include_self}"
                    for got in (o.clone().scatter_reduce_(0, expanded, s, reduce, include_self=include_self),
                                torch.scatter_reduce(o, 0, expanded, s, reduce, include_self=include_self)):
                        # element by element, against float64 on the CPU (never routed)
                        assert_matches_float64(self, got, o, index, s, reduce, include_self, what=what)
                        self.assertTrue(torch.equal(got[100:], o[100:]), what)
        for op in ("aten::scatter_reduce_", "aten::scatter_reduce"):
            self.assertEqual(set(dropin.route_counts()[op]), {dropin.ROUTED}, op)
            self.assertEqual(routed(op), 4 * 8)
        self.assertEqual(spt.fallback_counts(), {})

    def test_gradients_of_a_routed_amax_are_torchs(self):
        out = integers(120, 64, dtype=torch.float32, device="cuda")
        src = integers(3000, 64, dtype=torch.float32, device="cuda", seed=2)
        index = indices(3000, 100, device="cuda")
        expanded = index.view(-1, 1).expand_as(src)

        def gradients():
            leaves = [out.clone().requires_grad_(), src.clone().requires_grad_()]
            result = torch.scatter_reduce(leaves[0], 0, expanded, leaves[1], "amax", include_self=False)
            return [result] + list(torch.autograd.grad(result.pow(2).sum(), leaves))

        for a, b in zip(gradients(), as_torch(gradients)):
            self.assertTrue(torch.equal(a, b))  # integer values: the same maxima and ties
        self.assertEqual(routed("aten::scatter_reduce"), 1)

    def test_gradients_of_gathers_are_routed_and_match_torch(self):
        x = integers(500, 32, dtype=torch.float32, device="cuda")
        weight = integers(32, dtype=torch.float32, device="cuda", seed=5)
        source, target = indices(4000, 500, device="cuda", seed=3), indices(4000, 500, device="cuda", seed=4)

        def gradients():
            leaves = [x.clone().requires_grad_(), weight.clone().requires_grad_()]
            messages = leaves[0].index_select(0, source) * leaves[1] + leaves[0][target]
            loss = torch.zeros_like(x).index_add(0, target, messages).sum()
            return [loss] + list(torch.autograd.grad(loss, leaves))

        expected = as_torch(gradients)
        got = gradients()
        for a, b in zip(got, expected):
            self.assertTrue(torch.equal(a, b))  # integer values: exact in any order
        self.assertEqual(routed("aten::index_add_"), 1)
        self.assertEqual(routed("aten::_index_put_impl_"), 1)

    def test_disable_restores_torchs_kernels(self):
        out, src, index = integers(50, 8, device="cuda"), integers(300, 8, device="cuda", seed=2), \
            indices(300, 50, device="cuda")
        spt.disable()
        dropin.reset_route_counts()
        out.clone().index_add_(0, index, src)
        self.assertEqual(dropin.route_counts(), {})

    def test_cuda_graph_capture_and_replay(self):
        out = torch.zeros(64, 32, device="cuda")
        src = integers(1000, 32, dtype=torch.float32, device="cuda")
        index = indices(1000, 64, device="cuda")
        expected = torch.zeros(64, 32, dtype=torch.float64, device="cuda").index_add(0, index, src.double())
        out.index_add_(0, index, src)  # loads the kernels before capture
        out.index_put_((index,), src, accumulate=True)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out.index_add_(0, index, src)
            out.index_put_((index,), src, accumulate=True)
        out.zero_()
        graph.replay()
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(out.double(), 2 * expected))
        for op in ("aten::index_add_", "aten::_index_put_impl_"):
            self.assertGreaterEqual(routed(op), 2, op)  # the call before the capture and the captured one
            self.assertEqual(left(op), {}, op)
        self.assertEqual(spt.fallback_counts(), {})  # the captured calls ran the library, not torch's op

    def test_deterministic_mode_is_bitwise_reproducible(self):
        generator = torch.Generator().manual_seed(fresh_seeds.seed(6))
        out = torch.randn(64, 64, generator=generator).to("cuda")
        src = torch.randn(200_000, 64, generator=generator).to("cuda")
        index = torch.randint(0, 64, (200_000,), generator=generator).to("cuda")
        previous = torch.are_deterministic_algorithms_enabled()
        torch.use_deterministic_algorithms(True)
        try:
            first = out.clone().index_add_(0, index, src)
            for _ in range(5):
                self.assertTrue(torch.equal(out.clone().index_add_(0, index, src), first))
        finally:
            torch.use_deterministic_algorithms(previous)
        self.assertEqual(routed("aten::index_add_"), 6)
        self.assertEqual(left("aten::index_add_"), {})
        self.assertEqual(spt.fallback_counts(), {})
        # on the CPU, where the switch never routes: the reference is torch's own
        expected = out.double().cpu().index_add(0, index.cpu(), src.double().cpu())
        torch.testing.assert_close(first.double().cpu(), expected, rtol=1e-4, atol=1e-3)


def small_graph(nodes=2000, edges=30000, features=32, device="cuda", seed=0):
    generator = torch.Generator().manual_seed(fresh_seeds.seed(seed))
    weights = torch.arange(1, nodes + 1, dtype=torch.float64).pow(-0.6)  # power-law degrees
    endpoints = torch.multinomial(weights, 2 * edges, replacement=True, generator=generator).view(2, edges)
    x = torch.randn(nodes, features, generator=generator)
    y = torch.randint(0, 7, (nodes,), generator=generator)
    return x.to(device), endpoints.to(device), y.to(device)


@unittest.skipUnless(GPUS and HAVE_PYG, f"{NO_GPU} and torch_geometric")
class GpuPyg(unittest.TestCase):
    def setUp(self):
        dropin.reset_route_counts()
        spt.enable()

    def tearDown(self):
        spt.disable()

    def test_utils_scatter_sum_and_mean_match_float64(self):
        from torch_geometric.utils import scatter

        x, edge_index, _ = small_graph(features=48)
        src = x[edge_index[0]]
        for dtype in TOLERANCE:
            for reduce in ("sum", "mean"):
                with self.subTest(dtype=dtype, reduce=reduce):
                    dropin.reset_route_counts()
                    rows, index, n = src.to(dtype), edge_index[1], x.shape[0]
                    got = scatter(rows, index, 0, dim_size=n, reduce=reduce)
                    with spt.disable():
                        # Each target within the streaming sum's rounding bound (each add rounded to the
                        # rows' dtype; a grouped sum stays within it), which grows with its in-degree.
                        zeros = rows.new_zeros(n, rows.shape[1])
                        reference = float64_reference(zeros, index, rows, "sum")
                        bound = rounding_bound(zeros, index, rows, "sum")
                        if reduce == "mean":
                            # PyG divides by a count it adds up in the rows' dtype (a 1-D scatter, left to
                            # torch): bf16 counts exactly only to 256, so the reference divides by that count;
                            # the division rounds once more.
                            count = rows.new_zeros(n).scatter_add_(0, index, rows.new_ones(index.numel()))
                            count = count.clamp(min=1).double().view(-1, 1).cpu()
                            reference = reference / count
                            bound = bound / count * (1 + UNIT_ROUNDOFF[dtype]) + UNIT_ROUNDOFF[dtype] * reference.abs()
                    assert_within_bound(self, got, reference, bound, f"{dtype} {reduce}")
                    self.assertEqual(routed("aten::scatter_add_"), 1)
                    expected_left = {"out has fewer than 2 dimensions": 1} if reduce == "mean" else {}
                    self.assertEqual(left("aten::scatter_add_"), expected_left)

    def test_utils_scatter_max_and_min_are_routed_and_match_float64(self):
        from torch_geometric.utils import scatter

        x, edge_index, _ = small_graph(features=48)
        src = x[edge_index[0]]
        for dtype in TOLERANCE:
            for reduce in ("max", "min"):
                with self.subTest(dtype=dtype, reduce=reduce):
                    dropin.reset_route_counts()
                    rows, index, n = src.to(dtype), edge_index[1], x.shape[0]
                    got = scatter(rows, index, 0, dim_size=n, reduce=reduce)
                    with spt.disable():
                        reference = scatter(rows.double(), index, 0, dim_size=n, reduce=reduce)
                    assert_same_bits_with_nans(self, got, reference, f"{dtype} {reduce}")  # one of the operands
                    self.assertEqual(routed("aten::scatter_reduce_"), 1)

    def test_message_passing_sum_and_mean_match_float64(self):
        from torch_geometric.nn import SAGEConv, SimpleConv

        x, edge_index, _ = small_graph()
        torch.manual_seed(fresh_seeds.seed(0))
        for aggr in ("sum", "mean"):
            for layer in (SimpleConv(aggr=aggr), SAGEConv(32, 16, aggr=aggr).cuda()):
                with self.subTest(layer=str(layer)):
                    dropin.reset_route_counts()
                    leaf = x.clone().requires_grad_()
                    out = layer(leaf, edge_index)
                    out.pow(2).sum().backward()
                    layer64 = layer.double() if hasattr(layer, "lin_l") else layer
                    with spt.disable():
                        leaf64 = x.double().requires_grad_()
                        out64 = layer64(leaf64, edge_index)
                        out64.pow(2).sum().backward()
                    layer.float()
                    assert_close_to_float64(self, out, out64.detach(), torch.float32)
                    assert_close_to_float64(self, leaf.grad, leaf64.grad, torch.float32)
                    self.assertEqual(routed("aten::scatter_add_"), 1)
                    self.assertEqual(routed("aten::index_add_"), 1)

    def test_compiled_graphsage_step_matches_eager(self):
        from torch_geometric.nn import GraphSAGE

        x, edge_index, y = small_graph()
        torch.manual_seed(fresh_seeds.seed(0))
        model = GraphSAGE(32, 64, num_layers=2, out_channels=7).cuda()

        def loss_of(model, x, edge_index, y):
            return F.cross_entropy(model(x, edge_index), y)

        def step(loss_function):
            model.zero_grad()
            loss = loss_function(model, x, edge_index, y)
            loss.backward()
            return [loss.detach()] + [p.grad.clone() for p in model.parameters()]

        eager = step(loss_of)
        self.assertGreater(routed("aten::scatter_add_"), 0)
        for backend in ("inductor", "aot_eager"):
            with self.subTest(backend=backend):
                torch._dynamo.reset()
                dropin.reset_route_counts()
                compiled = step(torch.compile(loss_of, fullgraph=True, backend=backend))
                for a, b in zip(compiled, eager):
                    torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
                if backend == "inductor":  # f32 scatters: inductor's own Triton code, not the switch
                    self.assertEqual(routed("aten::scatter_add_") + routed("aten::scatter_add"), 0,
                                     dropin.route_counts())
                else:  # the graphs' aten scatters reach the switch
                    self.assertGreater(routed("aten::scatter_add"), 0, dropin.route_counts())

    def test_inductor_leaves_bf16_index_add_to_aten_and_the_switch_routes_it(self):
        out = torch.zeros(100, 64, dtype=torch.bfloat16, device="cuda")
        src = integers(1000, 64, dtype=torch.bfloat16, device="cuda")
        index = indices(1000, 100, device="cuda")
        torch._dynamo.reset()
        compiled = torch.compile(lambda o, i, s: torch.index_add(o, 0, i, s) * 2, fullgraph=True)
        got = compiled(out, index, src)
        self.assertTrue(torch.equal(got, as_torch(lambda: torch.index_add(out, 0, index, src) * 2)))
        self.assertGreater(routed("aten::index_add"), 0, dropin.route_counts())

if __name__ == "__main__":
    unittest.main()
