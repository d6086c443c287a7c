"""Python entry point to libscatterptx: out[index[i], :] += src[i, :] on sm_90+ GPUs.

A ctypes binding of the library's C ABI. Takes torch tensors, objects with
``__cuda_array_interface__``, or raw device pointers. torch is imported only
when torch tensors are passed in.

scatter_add_ is the library's default call: it groups the rows by target
first where that wins, else reduces every source row into out on its own
(streaming; grouping= says whether it may group). scatter_add_grouped and
Plan choose the mode themselves, and Plan keeps one index's grouping for many
executes (see include/scatterptx/scatterptx.h, "Grouped execution").

The library is the one that ``SCATTERPTX_LIBRARY`` names (a path), else the
libscatterptx.so inside this package (pip install), else the checkout's
``build/`` (source-tree use), else the system loader's.
"""

from ._binding import ScatterPtxError, library, prepare, take_index_error, trim_workspace_pool
from ._dispatch import scatter_add_, scatter_add_pointers
from ._grouped import Plan, grouped_workspace_size, scatter_add_grouped
from ._version import __version__

__all__ = [
    "Plan",
    "ScatterPtxError",
    "__version__",
    "grouped_workspace_size",
    "library",
    "prepare",
    "scatter_add_",
    "scatter_add_grouped",
    "scatter_add_pointers",
    "take_index_error",
    "trim_workspace_pool",
]
