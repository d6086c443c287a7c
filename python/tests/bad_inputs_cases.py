"""The bad-input matrix of the Python package, for docs/bad_inputs.md.

BINDING_CASES are run: scripts/bad_inputs_doc.py prints what each raised, and
test_bad_inputs.BindingRows checks that each raises as recorded here. They
take fake __cuda_array_interface__ arrays 1 TiB apart, which nothing
dereferences before refusing, so they need neither a GPU nor torch.
BINDING_DOCUMENTED and TORCH_CASES need a driver, a GPU or torch: the tests
they name prove them (test_bad_inputs checks the torch rows on the CPU, and
on an sm_90+ GPU where there is one).

This module imports neither torch nor scatterptx: the callables take the
package as their argument.
"""

from typing import Callable, NamedTuple, Tuple

TIB = 1 << 40
OUT, SRC, INDEX, WORKSPACE = 1 * TIB, 2 * TIB, 3 * TIB, 4 * TIB


class FakeArray:
    """Just enough of __cuda_array_interface__ to reach the library."""

    def __init__(self, shape, typestr, strides=None, data=OUT):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (data, False),
                                         "strides": strides, "version": 3}


def out(rows=10, cols=4, typestr="<f4", strides=None, data=OUT):
    return FakeArray((rows, cols), typestr, strides, data)


def src(rows=5, cols=4, typestr="<f4", strides=None, data=SRC):
    return FakeArray((rows, cols), typestr, strides, data)


def index(rows=5, typestr="<i8", data=INDEX):
    return FakeArray((rows,), typestr, data=data)


def workspace(nbytes=1 << 20, data=WORKSPACE, shape=None, strides=None):
    return FakeArray(shape or (nbytes,), "|u1", strides, data)


class BindingCase(NamedTuple):
    id: str                # [a-z0-9_]: the row's anchor
    input: str             # what is bad (markdown)
    call: str              # the entry point
    run: Callable          # run(scatterptx) makes the call
    raises: str            # the exception's type
    names: Tuple[str, ...]  # its message contains one of them


def _pointers(sp, **changes):
    """scatter_add_pointers on a valid fake problem, with changes."""
    arguments = dict(out=OUT, out_rows=10, out_row_stride=4, src=SRC, src_rows=5, src_row_stride=4, cols=4,
                     dtype="f32", index=INDEX)
    arguments.update(changes)
    return sp.scatter_add_pointers(**arguments)


def _grouped(sp, **changes):
    """scatter_add_grouped on a valid fake problem in mode SEGMENTED, with changes."""
    arguments = dict(mode="segmented", workspace=workspace(), stream=0)
    arguments.update(changes)
    return sp.scatter_add_grouped(out(), index(), src(), **arguments)


BINDING_CASES = (
    # ---- what is not an array, or not one the library takes ----
    BindingCase("py_not_an_array", "`out` is a list", "scatter_add_",
                lambda sp: sp.scatter_add_([1, 2], index(), src()), "TypeError", ("__cuda_array_interface__",)),
    BindingCase("py_out_rank_1", "1-D `out`", "scatter_add_",
                lambda sp: sp.scatter_add_(FakeArray((10,), "<f4"), index(), src()), "ValueError", ("dimension",)),
    BindingCase("py_index_rank_2", "2-D `index`", "scatter_add_",
                lambda sp: sp.scatter_add_(out(), FakeArray((5, 1), "<i8", data=INDEX), src()), "ValueError",
                ("dimension",)),
    BindingCase("py_unknown_typestr", "typestr `<V2` (no dtype given)", "scatter_add_",
                lambda sp: sp.scatter_add_(out(typestr="<V2"), index(), src(typestr="<V2")), "ValueError",
                ("typestr",)),
    BindingCase("py_integer_values", "int32 `out` and `src`", "scatter_add_",
                lambda sp: sp.scatter_add_(out(typestr="<i4"), index(), src(typestr="<i4")), "ValueError",
                ("dtype",)),
    BindingCase("py_dtypes_differ", "f32 `out`, f64 `src`", "scatter_add_",
                lambda sp: sp.scatter_add_(out(), index(), src(typestr="<f8")), "ValueError", ("f64",)),
    BindingCase("py_float_index", "f32 `index`", "scatter_add_",
                lambda sp: sp.scatter_add_(out(), index(typestr="<f4"), src()), "ValueError", ("int32 or int64",)),
    BindingCase("py_columns_differ", "`out` of 4 columns, `src` of 8", "scatter_add_",
                lambda sp: sp.scatter_add_(out(), index(), src(cols=8)), "ValueError", ("columns",)),
    BindingCase("py_index_length", "4 index entries for 5 `src` rows", "scatter_add_",
                lambda sp: sp.scatter_add_(out(), index(rows=4), src()), "ValueError", ("entries",)),
    BindingCase("py_rows_not_contiguous", "`out` with a column stride of 2 elements", "scatter_add_",
                lambda sp: sp.scatter_add_(out(strides=(32, 8)), index(), src()), "ValueError", ("contiguous",)),
    BindingCase("py_stride_not_whole", "`out` row stride of 18 bytes (f32)", "scatter_add_",
                lambda sp: sp.scatter_add_(out(strides=(18, 4)), index(), src()), "ValueError",
                ("whole number",)),
    # ---- what the C ABI refuses, raised as ScatterPtxError ----
    BindingCase("py_stride_below_cols", "`out` row stride of 2 elements for 4 columns", "scatter_add_",
                lambda sp: sp.scatter_add_(out(strides=(8, 4)), index(), src(), stream=0), "ScatterPtxError",
                ("SCATTERPTX_ERROR_INVALID_ARGUMENT: out_row_stride",)),
    BindingCase("py_negative_stride", "`src` row stride of -16 bytes", "scatter_add_",
                lambda sp: sp.scatter_add_(out(), index(), src(strides=(-16, 4)), stream=0), "ScatterPtxError",
                ("src_row_stride",)),
    BindingCase("py_src_is_out", "`src` at `out`'s address", "scatter_add_",
                lambda sp: sp.scatter_add_(out(), index(), src(data=OUT), stream=0), "ScatterPtxError",
                ("overlap",)),
    BindingCase("py_misaligned", "`out` 2 bytes off its f32 alignment", "scatter_add_",
                lambda sp: sp.scatter_add_(out(data=OUT + 2), index(), src(), stream=0), "ScatterPtxError",
                ("aligned",)),
    BindingCase("py_null_out", "`out` = 0 with rows to add", "scatter_add_pointers",
                lambda sp: _pointers(sp, out=0), "ScatterPtxError", ("out is NULL",)),
    BindingCase("py_negative_rows", "`src_rows` = -1", "scatter_add_pointers",
                lambda sp: _pointers(sp, src_rows=-1), "ScatterPtxError", ("src_rows = -1",)),
    BindingCase("py_warps_per_cta_33", "`warps_per_cta` = 33", "scatter_add_grouped",
                lambda sp: _grouped(sp, warps_per_cta=33), "ScatterPtxError", ("warps_per_cta",)),
    BindingCase("py_deterministic_streaming", "`deterministic` with mode streaming", "scatter_add_grouped",
                lambda sp: _grouped(sp, mode="streaming", deterministic=True), "ScatterPtxError",
                ("deterministic",)),
    BindingCase("py_workspace_too_small", "a workspace of 16 bytes", "scatter_add_grouped",
                lambda sp: _grouped(sp, workspace=workspace(16)), "ScatterPtxError", ("workspace_bytes",)),
    BindingCase("py_workspace_misaligned", "a workspace 16 bytes off 256", "scatter_add_grouped",
                lambda sp: _grouped(sp, workspace=workspace(data=WORKSPACE + 16)), "ScatterPtxError",
                ("256-byte aligned",)),
    # ---- names and numbers ctypes cannot pass as given ----
    BindingCase("py_unknown_dtype_name", "`dtype` = \"f8\"", "scatter_add_pointers",
                lambda sp: _pointers(sp, dtype="f8"), "ValueError", ("dtype",)),
    BindingCase("py_unknown_index_type_name", "`index_type` = \"int16\"", "scatter_add_pointers",
                lambda sp: _pointers(sp, index_type="int16"), "ValueError", ("index_type",)),
    BindingCase("py_rows_past_64_bits", "`out_rows` = 2**64 + 10 (ctypes would pass 10)", "scatter_add_pointers",
                lambda sp: _pointers(sp, out_rows=(1 << 64) + 10), "ValueError", ("64 bits",)),
    BindingCase("py_address_past_64_bits", "`out` = 2**64 + its address", "scatter_add_pointers",
                lambda sp: _pointers(sp, out=(1 << 64) + OUT), "ValueError", ("64-bit address",)),
    BindingCase("py_warps_past_32_bits", "`warps_per_cta` = 2**40 (ctypes would pass 0)", "scatter_add_grouped",
                lambda sp: _grouped(sp, warps_per_cta=1 << 40), "ValueError", ("32 bits",)),
    BindingCase("py_unknown_path", "`path` = \"fast\"", "scatter_add_",
                lambda sp: sp.scatter_add_(out(), index(), src(), path="fast"), "ValueError", ("path",)),
    BindingCase("py_unknown_grouping", "`grouping` = \"always\"", "scatter_add_",
                lambda sp: sp.scatter_add_(out(), index(), src(), grouping="always"), "ValueError", ("grouping",)),
    BindingCase("py_stream_not_a_handle", "`stream` = \"0\"", "scatter_add_",
                lambda sp: sp.scatter_add_(out(), index(), src(), stream="0"), "TypeError", ("pointer",)),
    # ---- grouped execution's own arguments ----
    BindingCase("py_unknown_mode", "`mode` = \"sorted\"", "scatter_add_grouped, Plan",
                lambda sp: _grouped(sp, mode="sorted"), "ValueError", ("mode",)),
    BindingCase("py_bucketed_mode", "`mode` = \"bucketed\" (removed)", "scatter_add_grouped, Plan",
                lambda sp: _grouped(sp, mode="bucketed"), "ValueError", ("removed",)),
    BindingCase("py_no_workspace", "no `workspace` for arrays that are not torch tensors", "scatter_add_grouped",
                lambda sp: _grouped(sp, workspace=None), "ValueError", ("workspace=",)),
    BindingCase("py_workspace_not_an_array", "a `bytearray` workspace", "scatter_add_grouped",
                lambda sp: _grouped(sp, workspace=bytearray(1024)), "TypeError", ("workspace",)),
    BindingCase("py_workspace_rank_2", "a 2-D workspace", "scatter_add_grouped",
                lambda sp: _grouped(sp, workspace=workspace(shape=(1024, 1024))), "ValueError", ("1 dimension",)),
    BindingCase("py_workspace_not_contiguous", "a workspace with a stride of 2 bytes", "scatter_add_grouped",
                lambda sp: _grouped(sp, workspace=workspace(strides=(2,))), "ValueError", ("contiguous",)),
    BindingCase("py_workspace_address_past_64_bits", "a workspace at 2**64 + its address", "scatter_add_grouped",
                lambda sp: _grouped(sp, workspace=workspace(data=(1 << 64) + WORKSPACE)), "ValueError",
                ("64-bit address",)),
)


def run_binding_case(case, scatterptx):
    """(exception type name, message) of what case raised; ("", "") when nothing."""
    try:
        case.run(scatterptx)
    except Exception as error:  # noqa: BLE001 - the type is what is recorded
        return type(error).__name__, str(error)
    return "", ""


class DocumentedCase(NamedTuple):
    id: str
    input: str
    call: str
    result: str
    tests: Tuple[str, ...]  # module.Class.test in python/tests


BINDING_DOCUMENTED = (
    DocumentedCase("py_no_driver", "no CUDA driver", "every call that reaches the device",
                   "raises `ScatterPtxError` (`status` SCATTERPTX_ERROR_NO_DRIVER)",
                   ("test_binding.HostOnly.test_missing_driver_is_an_exception",
                    "test_binding.GroupedHostOnly.test_missing_driver_is_an_exception")),
    DocumentedCase("py_checked_bad_index", "an index outside `[0, out_rows)`, `check_index=True`",
                   "scatter_add_, scatter_add_grouped",
                   "raises `ScatterPtxError` (SCATTERPTX_ERROR_INDEX_OUT_OF_RANGE) after adding every valid row",
                   ("test_binding.AgainstTorch.test_checked_mode_raises_on_bad_index",
                    "test_binding.GroupedAgainstTorch.test_checked_grouped_adds_valid_rows_then_raises")),
    DocumentedCase("py_checked_plan", "an index outside `[0, out_rows)`, `Plan(..., check_index=True)` of a plan "
                   "that groups (a streaming plan raises at each execute, after adding the valid rows)", "Plan",
                   "raises `ScatterPtxError`; no plan, out untouched",
                   ("test_binding.GroupedAgainstTorch.test_checked_plan_create_raises_and_writes_nothing",)),
    DocumentedCase("py_plan_closed", "a closed plan", "Plan.execute, Plan.describe",
                   "raises `ValueError` (the plan is closed)",
                   ("test_binding.GroupedAgainstTorch.test_closed_plan_refuses_use",)),
    DocumentedCase("py_plan_other_arrays", "`out` or `src` of another shape, stride, dtype or device than at "
                   "creation", "Plan.execute", "raises `ValueError` naming both",
                   ("test_binding.GroupedAgainstTorch.test_execute_refuses_other_shapes_and_dtypes",)),
)

# What scatterptx.torch does with each bad input. "torch's error": the same
# exception type and message as out.index_add_(0, index, src) raises.
TORCH_ERROR = "raises torch's error: the same type and message as `out.index_add_(0, index, src)`"

TORCH_CASES = (
    DocumentedCase("torch_cpu_tensors", "CPU tensors (or any device but an sm_90+ GPU)", "index_add, index_add_, "
                   "weighted_index_add(_), scatter_reduce(_)",
                   "torch's own `index_add_` (of the weighted rows) or `scatter_reduce_` runs (same result), counted "
                   "in `fallback_counts()` and warned about once; invalid input gets torch's error",
                   ("test_torch_ops.CpuFallback.test_index_add_and_index_add__match_torch",
                    "test_torch_reduce.CpuFallback.test_fallbacks_are_counted_and_name_torchs_op",
                    "test_torch_ops.CpuFallback.test_fallbacks_are_counted_and_warned_about_once_per_reason",
                    "test_bad_inputs.TorchOnCpu.test_invalid_input_raises_torchs_error")),
    DocumentedCase("torch_index_dtype", "`index` of dtype float32, bool or uint8", "index_add, index_add_",
                   TORCH_ERROR,
                   ("test_bad_inputs.TorchOnCpu.test_invalid_input_raises_torchs_error",
                    "test_bad_inputs.TorchOnGpu.test_invalid_input_raises_torchs_error")),
    DocumentedCase("torch_dtypes_differ", "`out` and `src` of different dtypes", "index_add, index_add_", TORCH_ERROR,
                   ("test_bad_inputs.TorchOnCpu.test_invalid_input_raises_torchs_error",
                    "test_bad_inputs.TorchOnGpu.test_invalid_input_raises_torchs_error")),
    DocumentedCase("torch_shapes_differ", "`src` of other columns, `index` of another length, a 2-D `index`",
                   "index_add, index_add_", TORCH_ERROR,
                   ("test_bad_inputs.TorchOnCpu.test_invalid_input_raises_torchs_error",
                    "test_bad_inputs.TorchOnGpu.test_invalid_input_raises_torchs_error")),
    DocumentedCase("torch_mixed_devices", "a CUDA `out` with a CPU `src` or `index`", "index_add, index_add_",
                   TORCH_ERROR,
                   ("test_torch_ops.Gpu.test_mixed_devices_raise_torchs_error",
                    "test_bad_inputs.TorchOnGpu.test_invalid_input_raises_torchs_error")),
    DocumentedCase("torch_other_dtypes", "integer or complex `out` and `src`; 1-D or 3-D `out` and `src`",
                   "index_add, index_add_", "torch's own `index_add_` runs (same result), counted",
                   ("test_torch_ops.Gpu.test_unsupported_dtype_falls_back_and_is_counted",
                    "test_bad_inputs.TorchOnCpu.test_what_the_library_does_not_take_falls_back",
                    "test_bad_inputs.TorchOnGpu.test_what_the_library_does_not_take_falls_back")),
    DocumentedCase("torch_out_of_range", "an `index` entry outside `[0, out_rows)`", "index_add, index_add_, "
                   "scatter, weighted_index_add(_), scatter_reduce(_)",
                   "CUDA: no exception; the row is skipped (zero gradient), every valid row added, nothing else "
                   "changes; `scatterptx.take_index_error()` returns the smallest bad position. CPU: torch's error",
                   ("test_torch_ops.Gpu.test_out_of_range_rows_are_skipped_and_get_zero_gradient",
                    "test_torch_reduce.Gpu.test_out_of_range_rows_are_skipped_recorded_and_get_zero_gradient",
                    "test_torch_reduce.Autograd.test_rows_out_of_range_get_zero_gradient",
                    "test_bad_inputs.TorchOnGpu.test_out_of_range_rows_are_skipped_and_nothing_else_changes",
                    "test_bad_inputs.TorchOnCpu.test_invalid_input_raises_torchs_error")),
    DocumentedCase("torch_src_is_out", "`src` (or `index`) sharing memory with `out` (`weights` sharing it: "
                   "torch's op runs, see `torch_reduce_fallbacks`)",
                   "index_add_, weighted_index_add_, scatter_reduce_",
                   "CUDA, row-major operands: raises `ScatterPtxError` (a RuntimeError): out and src (or index) "
                   "overlap in memory. A src read in a copy, a gradient wanted, or CPU: torch's RuntimeError. "
                   "Out untouched",
                   ("test_bad_inputs.TorchOnGpu.test_src_sharing_out_is_refused",
                    "test_bad_inputs.TorchOnGpu.test_src_read_in_a_copy_sharing_out_is_refused_untouched",
                    "test_bad_inputs.TorchOnCpu.test_in_place_with_a_gradient_refuses_what_torch_refuses",
                    "test_bad_inputs.TorchOnCpu.test_invalid_input_raises_torchs_error")),
    DocumentedCase("torch_expanded_out", "an `out` whose rows share memory (`expand`)", "index_add_",
                   "raises torch's RuntimeError (more than one element of the written-to tensor refers to a single "
                   "memory location) before anything runs; out untouched",
                   ("test_bad_inputs.TorchOnGpu.test_expanded_out_is_refused_untouched",
                    "test_bad_inputs.TorchOnCpu.test_in_place_with_a_gradient_refuses_what_torch_refuses",
                    "test_bad_inputs.TorchOnCpu.test_invalid_input_raises_torchs_error")),
    DocumentedCase("torch_aliased_rows", "an `out` whose rows share elements without a stride of 0 "
                   "(`as_strided`)", "index_add, index_add_, weighted_index_add(_), scatter_reduce(_), the drop-in "
                   "switch", "torch's own op runs (it adds into each alias), counted as \"out's elements may share "
                   "memory\"",
                   ("test_torch_ops.Gpu.test_an_out_whose_rows_overlap_runs_torchs_op",
                    "test_dropin.Routing.test_index_add_outside_the_pattern_is_left_to_torch")),
    DocumentedCase("torch_inference_in_place", "an inference tensor (made under `torch.inference_mode()`) as `out` "
                   "of an in-place operator outside inference mode", "index_add_, weighted_index_add_, "
                   "scatter_reduce_",
                   "raises torch's RuntimeError (Inplace update to inference tensor outside InferenceMode) before "
                   "anything is written (torch's own op writes, then raises)",
                   ("test_bad_inputs.TorchOnCpu.test_an_inference_tensor_is_refused_in_place_outside_inference_mode",)),
    DocumentedCase("torch_leaf_in_place", "in place on a leaf that requires grad", "index_add_", TORCH_ERROR,
                   ("test_torch_ops.Autograd.test_in_place_on_a_leaf_that_requires_grad_raises_like_torch",)),
    DocumentedCase("torch_meta_shapes", "meta tensors of mismatched shapes or dtypes, a float or 2-D index "
                   "(torch.compile, export)", "index_add, index_add_",
                   "the fake implementation raises eager `index_add_`'s error (the same type and message)",
                   ("test_torch_ops.CpuFallback.test_the_fake_implementation_raises_for_bad_shapes",)),
    DocumentedCase("torch_not_a_tensor", "a list for `index`", "index_add, index_add_",
                   "raises the dispatcher's RuntimeError (expected a value of type 'Tensor')",
                   ("test_bad_inputs.TorchOnCpu.test_non_tensors_are_refused_by_the_dispatcher",)),
    DocumentedCase("torch_scatter_options", "`reduce` \"mul\", \"prod\" or \"any\", `out` with a reduce other "
                   "than a sum, `dim` other than 0, an `index` not 1-D, `src` of 3 or more dimensions", "scatter",
                   "raises NotImplementedError (those reduces; out; dim; ranks) or ValueError (an unknown reduce)",
                   ("test_torch_ops.Scatter.test_mul_and_the_other_reductions_are_not_supported",
                    "test_torch_reduce.Scatter.test_out_takes_sums_only",
                    "test_bad_inputs.TorchOnCpu.test_scatter_refuses_what_it_does_not_take")),
    DocumentedCase("torch_reduce_contract", "an unknown `reduce`; `out` or `src` not 2-D, `index` not 1-D or not "
                   "int32/int64; `src` of another dtype, columns or rows than `out`, `index`", "scatter_reduce, "
                   "scatter_reduce_", "raises RuntimeError naming what is wrong, on every device and in the fake "
                   "kernel (torch.compile, export); out untouched",
                   ("test_torch_reduce.CpuFallback.test_the_contracts_raise_alike_on_cpu_and_in_the_fake_kernels",)),
    DocumentedCase("torch_weights_contract", "`weights` not 1-D, of another length than `src`'s rows, or neither "
                   "float32 nor `src`'s dtype", "weighted_index_add, weighted_index_add_",
                   "raises RuntimeError naming what is wrong, on every device and in the fake kernel; out, index "
                   "and src get torch's `index_add_` errors",
                   ("test_torch_reduce.CpuFallback.test_the_contracts_raise_alike_on_cpu_and_in_the_fake_kernels",)),
    DocumentedCase("torch_reduce_fallbacks", "`weights` sharing memory with `out`; a reduce other than a sum with "
                   "include_self beyond 2^32 - 1 source rows or 2^32 - 2 targets", "weighted_index_add(_), "
                   "scatter_reduce(_)", "torch's own op runs (same result), counted",
                   ("test_torch_reduce.CpuFallback.test_what_only_torch_takes_falls_back_with_its_reason",)),
    DocumentedCase("torch_pre_sm90", "a CUDA tensor on a GPU below sm_90", "index_add, index_add_",
                   "torch's own `index_add_` runs, counted", ()),
)
