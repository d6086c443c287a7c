"""Tests of the Python entry point. Host-only cases run anywhere; the GPU
cases need torch with an sm_90+ GPU and compare against torch's index_add_
in float64."""

import ctypes
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import scatterptx  # noqa: E402

FAKE = 0x10000  # aligned, never dereferenced: validation runs before the driver


def driver_present():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def gpu_torch():
    """torch when it has an sm_90+ GPU, else None."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available() or torch.cuda.get_device_capability(0)[0] < 9:
        return None
    return torch


class FakeArray:
    """Just enough of __cuda_array_interface__ to reach the library."""

    def __init__(self, shape, typestr, strides=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (FAKE, False),
                                         "strides": strides, "version": 3}


class HostOnly(unittest.TestCase):
    def test_library_loads_and_reports_messages(self):
        self.assertIsNotNone(scatterptx.library())

    def test_invalid_arguments_raise_with_the_field(self):
        with self.assertRaises(scatterptx.ScatterPtxError) as caught:
            scatterptx.scatter_add_pointers(FAKE, 10, 2, FAKE * 2, 5, 4, 4, "f32", FAKE * 3)
        self.assertEqual(caught.exception.status, "SCATTERPTX_ERROR_INVALID_ARGUMENT")
        self.assertIn("out_row_stride", str(caught.exception))

    def test_empty_source_is_a_no_op(self):
        scatterptx.scatter_add_pointers(0, 0, 4, 0, 0, 4, 4, "f32", 0)

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


@unittest.skipIf(gpu_torch() is None, "needs torch with an sm_90+ GPU")
class AgainstTorch(unittest.TestCase):
    def run_case(self, dtype, index_dtype, rows, out_rows, cols, pad=0, path="auto"):
        torch = gpu_torch()
        generator = torch.Generator(device="cuda").manual_seed(int.from_bytes(os.urandom(4), "little"))
        wide = torch.rand(out_rows, cols + pad, device="cuda", generator=generator, dtype=torch.float64) - 0.5
        wide = wide.to(dtype)
        out = wide[:, :cols]
        src = (torch.rand(rows, cols, device="cuda", generator=generator, dtype=torch.float64) + 0.25).to(dtype)
        index = torch.randint(0, out_rows, (rows,), device="cuda", generator=generator, dtype=index_dtype)
        expected = out.double().index_add_(0, index.long(), src.double())
        padding_before = wide[:, cols:].clone()
        scatterptx.scatter_add_(out, index, src, path=path)
        torch.cuda.synchronize()
        error = ((out.double() - expected).norm() / expected.norm()).item()
        tolerance = {torch.float32: 1e-6, torch.float64: 1e-14, torch.float16: 5e-3, torch.bfloat16: 3e-2}[dtype]
        self.assertLess(error, tolerance, f"{dtype} {index_dtype} {rows}x{cols} pad={pad} path={path}")
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

    def test_checked_mode_raises_on_bad_index(self):
        torch = gpu_torch()
        out = torch.zeros(10, 8, device="cuda") + 1.5
        src = torch.ones(4, 8, device="cuda")
        index = torch.tensor([1, 2, 99, 3], device="cuda")
        with self.assertRaises(scatterptx.ScatterPtxError) as caught:
            scatterptx.scatter_add_(out, index, src, check_index=True)
        self.assertEqual(caught.exception.status, "SCATTERPTX_ERROR_INDEX_OUT_OF_RANGE")
        self.assertIn("index[2] = 99", str(caught.exception))
        self.assertEqual(out[1, 0].item(), 2.5)  # valid rows still added
        self.assertEqual(out[0, 0].item(), 1.5)


if __name__ == "__main__":
    unittest.main()
