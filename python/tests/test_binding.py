"""Tests of the Python entry point. Host-only cases run anywhere; the GPU
cases need torch with an sm_90+ GPU and compare against torch's index_add_
in float64."""

import ctypes
import importlib.util
import math
import unittest
from unittest import mock

import fresh_seeds
from package_under_test import scatterptx
from torch_devices import GPUS, NO_GPU

FAKE = 0x10000  # aligned, never dereferenced: validation runs before the driver


def driver_present():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def gpu_torch():
    """torch when device 0 is an sm_90+ GPU (torch_devices), else None."""
    if not GPUS:
        return None
    import torch

    return torch


def make_case(torch, dtype, index_dtype, rows, out_rows, cols, pad=0, hot=0.0, seed=0):
    """(wide, out, src, index) on the GPU, drawn from seed: out is the first
    cols columns of wide (pad columns after them must stay untouched); a
    fraction hot of the source rows go to out row 0, the rest uniformly
    anywhere."""
    generator = torch.Generator(device="cuda").manual_seed(fresh_seeds.seed(seed))
    wide = torch.rand(out_rows, cols + pad, device="cuda", generator=generator, dtype=torch.float64) - 0.5
    wide = wide.to(dtype)
    src = (torch.rand(rows, cols, device="cuda", generator=generator, dtype=torch.float64) + 0.25).to(dtype)
    index = torch.randint(0, out_rows, (rows,), device="cuda", generator=generator, dtype=index_dtype)
    if hot:
        index[torch.randperm(rows, device="cuda", generator=generator)[:int(hot * rows)]] = 0
    return wide, wide[:, :cols], src, index


def assert_within_rounding(test, got, out0, index, src, what, accumulated=False):
    """Every element of got against out0 + sum(src) in float64.

    The bound is 2 (count + 1) u |terms| with u the unit roundoff of the
    dtype; accumulated=True asserts on-chip sums (f32 for f16/bf16/f32, f64
    for f64) rounded to the dtype at the end instead: 2 u_dtype |terms| +
    2 (count + 1) u_accumulator |terms|."""
    torch = gpu_torch()
    unit = {torch.float32: 2.0 ** -24, torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8,
            torch.float64: 2.0 ** -53}[got.dtype]
    accumulator_unit = 2.0 ** -53 if got.dtype == torch.float64 else 2.0 ** -24
    rows = index.long()
    reference = out0.to(torch.float64, copy=True).index_add_(0, rows, src.double())
    terms = out0.to(torch.float64, copy=True).abs_().index_add_(0, rows, src.double().abs())
    additions = torch.bincount(rows, minlength=out0.shape[0]).double().add_(1).unsqueeze(1)
    if accumulated:
        bound = terms * (2 * unit) + terms * additions * (2 * accumulator_unit)
    else:
        bound = terms * additions * (2 * unit)
    worst = ((got.double() - reference).abs() / bound.clamp_min(1e-300)).max().item()
    test.assertLessEqual(worst, 1.0, f"{what}: max |error| / bound = {worst:.3g}")


def same_bits(a, b):
    """Bitwise equality (torch.equal calls -0.0 and 0.0 equal)."""
    torch = gpu_torch()
    return torch.equal(a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8))


class FakeArray:
    """Just enough of __cuda_array_interface__ to reach the library."""

    def __init__(self, shape, typestr, strides=None, data=FAKE):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (data, False),
                                         "strides": strides, "version": 3}


def fake_problem(rows=5, out_rows=10, cols=4, typestr="<f4"):
    """out, index, src and a 1 MiB workspace at distinct, 256-byte aligned fake addresses."""
    return (FakeArray((out_rows, cols), typestr, data=FAKE * 16), FakeArray((rows,), "<i8", data=FAKE * 48),
            FakeArray((rows, cols), typestr, data=FAKE * 32), FakeArray((1 << 20,), "|u1", data=FAKE * 64))


def segmented_workspace_formula(rows, cols, accumulator_bytes):
    """The header's estimate: 16 M + 4*256 ceil(M/2048) + 3 ceil(M/256) row_bytes + 1 KB."""
    row_bytes = -(-cols * accumulator_bytes // 16) * 16
    return 16 * rows + 4 * 256 * math.ceil(rows / 2048) + 3 * math.ceil(rows / 256) * row_bytes + 1024


class HostOnly(unittest.TestCase):
    def test_library_loads_and_reports_messages(self):
        from scatterptx._arrays import Problem
        from scatterptx._dispatch import problem_args

        library = scatterptx.library()
        # A row stride of 2 for 4 columns: refused by validation, before any driver call.
        args = problem_args(Problem(FAKE, 10, 2, FAKE * 2, 5, 4, 4, "f32", FAKE * 3, "int64"))
        self.assertEqual(library.scatterptx_scatter_add(ctypes.byref(args), None), 1)  # INVALID_ARGUMENT
        self.assertIn(b"out_row_stride = 2", library.scatterptx_last_error_message())

    def test_trim_workspace_pool_calls_the_library_and_raises_its_error(self):
        library = scatterptx.library()
        with mock.patch.object(library, "scatterptx_trim_workspace_pool", return_value=0) as trim:
            scatterptx.trim_workspace_pool()
            trim.assert_called_once_with()
        with mock.patch.object(library, "scatterptx_trim_workspace_pool", return_value=2), \
                mock.patch.object(library, "scatterptx_last_error_message", return_value=b"no libcuda"):
            with self.assertRaises(scatterptx.ScatterPtxError) as caught:
                scatterptx.trim_workspace_pool()
        self.assertEqual(caught.exception.status, "SCATTERPTX_ERROR_NO_DRIVER")
        self.assertIn("no libcuda", str(caught.exception))

    def test_the_ctypes_structs_are_as_large_as_the_librarys(self):
        # The init functions write the whole C struct: one field the ctypes
        # struct lacks would overwrite the memory after it.
        from scatterptx._binding import Args, GroupOptions

        library = scatterptx.library()
        for struct, init in ((Args, library.scatterptx_scatter_add_args_init),
                             (GroupOptions, library.scatterptx_group_options_init)):
            with self.subTest(struct=struct.__name__):
                size = ctypes.sizeof(struct)
                memory = ctypes.create_string_buffer(b"\xa5" * (size + 64), size + 64)
                init(ctypes.cast(memory, ctypes.POINTER(struct)))
                self.assertEqual(memory.raw[size:], b"\xa5" * 64, "the library's struct is larger")
                self.assertNotIn(b"\xa5" * 8, memory.raw[:size], "a field of the ctypes struct was left unwritten")

    def test_invalid_arguments_raise_with_the_field(self):
        with self.assertRaises(scatterptx.ScatterPtxError) as caught:
            scatterptx.scatter_add_pointers(FAKE, 10, 2, FAKE * 2, 5, 4, 4, "f32", FAKE * 3)
        self.assertEqual(caught.exception.status, "SCATTERPTX_ERROR_INVALID_ARGUMENT")
        self.assertIn("out_row_stride", str(caught.exception))

    def test_empty_source_is_a_no_op(self):
        # No source rows or no columns: the header makes it a no-op whatever the
        # pointers, NULL or not, reached before the driver (SUCCESS without one).
        from scatterptx._arrays import Problem
        from scatterptx._dispatch import problem_args

        library = scatterptx.library()
        for out, src, index in ((0, 0, 0), (FAKE * 16, FAKE * 32, FAKE * 48)):
            for src_rows, cols in ((0, 4), (5, 0)):
                with self.subTest(out=out, src_rows=src_rows, cols=cols):
                    args = problem_args(Problem(out, 10, 4, src, src_rows, 4, cols, "f32", index, "int64"))
                    self.assertEqual(library.scatterptx_scatter_add(ctypes.byref(args), None), 0,
                                     library.scatterptx_last_error_message())
                    scatterptx.scatter_add_pointers(out, 10, 4, src, src_rows, 4, cols, "f32", index)

    def test_unknown_path_and_grouping_are_refused_before_the_library(self):
        with self.assertRaisesRegex(ValueError, "path"):
            scatterptx.scatter_add_pointers(FAKE, 10, 4, FAKE * 2, 5, 4, 4, "f32", FAKE * 3, path="fast")
        with self.assertRaisesRegex(ValueError, "grouping"):
            scatterptx.scatter_add_pointers(FAKE, 10, 4, FAKE * 2, 5, 4, 4, "f32", FAKE * 3, grouping="always")

    def test_the_library_reads_grouping_where_python_writes_it(self):
        from scatterptx._dispatch import problem_args
        from scatterptx._arrays import Problem

        args = problem_args(Problem(FAKE, 10, 4, FAKE * 2, 5, 4, 4, "f32", FAKE * 3, "int64"), path="private",
                            grouping="off")
        self.assertEqual((args.path, args.grouping), (3, 1))
        args.grouping = 9
        status = scatterptx.library().scatterptx_scatter_add(ctypes.byref(args), None)
        self.assertEqual(status, 1)  # INVALID_ARGUMENT, before the driver
        self.assertIn(b"grouping = 9", scatterptx.library().scatterptx_last_error_message())

    @unittest.skipIf(driver_present(), "a CUDA driver is present")
    def test_missing_driver_is_an_exception(self):
        with self.assertRaises(scatterptx.ScatterPtxError) as caught:
            scatterptx.scatter_add_pointers(FAKE, 10, 4, FAKE * 16, 5, 4, 4, "f32", FAKE * 32)
        self.assertEqual(caught.exception.status, "SCATTERPTX_ERROR_NO_DRIVER")
        self.assertIn("libcuda", str(caught.exception))

    def test_shape_mismatch_is_caught_before_the_library(self):
        out = FakeArray((10, 4), "<f4")
        src = FakeArray((5, 8), "<f4")
        index = FakeArray((5,), "<i8")
        with self.assertRaisesRegex(ValueError, "columns"):
            scatterptx.scatter_add_(out, index, src)
        with self.assertRaisesRegex(ValueError, "entries"):
            scatterptx.scatter_add_(out, FakeArray((4,), "<i8"), FakeArray((5, 4), "<f4"))
        with self.assertRaisesRegex(ValueError, "typestr"):
            scatterptx.scatter_add_(FakeArray((10, 4), "<V2"), index, FakeArray((5, 4), "<V2"))

    def test_array_interface_strides_reach_the_library(self):
        # A row stride of 2 elements for 4 columns: the library itself must
        # refuse it, naming the field, so the stride was passed through.
        out = FakeArray((10, 4), "<f4", strides=(8, 4))
        src = FakeArray((5, 4), "<f4")
        index = FakeArray((5,), "<i8")
        with self.assertRaises(scatterptx.ScatterPtxError) as caught:
            scatterptx.scatter_add_(out, index, src, stream=0)
        self.assertEqual(caught.exception.status, "SCATTERPTX_ERROR_INVALID_ARGUMENT")
        self.assertIn("out_row_stride = 2", str(caught.exception))

    def test_non_arrays_are_refused(self):
        with self.assertRaises(TypeError):
            scatterptx.scatter_add_([1, 2], [0], [1])

    @unittest.skipUnless(importlib.util.find_spec("torch"), "torch is not installed")
    def test_torch_rows_that_overlap_reach_the_library_with_their_stride(self):
        # Expanded rows (stride 0) and as_strided ones (stride 2 for 4
        # columns) must meet the library's stride check, not a made-up
        # stride; a single row's stride is torch's to choose and is not read.
        import torch

        base = torch.zeros(64)
        index = torch.zeros(3, dtype=torch.int64)
        with mock.patch.object(torch.Tensor, "is_cuda", new=True):
            for out, stride in ((base[:4].expand(10, 4), 0), (base.as_strided((10, 4), (2, 1)), 2)):
                with self.assertRaises(scatterptx.ScatterPtxError) as caught:
                    scatterptx.scatter_add_(out, index, torch.ones(3, 4), stream=0)
                self.assertIn(f"out_row_stride = {stride} is less than cols = 4", str(caught.exception))
            one_row = base.as_strided((1, 4), (1, 1))
            problem = scatterptx._arrays.read_problem(one_row, index[:1], torch.ones(1, 4))
            self.assertEqual(problem.out_row_stride, 4)


@unittest.skipUnless(importlib.util.find_spec("torch"), "torch is not installed")
class TorchDevice(unittest.TestCase):
    """Torch tensors run on their own device, as torch's ops do: the device is
    made current around the library call (and its context bound when the
    thread has none), then the previous one restored, on error too. On CPU
    the CUDA calls are stood in for."""

    def setUp(self):
        import torch

        self.torch = torch
        self.switches = []
        patches = [mock.patch.object(torch.Tensor, "is_cuda", new=True),
                   mock.patch.object(torch.Tensor, "get_device", new=lambda t: 1),
                   mock.patch.object(torch._C, "_cuda_exchangeDevice", create=True,
                                     new=lambda d: self.switches.append(("to", d)) or 0),
                   mock.patch.object(torch._C, "_cuda_maybeExchangeDevice", create=True,
                                     new=lambda d: self.switches.append(("back", d)) or 1),
                   mock.patch.object(torch.cuda, "mem_get_info",
                                     new=lambda d: self.switches.append(("bind", d)) or (0, 0)),
                   mock.patch.object(scatterptx._dispatch, "note_torch_device_ready",
                                     new=lambda d: self.switches.append(("ready", d)))]
        for patch in patches:
            patch.start()
            self.addCleanup(patch.stop)

    def arrays(self):
        torch = self.torch
        return torch.zeros(10, 4), torch.zeros(5, dtype=torch.int64), torch.ones(5, 4)

    def scripted_library(self, statuses):
        """The library, its scatter_add answering statuses in turn: the CPU
        tensors standing in for CUDA ones never reach a driver."""
        from scatterptx import _dispatch

        real = scatterptx.library()

        class Library:
            def __getattr__(self, name):
                return getattr(real, name)

            def scatterptx_scatter_add_with_allocator(self, args, allocator, stream):
                return statuses.pop(0)

        return mock.patch.object(_dispatch, "library", new=Library)

    def test_the_tensors_device_is_current_for_the_call_and_restored_after_an_error(self):
        out, index, src = self.arrays()
        with self.scripted_library([1]), self.assertRaises(scatterptx.ScatterPtxError):  # INVALID_ARGUMENT
            scatterptx.scatter_add_(out, index, src, stream=0)
        self.assertEqual(self.switches, [("to", 1), ("back", 0)])

    def test_a_thread_without_a_context_gets_the_devices_context_and_the_call_runs_again(self):
        statuses = [3, 0]  # SCATTERPTX_ERROR_NO_CONTEXT, then SUCCESS
        out, index, src = self.arrays()
        with self.scripted_library(statuses):
            self.assertIs(scatterptx.scatter_add_(out, index, src, stream=0), out)
        self.assertEqual(statuses, [])
        # The torch operators learn that the call loaded the kernels on device 1.
        self.assertEqual(self.switches, [("to", 1), ("bind", 1), ("back", 0), ("ready", 1)])


@unittest.skipUnless(importlib.util.find_spec("torch"), "torch is not installed")
class TorchAllocatorCallbacks(unittest.TestCase):
    """The callbacks the library calls for a workspace: nothing may escape
    them into C (ctypes would hand C a leftover return value); one allocator
    is made however many threads ask at once, and only the calls on torch
    tensors bring it."""

    def test_any_failure_is_a_null_workspace_and_ctrl_c_is_raised_again(self):
        import torch

        from scatterptx import _torch_allocator

        for error in (ValueError("any"), torch.cuda.OutOfMemoryError("out of memory"), ImportError("at exit")):
            with self.subTest(error=type(error).__name__), \
                    mock.patch.object(torch.cuda, "caching_allocator_alloc", side_effect=error):
                self.assertIsNone(_torch_allocator._allocate(256, 0, None))
        with mock.patch.object(torch.cuda, "caching_allocator_alloc", side_effect=KeyboardInterrupt), \
                mock.patch.object(_torch_allocator._thread, "interrupt_main") as interrupt:
            self.assertIsNone(_torch_allocator._allocate(256, 0, None))
        interrupt.assert_called_once_with()
        with mock.patch.object(torch.cuda, "caching_allocator_delete", side_effect=RuntimeError("freed twice")):
            self.assertIsNone(_torch_allocator._release(0x1000, 256, 0, None))

    def test_threads_asking_at_once_get_one_allocator_and_register_nothing(self):
        import threading
        import time

        from scatterptx import _torch_allocator

        made = []
        real_allocator = _torch_allocator.Allocator

        def slow_allocator(*fields):
            made.append(fields)
            time.sleep(0.05)  # another thread may ask meanwhile
            return real_allocator(*fields)

        with mock.patch.object(_torch_allocator, "_registration", None), \
                mock.patch.object(_torch_allocator, "Allocator", side_effect=slow_allocator), \
                mock.patch.object(scatterptx.library(), "scatterptx_set_allocator") as set_allocator:
            addresses = []
            threads = [threading.Thread(target=lambda: addresses.append(_torch_allocator.torch_allocator()))
                       for _ in range(4)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            self.assertEqual(len(made), 1)
            self.assertEqual(len(addresses), 4)
            self.assertEqual(set(addresses), {ctypes.addressof(_torch_allocator._registration)})
            set_allocator.assert_not_called()  # C callers in the process keep the library's pool

    def test_the_operators_calls_bring_torchs_allocator(self):
        from scatterptx import _torch_allocator, _torch_call

        _torch_call._args_template_or_init()
        self.assertEqual(_torch_call._library_fn.__name__, "scatterptx_scatter_add_with_allocator")
        self.assertEqual(_torch_call._allocator, _torch_allocator.torch_allocator())


@unittest.skipUnless(importlib.util.find_spec("torch"), "torch is not installed")
class PlanClose(unittest.TestCase):
    def test_a_failed_wait_leaves_the_plan_open_for_a_later_close(self):
        import torch

        from scatterptx import _grouped

        destroyed = []

        class Library:
            def scatterptx_plan_destroy(self, handle):
                destroyed.append(handle)
                return 0

        plan = _grouped.Plan.__new__(_grouped.Plan)
        plan._handle, plan._executed, plan._device = "handle", True, "cuda:0"
        plan._workspace = plan._index = object()
        with mock.patch.object(_grouped, "library", new=Library):
            with mock.patch.object(torch.cuda, "synchronize", side_effect=RuntimeError("sticky error")):
                with self.assertRaises(RuntimeError):
                    plan.close()
            self.assertFalse(plan.closed)
            self.assertEqual(destroyed, [])
            with mock.patch.object(torch.cuda, "synchronize"):
                plan.close()
            self.assertTrue(plan.closed)
            self.assertEqual(destroyed, ["handle"])
            plan.close()
            self.assertEqual(destroyed, ["handle"])


class GroupedHostOnly(unittest.TestCase):
    """Argument handling of the grouped API that needs no driver."""

    def test_unknown_mode_is_refused_before_the_library(self):
        out, index, src, workspace = fake_problem()
        with self.assertRaisesRegex(ValueError, "mode"):
            scatterptx.scatter_add_grouped(out, index, src, mode="sorted", workspace=workspace)
        with self.assertRaisesRegex(ValueError, "mode"):
            scatterptx.Plan(out, index, src, mode="fast")

    def test_shape_mismatch_is_caught_before_the_library(self):
        out, index, _, workspace = fake_problem()
        wide_src = FakeArray((5, 8), "<f4", data=FAKE * 32)
        with self.assertRaisesRegex(ValueError, "columns"):
            scatterptx.scatter_add_grouped(out, index, wide_src, workspace=workspace)
        with self.assertRaisesRegex(ValueError, "entries"):
            scatterptx.Plan(out, FakeArray((4,), "<i8"), FakeArray((5, 4), "<f4"))

    def test_workspace_must_be_a_flat_device_buffer(self):
        out, index, src, _ = fake_problem()
        with self.assertRaises(TypeError):
            scatterptx.scatter_add_grouped(out, index, src, mode="segmented", workspace=bytearray(1024))
        with self.assertRaisesRegex(ValueError, "1 dimension"):
            scatterptx.scatter_add_grouped(out, index, src, mode="segmented",
                                           workspace=FakeArray((16, 16), "|u1", data=FAKE * 64))

    def test_workspace_sizes(self):
        rows, out_rows, cols = 1_000_000, 250_000, 256

        def size(typestr, mode, **options):
            # Every argument is validated, overlap included: 1 TiB apart.
            out = FakeArray((out_rows, cols), typestr, data=1 << 40)
            src = FakeArray((rows, cols), typestr, data=2 << 40)
            return scatterptx.grouped_workspace_size(out, FakeArray((rows,), "<i8", data=3 << 40), src,
                                                     mode=mode, **options)

        self.assertEqual(size("<f4", "streaming"), 0)
        for typestr, accumulator_bytes in (("<f4", 4), ("<f8", 8)):
            estimate = segmented_workspace_formula(rows, cols, accumulator_bytes)
            got = size(typestr, "segmented")
            # The header gives the size as "about" its formula.
            self.assertGreaterEqual(got, estimate // 2, typestr)
            self.assertLessEqual(got, 2 * estimate, typestr)
        self.assertGreater(size("<f8", "segmented"), size("<f4", "segmented"))  # f64 accumulators
        self.assertGreater(size("<f4", "auto", deterministic=True), 0)  # deterministic selects segmented

    def test_array_interface_inputs_must_bring_a_workspace(self):
        out, index, src, _ = fake_problem()
        with self.assertRaisesRegex(ValueError, "workspace="):
            scatterptx.scatter_add_grouped(out, index, src, mode="segmented")

    def test_invalid_arguments_raise_with_the_field(self):
        _, index, src, workspace = fake_problem()
        out = FakeArray((10, 4), "<f4", strides=(8, 4), data=FAKE * 16)  # row stride 2 < 4 columns
        with self.assertRaises(scatterptx.ScatterPtxError) as caught:
            scatterptx.scatter_add_grouped(out, index, src, mode="segmented", workspace=workspace, stream=0)
        self.assertEqual(caught.exception.status, "SCATTERPTX_ERROR_INVALID_ARGUMENT")
        self.assertIn("out_row_stride", str(caught.exception))

    def test_deterministic_streaming_is_refused(self):
        out, index, src, workspace = fake_problem()
        with self.assertRaises(scatterptx.ScatterPtxError) as caught:
            scatterptx.Plan(out, index, src, mode="streaming", deterministic=True, workspace=workspace,
                            stream=0)
        self.assertEqual(caught.exception.status, "SCATTERPTX_ERROR_INVALID_ARGUMENT")

    @unittest.skipIf(driver_present(), "a CUDA driver is present")
    def test_missing_driver_is_an_exception(self):
        out, index, src, workspace = fake_problem()
        for attempt in (lambda: scatterptx.Plan(out, index, src, mode="segmented", stream=0),
                        lambda: scatterptx.scatter_add_grouped(out, index, src, mode="segmented",
                                                               workspace=workspace, stream=0)):
            with self.assertRaises(scatterptx.ScatterPtxError) as caught:
                attempt()
            self.assertEqual(caught.exception.status, "SCATTERPTX_ERROR_NO_DRIVER")


@unittest.skipUnless(GPUS, NO_GPU)
class AgainstTorch(unittest.TestCase):
    def run_case(self, dtype, index_dtype, rows, out_rows, cols, pad=0, path="auto"):
        torch = gpu_torch()
        wide, out, src, index = make_case(torch, dtype, index_dtype, rows, out_rows, cols, pad)
        out0, padding_before = out.clone(), wide[:, cols:].clone()
        scatterptx.scatter_add_(out, index, src, path=path)
        torch.cuda.synchronize()
        what = f"{dtype} {index_dtype} {rows}x{cols} pad={pad} path={path}"
        assert_within_rounding(self, out, out0, index, src, what)
        self.assertTrue(torch.equal(wide[:, cols:], padding_before), "padding was written")

    def test_dtypes_index_types_and_paths(self):
        torch = gpu_torch()
        for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
            for index_dtype in (torch.int32, torch.int64):
                for path in ("auto", "tma", "red"):
                    self.run_case(dtype, index_dtype, 3000, 700, 256, path=path)

    def test_padded_and_odd_rows(self):
        torch = gpu_torch()
        self.run_case(torch.float32, torch.int64, 2000, 500, 132, pad=4)
        self.run_case(torch.bfloat16, torch.int64, 2000, 500, 264, pad=8)
        self.run_case(torch.float32, torch.int64, 2000, 500, 37, pad=3)  # fallback path

    def test_default_call_groups_in_torchs_memory_and_sums_bf16_in_f32(self):
        torch = gpu_torch()
        # 512-byte rows into a 40 MB out, half the rows onto row 0: grouped.
        wide, out, src, index = make_case(torch, torch.bfloat16, torch.int64, 200000, 40000, 256, hot=0.5)
        out0 = out.clone()
        torch.cuda.synchronize()
        allocations = torch.cuda.memory_stats()["allocation.all.allocated"]
        scatterptx.scatter_add_(out, index, src)
        torch.cuda.synchronize()
        self.assertGreater(torch.cuda.memory_stats()["allocation.all.allocated"], allocations,
                           "the workspace did not come from torch's caching allocator")
        assert_within_rounding(self, out, out0, index, src, "grouped default call", accumulated=True)
        streamed = out0.clone()
        scatterptx.scatter_add_(streamed, index, src, grouping="off")
        torch.cuda.synchronize()
        assert_within_rounding(self, streamed, out0, index, src, "grouping off")

    def test_default_call_reuses_its_workspace_from_torchs_cache(self):
        torch = gpu_torch()
        wide, out, src, index = make_case(torch, torch.float32, torch.int64, 200000, 40000, 128, hot=0.5)
        torch.cuda.synchronize()
        allocated = torch.cuda.memory_allocated()
        scatterptx.scatter_add_(out, index, src)
        torch.cuda.synchronize()
        reserved = torch.cuda.memory_reserved()
        for _ in range(3):
            scatterptx.scatter_add_(out, index, src)
            self.assertEqual(torch.cuda.memory_allocated(), allocated, "the workspace was not given back")
            torch.cuda.synchronize()
            self.assertEqual(torch.cuda.memory_reserved(), reserved, "the cached workspace was not reused")

    def test_calls_on_raw_pointers_take_no_workspace_from_torch(self):
        # torch's pool serves the calls on torch tensors alone: memory it may
        # hand to a tensor next must never be another caller's workspace.
        from scatterptx._arrays import Problem
        from scatterptx._dispatch import problem_args

        torch = gpu_torch()
        wide, out, src, index = make_case(torch, torch.float32, torch.int64, 200000, 40000, 128, hot=0.5)
        scatterptx.scatter_add_(out.clone(), index, src)  # torch's allocator has served a call in this process
        torch.cuda.synchronize()
        out0 = out.clone()
        args = problem_args(Problem(out.data_ptr(), out.shape[0], out.stride(0), src.data_ptr(), src.shape[0],
                                    src.stride(0), out.shape[1], "f32", index.data_ptr(), "int64"))
        plan = ctypes.create_string_buffer(512)
        library = scatterptx.library()
        self.assertEqual(library.scatterptx_describe_plan(ctypes.byref(args), plan, len(plan)), 0)
        self.assertTrue(plan.value.startswith(b"mode=segmented"), plan.value)  # it takes a workspace
        torch.cuda.synchronize()
        allocations = torch.cuda.memory_stats()["allocation.all.allocated"]
        scatterptx.scatter_add_pointers(out.data_ptr(), out.shape[0], out.stride(0), src.data_ptr(), src.shape[0],
                                        src.stride(0), out.shape[1], "f32", index.data_ptr(), "int64",
                                        stream=torch.cuda.current_stream().cuda_stream)
        torch.cuda.synchronize()
        self.assertEqual(torch.cuda.memory_stats()["allocation.all.allocated"], allocations)
        assert_within_rounding(self, out, out0, index, src, "grouped call on raw pointers", accumulated=True)

    def test_empty_source_is_a_no_op(self):
        torch = gpu_torch()
        _, out, src, index = make_case(torch, torch.float32, torch.int64, 5, 10, 8)
        before = out.clone()
        for path in ("auto", "tma", "red", "private"):
            scatterptx.scatter_add_(out, index[:0], src[:0], path=path)
        # no columns, on the real tensors' pointers
        scatterptx.scatter_add_pointers(out.data_ptr(), 10, 8, src.data_ptr(), 5, 8, 0, "f32", index.data_ptr())
        torch.cuda.synchronize()
        self.assertTrue(same_bits(out, before))

    def test_checked_mode_raises_on_bad_index(self):
        torch = gpu_torch()
        out = torch.zeros(10, 8, device="cuda") + 1.5
        src = torch.ones(4, 8, device="cuda")
        index = torch.tensor([1, 2, 99, 3], device="cuda")
        with self.assertRaises(scatterptx.ScatterPtxError) as caught:
            scatterptx.scatter_add_(out, index, src, check_index=True)
        self.assertEqual(caught.exception.status, "SCATTERPTX_ERROR_INDEX_OUT_OF_RANGE")
        self.assertIn("index[2] = 99", str(caught.exception))
        expected = torch.full_like(out, 1.5)
        expected[[1, 2, 3]] = 2.5  # every valid row added, row 3 after the bad position too
        self.assertTrue(torch.equal(out, expected), out)



@unittest.skipUnless(GPUS, NO_GPU)
class GroupedAgainstTorch(unittest.TestCase):
    # (mode, deterministic): every combination the header accepts.
    MODES = (("auto", False), ("streaming", False), ("segmented", False), ("auto", True), ("segmented", True))
    GROUPING = tuple(m for m in MODES if m[0] == "segmented" or m[1])  # those that must sum on chip

    def check_grouped(self, dtype, index_dtype, rows, out_rows, cols, pad=0, hot=0.0, modes=MODES):
        torch = gpu_torch()
        for mode, deterministic in modes:
            wide, out, src, index = make_case(torch, dtype, index_dtype, rows, out_rows, cols, pad, hot)
            out0, padding = out.clone(), wide[:, cols:].clone()
            scatterptx.scatter_add_grouped(out, index, src, mode=mode, deterministic=deterministic)
            torch.cuda.synchronize()
            what = (f"{dtype} {index_dtype} {rows}->{out_rows} D={cols} pad={pad} hot={hot} mode={mode} "
                    f"deterministic={deterministic}")
            assert_within_rounding(self, out, out0, index, src, what,
                                   accumulated=(mode, deterministic) in self.GROUPING)
            self.assertTrue(torch.equal(wide[:, cols:], padding), f"padding was written: {what}")

    def test_every_dtype_index_type_and_mode(self):
        torch = gpu_torch()
        for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
            for index_dtype in (torch.int32, torch.int64):
                self.check_grouped(dtype, index_dtype, 3000, 700, 256)

    def test_long_segments_are_summed_on_chip(self):
        # Half of 20000 rows into one target: segments far longer than a tile.
        torch = gpu_torch()
        for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
            self.check_grouped(dtype, torch.int64, 20000, 300, 256, hot=0.5, modes=self.GROUPING)

    def test_padded_and_odd_rows(self):
        torch = gpu_torch()
        self.check_grouped(torch.float32, torch.int64, 2000, 500, 132, pad=4)
        self.check_grouped(torch.bfloat16, torch.int64, 2000, 500, 264, pad=8)
        self.check_grouped(torch.float32, torch.int64, 2000, 500, 37, pad=3)
        self.check_grouped(torch.float16, torch.int32, 2000, 500, 3, pad=1)

    def test_many_targets(self):
        # 2^22 out rows: the grouping sorts over 22 bits of target.
        torch = gpu_torch()
        self.check_grouped(torch.float32, torch.int64, 200_000, 1 << 22, 4, modes=self.GROUPING)

    def test_empty_source_is_a_no_op(self):
        torch = gpu_torch()
        out = torch.ones(10, 8, device="cuda")
        src = torch.ones(0, 8, device="cuda")
        index = torch.zeros(0, dtype=torch.int64, device="cuda")
        for mode, deterministic in self.MODES:
            scatterptx.scatter_add_grouped(out, index, src, mode=mode, deterministic=deterministic)
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(out, torch.ones_like(out)))

    def test_plan_reused_on_three_sources(self):
        torch = gpu_torch()
        for dtype in (torch.float32, torch.bfloat16):
            for mode in ("auto", "streaming", "segmented"):
                _, out, src, index = make_case(torch, dtype, torch.int64, 5000, 900, 128)
                with scatterptx.Plan(out, index, src, mode=mode) as plan:
                    text = plan.describe()
                    self.assertIn("mode=", text)
                    if mode != "auto":
                        self.assertIn(f"mode={mode}", text)
                    for run in range(3):
                        _, new_out, new_src, _ = make_case(torch, dtype, torch.int64, 5000, 900, 128, seed=run + 1)
                        out0 = new_out.clone()
                        self.assertIs(plan.execute(new_out, new_src), new_out)
                        torch.cuda.synchronize()
                        assert_within_rounding(self, new_out, out0, index, new_src,
                                               f"{dtype} plan mode={mode} ({text}) run {run}",
                                               accumulated=mode == "segmented")

    def test_segmented_plan_reads_the_index_once(self):
        torch = gpu_torch()
        _, out, src, index = make_case(torch, torch.float32, torch.int64, 3000, 700, 64)
        kept = index.clone()
        with scatterptx.Plan(out, index, src, mode="segmented") as plan:
            index.fill_(0)  # after create: the plan must not see it
            out0 = out.clone()
            plan.execute(out, src)
            torch.cuda.synchronize()
            assert_within_rounding(self, out, out0, kept, src, "index changed after create", accumulated=True)

    def test_plan_in_a_caller_workspace(self):
        torch = gpu_torch()
        _, out, src, index = make_case(torch, torch.float32, torch.int64, 4000, 800, 128)
        size = scatterptx.grouped_workspace_size(out, index, src, mode="segmented")
        self.assertGreater(size, 0)
        workspace = torch.empty(size, dtype=torch.uint8, device="cuda")
        plan = scatterptx.Plan(out, index, src, mode="segmented", workspace=workspace)
        self.assertEqual(plan.workspace_bytes, size)
        out0 = out.clone()
        plan.execute(out, src)
        plan.close()
        assert_within_rounding(self, out, out0, index, src, "plan in a caller workspace", accumulated=True)

        # A workspace too small is refused, and nothing is written.
        too_small = torch.empty(size // 2, dtype=torch.uint8, device="cuda")
        with self.assertRaises(scatterptx.ScatterPtxError) as caught:
            scatterptx.Plan(out, index, src, mode="segmented", workspace=too_small)
        self.assertEqual(caught.exception.status, "SCATTERPTX_ERROR_INVALID_ARGUMENT")
        before = out.clone()
        with self.assertRaises(scatterptx.ScatterPtxError) as caught:
            scatterptx.scatter_add_grouped(out, index, src, mode="segmented", workspace=too_small)
        self.assertEqual(caught.exception.status, "SCATTERPTX_ERROR_INVALID_ARGUMENT")
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(out, before))

    def test_deterministic_is_bitwise_reproducible(self):
        torch = gpu_torch()
        for dtype in (torch.float32, torch.bfloat16):
            _, out0, src, index = make_case(torch, dtype, torch.int64, 20000, 300, 256, hot=0.5)

            def single_shot(**options):
                out = out0.clone()
                scatterptx.scatter_add_grouped(out, index, src, deterministic=True, **options)
                torch.cuda.synchronize()
                return out

            first = single_shot()
            assert_within_rounding(self, first, out0, index, src, f"{dtype} deterministic", accumulated=True)
            for run in range(4):
                self.assertTrue(same_bits(single_shot(), first), f"{dtype} single-shot run {run + 2}")
            for warps in (1, 8):
                self.assertTrue(same_bits(single_shot(warps_per_cta=warps), first), f"{dtype} warps={warps}")
            with scatterptx.Plan(out0, index, src, deterministic=True) as plan:
                for run in range(5):
                    out = out0.clone()
                    plan.execute(out, src)
                    torch.cuda.synchronize()
                    self.assertTrue(same_bits(out, first), f"{dtype} plan execute {run + 1}")
                side = torch.cuda.Stream()
                out = out0.clone()
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):
                    plan.execute(out, src)
                side.synchronize()
                self.assertTrue(same_bits(out, first), f"{dtype} plan execute on a second stream")

    def test_checked_plan_create_raises_and_writes_nothing(self):
        torch = gpu_torch()
        out = torch.zeros(10, 8, device="cuda") + 1.5
        src = torch.ones(4, 8, device="cuda")
        index = torch.tensor([1, 2, 99, 3], device="cuda")
        with self.assertRaises(scatterptx.ScatterPtxError) as caught:
            scatterptx.Plan(out, index, src, mode="segmented", check_index=True)
        self.assertEqual(caught.exception.status, "SCATTERPTX_ERROR_INDEX_OUT_OF_RANGE")
        self.assertIn("index[2] = 99", str(caught.exception))
        self.assertTrue(torch.equal(out, torch.full_like(out, 1.5)))

    def test_checked_grouped_adds_valid_rows_then_raises(self):
        torch = gpu_torch()
        out = torch.zeros(10, 8, device="cuda") + 1.5
        src = torch.ones(4, 8, device="cuda")
        index = torch.tensor([1, 2, 99, 3], device="cuda")
        with self.assertRaises(scatterptx.ScatterPtxError) as caught:
            scatterptx.scatter_add_grouped(out, index, src, mode="segmented", check_index=True)
        self.assertEqual(caught.exception.status, "SCATTERPTX_ERROR_INDEX_OUT_OF_RANGE")
        self.assertIn("index[2] = 99", str(caught.exception))
        expected = torch.full_like(out, 1.5)
        expected[[1, 2, 3]] = 2.5  # every valid row added, row 3 after the bad position too
        self.assertTrue(torch.equal(out, expected), out)

    def test_recorded_index_error_by_every_execute(self):
        torch = gpu_torch()
        out = torch.zeros(10, 8, device="cuda") + 1.5
        src = torch.ones(4, 8, device="cuda")
        index = torch.tensor([1, 2, 99, 3], device="cuda")
        scatterptx.take_index_error()  # clear what earlier tests left
        with scatterptx.Plan(out, index, src, mode="segmented") as plan:
            # Create adds nothing, so it records nothing; each execute does.
            self.assertEqual(scatterptx.take_index_error(), -1)
            self.assertEqual(out[1, 0].item(), 1.5)  # create writes nothing
            for _ in range(2):
                plan.execute(out, src)
                self.assertEqual(scatterptx.take_index_error(), 2)
            self.assertEqual(out[1, 0].item(), 3.5)  # two executes added 1.0 each
            self.assertEqual(out[3, 0].item(), 3.5)
            self.assertEqual(out[0, 0].item(), 1.5)  # no row of it, and index 99 wrote nowhere

    def test_closed_plan_refuses_use(self):
        torch = gpu_torch()
        _, out, src, index = make_case(torch, torch.float32, torch.int64, 100, 50, 16)
        with scatterptx.Plan(out, index, src, mode="segmented") as plan:
            plan.execute(out, src)
        self.assertTrue(plan.closed)
        plan.close()  # a second close does nothing
        with self.assertRaisesRegex(ValueError, "closed"):
            plan.execute(out, src)
        with self.assertRaisesRegex(ValueError, "closed"):
            plan.describe()

    def test_execute_refuses_other_shapes_and_dtypes(self):
        torch = gpu_torch()
        _, out, src, index = make_case(torch, torch.float32, torch.int64, 100, 50, 16)
        with scatterptx.Plan(out, index, src, mode="segmented") as plan:
            with self.assertRaisesRegex(ValueError, "plan was made for"):
                plan.execute(out[:-1], src)
            with self.assertRaisesRegex(ValueError, "plan was made for"):
                plan.execute(out, torch.ones(100, 32, device="cuda")[:, :16])  # row stride 32
            with self.assertRaisesRegex(ValueError, "plan was made for f32"):
                plan.execute(out.double(), src.double())

if __name__ == "__main__":
    unittest.main()
