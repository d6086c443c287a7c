"""Grouped execution: a Plan groups one index by target once and is executed
many times on new out and src values; scatter_add_grouped builds and executes
one in a single stream-ordered call."""

import ctypes

from ._arrays import is_torch_tensor, on_tensor_device, read_problem, torch_stream, view, workspace_view
from ._binding import MODES, GroupOptions, check, library
from ._dispatch import check_address, note_kernels_loaded, problem_args

_DESCRIBE_BYTES = 4096


def _options(mode, deterministic, warps_per_cta):
    if mode == "bucketed":
        raise ValueError("mode 'bucketed' was removed: it was slower than 'segmented' on every measured "
                         "shape; use 'segmented' or 'auto'")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if not 0 <= warps_per_cta < 1 << 32:  # ctypes would wrap it into the u32 silently
        raise ValueError(f"warps_per_cta = {warps_per_cta} does not fit in 32 bits")
    options = GroupOptions()
    library().scatterptx_group_options_init(ctypes.byref(options))
    options.mode = MODES[mode]
    options.deterministic = 1 if deterministic else 0
    options.warps_per_cta = warps_per_cta
    return options


def _workspace_size(args, options):
    size = ctypes.c_size_t(0)
    check(library().scatterptx_plan_workspace_size(ctypes.byref(args), ctypes.byref(options),
                                                   ctypes.byref(size)))
    return size.value


def _stream(out, stream):
    if stream is not None:
        return stream
    return torch_stream(out) if is_torch_tensor(out) else 0


def _temporary_workspace(out, nbytes, stream):
    """A torch uint8 buffer for one stream-ordered call on stream: allocated
    on that stream, so that the caching allocator orders both its reuse of
    the block before and its next hand-out after by that stream's work."""
    import torch

    if stream == torch_stream(out):
        return torch.empty(nbytes, dtype=torch.uint8, device=out.device)
    with torch.cuda.stream(torch.cuda.ExternalStream(stream, device=out.device)):
        return torch.empty(nbytes, dtype=torch.uint8, device=out.device)


def grouped_workspace_size(out, index, src, *, mode="auto", deterministic=False, warps_per_cta=0,
                           dtype=None):
    """Bytes of device workspace a Plan or scatter_add_grouped for these arrays
    needs (0 for mode="streaming"). Only their shapes, strides and types are read."""
    problem = read_problem(out, index, src, dtype)
    return _workspace_size(problem_args(problem), _options(mode, deterministic, warps_per_cta))


def scatter_add_grouped(out, index, src, *, mode="auto", deterministic=False, workspace=None,
                        stream=None, check_index=False, warps_per_cta=0, dtype=None):
    """In place, like ``out.index_add_(0, index, src)``, by grouping the rows by
    target first; returns out.

    mode: "auto" (the planner picks), "streaming" (no grouping: what
    scatter_add_ runs with grouping="off"),
    or "segmented" (rows grouped by target, each target's sum added once).
    deterministic=True: bitwise reproducible results (selects segmented;
    refused with streaming). workspace: a contiguous device buffer of at least
    grouped_workspace_size() bytes, 256-byte aligned; when None, torch inputs
    get one allocated here for this call (the library itself never allocates
    on this path), other arrays must pass one. stream, check_index and dtype
    as for scatter_add_; check_index=True synchronises.
    """
    problem = read_problem(out, index, src, dtype)
    options = _options(mode, deterministic, warps_per_cta)
    args = problem_args(problem, check_index)
    stream = _stream(out, stream)
    if workspace is None:
        needed = _workspace_size(args, options)
        if needed and not is_torch_tensor(out):
            raise ValueError(f"pass workspace=: {needed} bytes of device memory, 256-byte aligned "
                             "(only torch inputs get one allocated)")
        workspace = _temporary_workspace(out, needed, stream) if needed else None
    pointer, nbytes = (None, 0) if workspace is None else workspace_view(workspace)
    check_address("workspace", pointer or 0)
    check(on_tensor_device(out, lambda: library().scatterptx_scatter_add_grouped(
        ctypes.byref(args), ctypes.byref(options), pointer, nbytes, ctypes.c_void_p(stream or None))))
    note_kernels_loaded(out, problem)
    return out


class Plan:
    """The grouping of one index by target, for running
    ``out.index_add_(0, index, src)`` many times on new out and src values.

    out and src give the shapes, row strides and dtype every execute must
    have, and the alignment it must keep; nothing is written to out. A
    grouped plan reads the index once, here; a streaming one (mode
    "streaming", or AUTO's choice) at every execute, so the plan keeps it
    until close: change its values and a streaming plan sees them. mode,
    deterministic and warps_per_cta as for scatter_add_grouped; torch
    tensors' plans are made and executed on their own device, whatever the
    current one is. workspace: None to have the plan allocate its own, else
    a contiguous device buffer of at least workspace_bytes, 256-byte
    aligned, that the plan keeps alive until close. Creating a plan that
    groups synchronises stream (torch's current stream by default), and with
    check_index=True raises ScatterPtxError there for an out-of-range index,
    making no plan; a streaming plan is made without either, and with
    check_index=True each execute raises after adding the valid rows.
    Otherwise every execute records such an index (take_index_error), as
    scatter_add_ does.

    close(), the end of a ``with`` block or garbage collection frees the plan;
    with torch inputs it first waits for the device, so that no execute still
    uses the workspace.
    """

    def __init__(self, out, index, src, *, mode="auto", deterministic=False, workspace=None,
                 stream=None, check_index=False, warps_per_cta=0, dtype=None):
        self._handle = None  # first: a plan whose creation failed has nothing to free
        self._executed = False
        self._problem = read_problem(out, index, src, dtype)
        self._device = out.device if is_torch_tensor(out) else None
        options = _options(mode, deterministic, warps_per_cta)
        args = problem_args(self._problem, check_index)
        self.workspace_bytes = _workspace_size(args, options)
        pointer, nbytes = (None, 0) if workspace is None else workspace_view(workspace)
        check_address("workspace", pointer or 0)
        handle = ctypes.c_void_p()
        stream = _stream(out, stream)
        check(on_tensor_device(out, lambda: library().scatterptx_plan_create(
            ctypes.byref(args), ctypes.byref(options), pointer, nbytes, ctypes.c_void_p(stream or None),
            ctypes.byref(handle))))
        self._handle = handle
        note_kernels_loaded(out, self._problem)
        self._workspace = workspace  # the plan's grouping lives in it until close
        self._index = index  # a streaming plan reads it at every execute

    def execute(self, out, src, *, stream=None, dtype=None):
        """out[index[i], :] += src[i, :] with the plan's index; returns out.

        Stream-ordered on stream (torch's current stream by default), no
        allocation, no synchronisation. Executes share the plan's workspace:
        order executes on different streams yourself, one at a time."""
        handle = self._open_handle()
        p = self._problem
        out_ptr = self._matching_view(out, "out", p.out_rows, p.out_row_stride, dtype)
        src_ptr = self._matching_view(src, "src", p.src_rows, p.src_row_stride, dtype)
        stream = _stream(out, stream)
        check(on_tensor_device(out, lambda: library().scatterptx_plan_execute(handle, out_ptr, src_ptr,
                                                                             ctypes.c_void_p(stream or None))))
        self._executed = True
        return out

    def describe(self):
        """The library's text for the plan ("mode=segmented ...")."""
        buffer = ctypes.create_string_buffer(_DESCRIBE_BYTES)
        check(library().scatterptx_plan_describe(self._open_handle(), buffer, len(buffer)))
        return buffer.value.decode("utf-8", "replace")

    def close(self):
        """Frees the plan and what it allocated. A second call does nothing."""
        if self._handle is None:
            return
        if self._executed and self._device is not None:
            import torch

            # Destroy must not free a workspace in use; should this raise, the
            # plan stays open for a later close.
            torch.cuda.synchronize(self._device)
        handle, self._handle = self._handle, None
        self._workspace = self._index = None
        check(library().scatterptx_plan_destroy(handle))

    @property
    def closed(self):
        return self._handle is None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter exit torch or the library may be gone
            pass

    def _open_handle(self):
        if self._handle is None:
            raise ValueError("the plan is closed")
        return self._handle

    def _matching_view(self, array, what, rows, row_stride, dtype):
        """array's pointer, once its shape, row stride, dtype and device are the plan's."""
        p = self._problem
        pointer, shape, stride, name = view(array, what, 2, dtype)
        if shape != (rows, p.cols) or stride != row_stride:
            raise ValueError(f"{what} is {shape[0]}x{shape[1]} with row stride {stride}; the plan was made "
                             f"for {rows}x{p.cols} with row stride {row_stride}")
        if name != p.dtype:
            raise ValueError(f"{what} is {name}; the plan was made for {p.dtype}")
        if self._device is not None and is_torch_tensor(array) and array.device != self._device:
            raise ValueError(f"{what} is on {array.device}; the plan was made on {self._device}")
        return check_address(what, pointer)
