"""ctypes declarations of include/scatterptx/scatterptx.h and status handling."""

import ctypes
import importlib.resources
import os
import sys

SUCCESS = 0
STATUS_NAMES = {
    0: "SCATTERPTX_SUCCESS",
    1: "SCATTERPTX_ERROR_INVALID_ARGUMENT",
    2: "SCATTERPTX_ERROR_NO_DRIVER",
    3: "SCATTERPTX_ERROR_NO_CONTEXT",
    4: "SCATTERPTX_ERROR_UNSUPPORTED_DEVICE",
    5: "SCATTERPTX_ERROR_INDEX_OUT_OF_RANGE",
    6: "SCATTERPTX_ERROR_DRIVER",
    7: "SCATTERPTX_ERROR_OUT_OF_MEMORY",
}
DTYPES = {"f32": 0, "f16": 1, "bf16": 2, "f64": 3}
INDEX_TYPES = {"int32": 0, "int64": 1}
INDEX_CHECKS = {"record": 0, "checked": 1}
PATHS = {"auto": 0, "tma": 1, "red": 2, "private": 3}
GROUPINGS = {"auto": 0, "off": 1, "no_fallback": 2}
MODES = {"auto": 0, "streaming": 1, "segmented": 2}
REDUCES = {"sum": 0, "mean": 1, "amax": 2, "amin": 3}


class ScatterPtxError(RuntimeError):
    """A non-success status; ``status`` is its name, the text the library's message."""

    def __init__(self, status, message):
        self.status = STATUS_NAMES.get(status, f"status {status}")
        self.code = status
        super().__init__(f"{self.status}: {message}")


class Args(ctypes.Structure):
    _fields_ = [
        ("out", ctypes.c_void_p),
        ("out_rows", ctypes.c_int64),
        ("out_row_stride", ctypes.c_int64),
        ("src", ctypes.c_void_p),
        ("src_rows", ctypes.c_int64),
        ("src_row_stride", ctypes.c_int64),
        ("cols", ctypes.c_int64),
        ("dtype", ctypes.c_int),
        ("index", ctypes.c_void_p),
        ("index_type", ctypes.c_int),
        ("index_check", ctypes.c_int),
        ("path", ctypes.c_int),
        ("schedule", ctypes.c_void_p),
        ("grouping", ctypes.c_int),
        # Appended to the C struct later; scatterptx_scatter_add_args_init
        # writes them, so the struct must have room for them.
        ("weights", ctypes.c_void_p),
        ("weights_dtype", ctypes.c_int),
        ("reduce", ctypes.c_int),
        ("include_self", ctypes.c_int),
    ]


class GroupOptions(ctypes.Structure):
    _fields_ = [
        ("mode", ctypes.c_int),
        ("deterministic", ctypes.c_int),
        ("warps_per_cta", ctypes.c_uint32),
    ]


LIBRARY_NAME = "libscatterptx.so"
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
# The checkout this package sits in when it is used from the source tree
# (python/scatterptx/ under the repository root).
CHECKOUT_DIR = os.path.dirname(os.path.dirname(PACKAGE_DIR))


def _candidate_paths():
    """Where the library is looked for, in order: SCATTERPTX_LIBRARY alone when
    set; else the copy inside this package (an installed wheel), this
    checkout's build/ (source-tree use), and the system loader's search."""
    explicit = os.environ.get("SCATTERPTX_LIBRARY")
    if explicit:
        yield explicit
        return
    # Through importlib.resources rather than PACKAGE_DIR: in an editable
    # install (pip install -e .) the sources stay here and the built library
    # lies in site-packages/scatterptx/, which only the resource view joins.
    yield str(importlib.resources.files(__package__) / LIBRARY_NAME)
    if os.path.isfile(os.path.join(CHECKOUT_DIR, "CMakeLists.txt")):
        yield os.path.join(CHECKOUT_DIR, "build", LIBRARY_NAME)
    yield LIBRARY_NAME


def _load():
    errors = []
    for path in _candidate_paths():
        try:
            lib = ctypes.CDLL(path)
            break
        except OSError as error:
            errors.append(f"{path}: {error}")
    else:
        raise OSError("cannot load libscatterptx (pip install the package, build this checkout with "
                      "`make`, or set SCATTERPTX_LIBRARY to the library's path); tried "
                      + "; ".join(errors))
    lib.scatterptx_scatter_add_args_init.argtypes = [ctypes.POINTER(Args)]
    lib.scatterptx_scatter_add_args_init.restype = None
    lib.scatterptx_scatter_add.argtypes = [ctypes.POINTER(Args), ctypes.c_void_p]
    lib.scatterptx_scatter_add.restype = ctypes.c_int
    lib.scatterptx_describe_plan.argtypes = [ctypes.POINTER(Args), ctypes.c_char_p, ctypes.c_size_t]
    lib.scatterptx_describe_plan.restype = ctypes.c_int
    lib.scatterptx_prepare.argtypes = []
    lib.scatterptx_prepare.restype = ctypes.c_int
    lib.scatterptx_take_index_error.argtypes = [ctypes.POINTER(ctypes.c_int64)]
    lib.scatterptx_take_index_error.restype = ctypes.c_int
    lib.scatterptx_last_error_message.argtypes = []
    lib.scatterptx_last_error_message.restype = ctypes.c_char_p
    lib.scatterptx_trim_workspace_pool.argtypes = []
    lib.scatterptx_trim_workspace_pool.restype = ctypes.c_int
    lib.scatterptx_set_allocator.argtypes = [ctypes.c_void_p]
    lib.scatterptx_set_allocator.restype = ctypes.c_int
    lib.scatterptx_scatter_add_with_allocator.argtypes = [ctypes.POINTER(Args), ctypes.c_void_p, ctypes.c_void_p]
    lib.scatterptx_scatter_add_with_allocator.restype = ctypes.c_int
    _declare_grouped(lib)
    return lib


def _declare_grouped(lib):
    """The grouped-execution entry points; a plan is an opaque pointer."""
    args, options, plan = ctypes.POINTER(Args), ctypes.POINTER(GroupOptions), ctypes.c_void_p
    lib.scatterptx_group_options_init.argtypes = [options]
    lib.scatterptx_group_options_init.restype = None
    lib.scatterptx_plan_workspace_size.argtypes = [args, options, ctypes.POINTER(ctypes.c_size_t)]
    lib.scatterptx_plan_workspace_size.restype = ctypes.c_int
    lib.scatterptx_plan_create.argtypes = [args, options, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                                           ctypes.POINTER(plan)]
    lib.scatterptx_plan_create.restype = ctypes.c_int
    lib.scatterptx_plan_execute.argtypes = [plan, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    lib.scatterptx_plan_execute.restype = ctypes.c_int
    lib.scatterptx_plan_destroy.argtypes = [plan]
    lib.scatterptx_plan_destroy.restype = ctypes.c_int
    lib.scatterptx_plan_describe.argtypes = [plan, ctypes.c_char_p, ctypes.c_size_t]
    lib.scatterptx_plan_describe.restype = ctypes.c_int
    lib.scatterptx_scatter_add_grouped.argtypes = [args, options, ctypes.c_void_p, ctypes.c_size_t,
                                                   ctypes.c_void_p]
    lib.scatterptx_scatter_add_grouped.restype = ctypes.c_int


_library = None


def library():
    """The loaded shared library (loaded on first use)."""
    global _library
    if _library is None:
        _library = _load()
    return _library


def check(status):
    if status != SUCCESS:
        message = library().scatterptx_last_error_message().decode("utf-8", "replace")
        raise ScatterPtxError(status, message)


def prepare():
    """Loads the kernels in the current CUDA context (needed before graph
    capture). Where torch has started CUDA, the torch operators then run the
    library on torch's current device inside a capture too."""
    check(library().scatterptx_prepare())
    note_torch_device_ready(None)


def trim_workspace_pool():
    """Gives back to the device the memory the library's own workspace pool
    keeps for reuse in the current CUDA context. Calls on raw pointers take
    their grouping workspaces from that pool; calls on torch tensors take them
    from torch's cache, which torch.cuda.empty_cache() trims."""
    check(library().scatterptx_trim_workspace_pool())


def note_torch_device_ready(device_index):
    """Tells the torch operators that the library is ready on a torch device
    (None: torch's current one), so that their calls there inside a CUDA graph
    capture run the library. Nothing where torch is not imported or has not
    started CUDA."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_initialized():  # torch's CUDA unused: nothing of torch's to ready
        return
    from . import _torch_call  # the operators' record; torch is already imported

    _torch_call.note_prepared(torch.cuda.current_device() if device_index is None else device_index)


def take_index_error():
    """Synchronises the current CUDA context, then returns and clears the smallest
    source position with an out-of-range index in a RECORD-mode call since the
    last take, or -1."""
    position = ctypes.c_int64(-1)
    check(library().scatterptx_take_index_error(ctypes.byref(position)))
    return position.value
