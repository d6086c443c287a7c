"""The default call's grouping workspaces from torch's caching allocator.

Registered with the library the first time torch tensors reach
scatter_add_, so that the memory shows in torch.cuda.memory_allocated and is
reused by torch. A failed torch allocation returns NULL: the library then
takes the streaming paths (or raises, with grouping="no_fallback").
"""

import ctypes

from ._binding import check, library

_ALLOCATE = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p)
_RELEASE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p)


class Allocator(ctypes.Structure):
    _fields_ = [("allocate", _ALLOCATE), ("release", _RELEASE), ("user_data", ctypes.c_void_p)]


def _allocate(nbytes, stream, _user_data):
    import torch

    try:
        return torch.cuda.caching_allocator_alloc(nbytes, stream=stream or 0)
    except (RuntimeError, torch.cuda.OutOfMemoryError):
        return None


def _release(pointer, _nbytes, _stream, _user_data):
    import torch

    torch.cuda.caching_allocator_delete(pointer)


# Kept alive here: the library holds only the function pointers.
_registration = None


def use_torch_allocator():
    """Registers torch's caching allocator once per process."""
    global _registration
    if _registration is not None:
        return
    registration = Allocator(_ALLOCATE(_allocate), _RELEASE(_release), None)
    check(library().scatterptx_set_allocator(ctypes.byref(registration)))
    _registration = registration
