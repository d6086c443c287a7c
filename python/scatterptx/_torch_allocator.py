"""The default call's grouping workspaces from torch's caching allocator.

Registered with the library the first time torch tensors reach
scatter_add_, so that the memory shows in torch.cuda.memory_allocated and is
reused by torch. A failed torch allocation returns NULL: the library then
takes the streaming paths (or raises, with grouping="no_fallback").
"""

import _thread
import ctypes
import threading

from ._binding import check, library

_ALLOCATE = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p)
_RELEASE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p)


class Allocator(ctypes.Structure):
    _fields_ = [("allocate", _ALLOCATE), ("release", _RELEASE), ("user_data", ctypes.c_void_p)]


# Nothing may escape a callback into C: ctypes would print it and hand C
# whatever its return register held. Any failure is a NULL workspace; a
# Ctrl-C that lands here is raised again in the main thread.
def _allocate(nbytes, stream, _user_data):
    try:
        import torch

        return torch.cuda.caching_allocator_alloc(nbytes, stream=stream or 0)
    except KeyboardInterrupt:
        _thread.interrupt_main()
        return None
    except BaseException:  # noqa: BLE001 - see above
        return None


def _release(pointer, _nbytes, _stream, _user_data):
    try:
        import torch

        torch.cuda.caching_allocator_delete(pointer)
    except KeyboardInterrupt:
        _thread.interrupt_main()
    except BaseException:  # noqa: BLE001 - see above; the block stays with torch
        pass


# Kept alive here: the library holds only the function pointers.
_registration = None
_registration_lock = threading.Lock()


def use_torch_allocator():
    """Registers torch's caching allocator once per process."""
    global _registration
    if _registration is not None:
        return
    with _registration_lock:  # one registration: the library keeps the callbacks this module keeps
        if _registration is not None:
            return
        registration = Allocator(_ALLOCATE(_allocate), _RELEASE(_release), None)
        check(library().scatterptx_set_allocator(ctypes.byref(registration)))
        _registration = registration
