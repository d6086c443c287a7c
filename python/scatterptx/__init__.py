"""Python entry point to libscatterptx: out[index[i], :] += src[i, :] on sm_90+ GPUs.

A ctypes binding of the library's C ABI. Takes torch tensors, objects with
``__cuda_array_interface__``, or raw device pointers. torch is imported only
when torch tensors are passed in.

The library is found through ``SCATTERPTX_LIBRARY`` (a path), else beside this
package's source tree in ``build/``, else by the system loader.
"""

from ._binding import ScatterPtxError, library, prepare, take_index_error
from ._dispatch import scatter_add_, scatter_add_pointers

__all__ = [
    "ScatterPtxError",
    "library",
    "prepare",
    "scatter_add_",
    "scatter_add_pointers",
    "take_index_error",
]
