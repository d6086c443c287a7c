"""The Python rows of docs/bad_inputs.md (bad_inputs_cases.py).

BindingRows runs every binding case (fake arrays, no GPU, no torch) and
checks what it raises. TorchOnCpu needs torch; TorchOnGpu needs torch with
an sm_90+ GPU: they prove what the torch rows say, the GPU cases on
poisoned memory (every byte the call may not write is compared before and
after) and each followed by a valid call checked in float64 that must run
the library, not fall back to torch's op.
"""

import importlib.util
import unittest
import warnings

import fresh_seeds
from package_under_test import scatterptx
from torch_devices import GPUS, NO_GPU

import bad_inputs_cases as cases

HAVE_TORCH = importlib.util.find_spec("torch") is not None
if HAVE_TORCH:
    import torch

    import scatterptx.torch as spt


def quietly(function, *args, **kwargs):
    """function(*args, **kwargs) with the once-per-reason fallback warning silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return function(*args, **kwargs)


class BindingRows(unittest.TestCase):
    def test_every_row_raises_as_recorded(self):
        for case in cases.BINDING_CASES:
            with self.subTest(case.id):
                raised, message = cases.run_binding_case(case, scatterptx)
                self.assertEqual(raised, case.raises, message)
                self.assertTrue(any(name in message for name in case.names),
                                f"{message!r} names none of {case.names}")

    def test_ids_are_unique(self):
        ids = [case.id for case in cases.BINDING_CASES + cases.BINDING_DOCUMENTED + cases.TORCH_CASES]
        self.assertEqual(len(ids), len(set(ids)))


def invalid_inputs(device):
    """(what, out, index, src) that torch's index_add_ refuses on any device,
    made fresh for each call."""
    generator = torch.Generator().manual_seed(fresh_seeds.seed(1))

    def make(rows=7, out_rows=5, cols=3):
        out = torch.randn(out_rows, cols, generator=generator).to(device)
        src = torch.randn(rows, cols, generator=generator).to(device)
        index = torch.randint(0, out_rows, (rows,), generator=generator).to(device)
        return out, index, src

    out, index, src = make()
    yield "float32 index", out, index.float(), src
    out, index, src = make()
    yield "bool index", out, index.bool(), src
    out, index, src = make()
    yield "uint8 index", out, index.to(torch.uint8), src
    out, index, src = make()
    yield "f32 out, f64 src", out, index, src.double()
    out, index, src = make()
    yield "fewer columns in src", out, index, src[:, :2].contiguous()
    out, index, src = make()
    yield "index shorter than src", out, index[:-1], src
    out, index, src = make()
    yield "2-D index", out, index.view(-1, 1), src
    base = torch.zeros(1, 3, device=device)
    yield "expanded out", base.expand(5, 3), torch.arange(5, device=device), torch.ones(5, 3, device=device)


class TorchErrorComparison:
    def assert_same_error(self, what, ours, theirs):
        """ours() and theirs() raise the same type with the same message."""
        with self.assertRaises(Exception, msg=what) as our_error:
            quietly(ours)
        with self.assertRaises(Exception, msg=what) as their_error:
            theirs()
        self.assertEqual(type(our_error.exception), type(their_error.exception), what)
        self.assertEqual(str(our_error.exception), str(their_error.exception), what)


@unittest.skipUnless(HAVE_TORCH, "torch is not installed")
class TorchOnCpu(unittest.TestCase, TorchErrorComparison):
    def test_invalid_input_raises_torchs_error(self):
        rows = list(invalid_inputs("cpu"))
        out = torch.zeros(5, 3)
        rows.append(("index entry out_rows", out, torch.tensor([0, 5]), torch.ones(2, 3)))
        rows.append(("negative index entry", out, torch.tensor([0, -1]), torch.ones(2, 3)))
        shared = torch.randn(5, 3)
        rows.append(("src is out", shared, torch.arange(5), shared))
        for what, out, index, src in rows:
            with self.subTest(what):
                self.assert_same_error(what, lambda: spt.index_add_(out, index, src),
                                       lambda: out.index_add_(0, index, src))

    def test_in_place_with_a_gradient_refuses_what_torch_refuses(self):
        # With a gradient wanted the in-place operators run as the functional
        # one and copy_, which would hide memory shared with out.
        index = torch.tensor([0, 1])
        for what, ours, theirs in (
                ("index_add_", lambda y: spt.index_add_(y, index, y[2:4]),
                 lambda y: y.index_add_(0, index, y[2:4])),
                ("scatter_reduce_", lambda y: spt.scatter_reduce_(y, index, y[2:4], "amax"),
                 lambda y: y.scatter_reduce_(0, index.view(-1, 1).expand(2, 3), y[2:4], "amax")),
                ("weighted_index_add_", lambda y: spt.weighted_index_add_(y, index, y[2:4], torch.ones(2)),
                 lambda y: y.index_add_(0, index, y[2:4])),
                ("expanded out", lambda y: spt.index_add_(y[:1].expand(4, 3), index, torch.ones(2, 3)),
                 lambda y: y[:1].expand(4, 3).index_add_(0, index, torch.ones(2, 3)))):
            with self.subTest(what):
                leaf = torch.randn(6, 3, requires_grad=True)
                y, before = leaf * 1, leaf.detach().clone()
                self.assert_same_error(what, lambda: ours(y), lambda: theirs(leaf.detach().clone()))
                self.assertTrue(torch.equal(y.detach(), before))

    def test_an_inference_tensor_is_refused_in_place_outside_inference_mode(self):
        with torch.inference_mode():
            out, theirs = torch.zeros(4, 3), torch.zeros(4, 3)
        index, src = torch.tensor([0, 3]), torch.ones(2, 3)
        # torch's own op raises after it has written; ours before.
        self.assert_same_error("index_add_", lambda: spt.index_add_(out, index, src),
                               lambda: theirs.index_add_(0, index, src))
        self.assert_same_error("scatter_reduce_", lambda: spt.scatter_reduce_(out, index, src, "sum"),
                               lambda: theirs.index_add_(0, index, src))
        self.assert_same_error("weighted_index_add_", lambda: spt.weighted_index_add_(out, index, src, torch.ones(2)),
                               lambda: theirs.index_add_(0, index, src))
        self.assertTrue(torch.equal(out, torch.zeros(4, 3)))
        with torch.inference_mode():
            quietly(spt.index_add_, out, index, src)
        self.assertTrue(torch.equal(out, torch.zeros(4, 3).index_add_(0, index, src)))

    def test_what_the_library_does_not_take_falls_back(self):
        index = torch.tensor([0, 2, 2, 4])
        for what, out, src in (("int32", torch.zeros(5, 3, dtype=torch.int32), torch.ones(4, 3, dtype=torch.int32)),
                               ("complex64", torch.zeros(5, 3, dtype=torch.complex64),
                                torch.ones(4, 3, dtype=torch.complex64)),
                               ("1-D", torch.zeros(5), torch.ones(4)),
                               ("3-D", torch.zeros(5, 3, 2), torch.ones(4, 3, 2))):
            with self.subTest(what):
                spt.reset_fallback_counts()
                got = quietly(spt.index_add, out, index, src)
                self.assertTrue(torch.equal(got, out.index_add(0, index, src)))
                self.assertEqual(sum(spt.fallback_counts().values()), 1)

    def test_non_tensors_are_refused_by_the_dispatcher(self):
        with self.assertRaisesRegex(RuntimeError, "Tensor"):
            spt.index_add_(torch.zeros(5, 3), [0, 1], torch.ones(2, 3))

    def test_scatter_refuses_what_it_does_not_take(self):
        src, index = torch.ones(6, 3), torch.tensor([0, 1, 1, 2, 3, 3])
        for reduce in ("mul", "prod", "any"):
            with self.assertRaises(NotImplementedError, msg=reduce):
                spt.scatter(src, index, reduce=reduce)
        for reduce in ("mean", "max", "min"):
            with self.assertRaises(NotImplementedError, msg=reduce):
                spt.scatter(src, index, out=torch.zeros(4, 3), reduce=reduce)
        with self.assertRaisesRegex(ValueError, "unknown reduce"):
            spt.scatter(src, index, reduce="median")
        with self.assertRaises(NotImplementedError):
            spt.scatter(src, index, dim=1)
        with self.assertRaises(NotImplementedError):
            spt.scatter(src, index.view(-1, 1))
        with self.assertRaises(NotImplementedError):
            spt.scatter(torch.ones(6, 3, 2), index)


@unittest.skipUnless(GPUS, NO_GPU)
class TorchOnGpu(unittest.TestCase, TorchErrorComparison):
    def setUp(self):
        spt.reset_fallback_counts()
        torch.empty(1, device="cuda")  # device 0's context, current on this thread
        torch.cuda.synchronize()
        scatterptx.take_index_error()  # start from an empty record

    def test_invalid_input_raises_torchs_error(self):
        # An expanded out fails later on CUDA, copying the result back: below.
        rows = [row for row in invalid_inputs("cuda") if row[0] != "expanded out"]
        out, index, src = torch.zeros(5, 3, device="cuda"), torch.arange(2, device="cuda"), torch.ones(2, 3)
        rows.append(("CPU src", out, index, src))
        rows.append(("CPU index and src", out, index.cpu(), src))
        for what, out, index, src in rows:
            with self.subTest(what):
                self.assert_same_error(what, lambda: spt.index_add_(out, index, src),
                                       lambda: out.index_add_(0, index, src))
        torch.cuda.synchronize()
        self.assertEqual(scatterptx.take_index_error(), -1)

    def test_what_the_library_does_not_take_falls_back(self):
        index = torch.tensor([0, 2, 2, 4], device="cuda")
        out = torch.zeros(5, 3, dtype=torch.int32, device="cuda")
        src = torch.ones(4, 3, dtype=torch.int32, device="cuda")
        got = quietly(spt.index_add, out, index, src)
        self.assertTrue(torch.equal(got, out.index_add(0, index, src)))
        self.assertEqual(sum(spt.fallback_counts().values()), 1)

    def poisoned(self, rows, out_rows, cols, generator):
        """An f32 out inside a larger tensor of random values (rows around it,
        columns after it), and a random src, drawn from generator."""
        arena = torch.randn(out_rows + 4, cols + 3, device="cuda", generator=generator)
        out = arena[2:-2, :cols]
        src = torch.randn(rows, cols, device="cuda", generator=generator)
        return arena, out, src

    def assert_only_valid_rows_changed(self, arena_before, arena, out_rows, cols, index, src):
        """Everything in arena but out's targeted rows' columns is unchanged;
        those rows hold out + the valid rows of src (float64 reference)."""
        index = index.long()
        valid = (index >= 0) & (index < out_rows)
        targeted = torch.zeros(arena.shape[0], dtype=torch.bool, device="cuda")
        targeted[2 + index[valid]] = True
        keep = arena.clone()
        keep[targeted, :cols] = arena_before[targeted, :cols]
        self.assertTrue(torch.equal(keep.view(torch.int32), arena_before.view(torch.int32)),
                        "a byte outside the rows the call may write changed")
        expected = arena_before[2:-2, :cols].double().index_add(0, index[valid], src.double()[valid])
        torch.testing.assert_close(arena[2:-2, :cols].double(), expected, rtol=1e-5, atol=1e-4)

    def test_out_of_range_rows_are_skipped_and_nothing_else_changes(self):
        generator = torch.Generator(device="cuda").manual_seed(fresh_seeds.seed(0))
        for index_dtype in (torch.int32, torch.int64):
            with self.subTest(index_dtype=index_dtype):
                rows, out_rows, cols = 3000, 500, 64
                arena, out, src = self.poisoned(rows, out_rows, cols, generator)
                index = torch.randint(0, out_rows, (rows,), device="cuda", dtype=index_dtype, generator=generator)
                bad = {17: out_rows + 123, 40: -1, 41: out_rows, 2999: -out_rows, 1000: 2**31 - 1}
                if index_dtype == torch.int64:
                    bad.update({1500: 2**32 + 3, 1501: -2**63})
                for position, value in bad.items():
                    index[position] = value
                before, src_before, index_before = arena.clone(), src.clone(), index.clone()
                spt.index_add_(out, index, src)
                self.assertEqual(scatterptx.take_index_error(), 17)
                self.assert_only_valid_rows_changed(before, arena, out_rows, cols, index, src)
                self.assertTrue(torch.equal(src, src_before) and torch.equal(index, index_before))
                # A valid call in the same context.
                before = arena.clone()
                valid = torch.randint(0, out_rows, (rows,), device="cuda", dtype=index_dtype, generator=generator)
                spt.reset_fallback_counts()
                spt.index_add_(out, valid, src)
                self.assertEqual(spt.fallback_counts(), {})
                self.assertEqual(scatterptx.take_index_error(), -1)
                self.assert_only_valid_rows_changed(before, arena, out_rows, cols, valid, src)

    def test_src_sharing_out_is_refused(self):
        generator = torch.Generator(device="cuda").manual_seed(fresh_seeds.seed(1))
        arena, out, src = self.poisoned(10, 10, 8, generator)
        before = arena.clone()
        with self.assertRaises(scatterptx.ScatterPtxError) as caught:
            spt.index_add_(out, torch.arange(10, device="cuda"), out)
        self.assertEqual(caught.exception.status, "SCATTERPTX_ERROR_INVALID_ARGUMENT")
        self.assertIn("out and src overlap in memory", str(caught.exception))
        self.assertTrue(torch.equal(arena.view(torch.int32), before.view(torch.int32)))
        index = torch.randint(0, 10, (10,), device="cuda", generator=generator)
        spt.reset_fallback_counts()
        spt.index_add_(out, index, src)
        self.assertEqual(spt.fallback_counts(), {})
        self.assert_only_valid_rows_changed(before, arena, 10, 8, index, src)

    def test_src_read_in_a_copy_sharing_out_is_refused_untouched(self):
        # A src the library reads in a row-major copy (out transposed) would
        # no longer share memory with out: torch's error comes first.
        out = torch.randn(6, 6, device="cuda")
        before, theirs = out.clone(), out.clone()
        index = torch.arange(6, device="cuda")
        self.assert_same_error("transposed out as src", lambda: spt.index_add_(out, index, out.t()),
                               lambda: theirs.index_add_(0, index, theirs.t()))
        self.assertTrue(torch.equal(out, before))

    def test_expanded_out_is_refused_untouched(self):
        generator = torch.Generator(device="cuda").manual_seed(fresh_seeds.seed(2))
        arena, out, src = self.poisoned(4, 5, 3, generator)
        base = torch.randn(1, 3, device="cuda", generator=generator)
        before = base.clone()
        index = torch.tensor([0, 1, 1, 4], device="cuda")
        # Computed in a contiguous copy; copying it back into rows that share
        # memory is torch's error, raised before anything is written.
        with self.assertRaisesRegex(RuntimeError, "more than one element of the written-to tensor"):
            spt.index_add_(base.expand(5, 3), index, src)
        self.assertTrue(torch.equal(base, before))
        before = arena.clone()
        spt.reset_fallback_counts()
        spt.index_add_(out, index, src)
        self.assertEqual(spt.fallback_counts(), {})
        self.assert_only_valid_rows_changed(before, arena, 5, 3, index, src)


if __name__ == "__main__":
    unittest.main()
