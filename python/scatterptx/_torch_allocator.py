"""torch's caching allocator for the grouping workspaces of calls on torch tensors.

The torch operators and the binding's calls on torch tensors pass it as the
call's own allocator (scatterptx_scatter_add_with_allocator), so that the memory shows in
torch.cuda.memory_allocated and is reused by torch, and so that torch's pool
serves those calls alone: C and C++ code in the process, and arrays of other
libraries, keep the library's stream-ordered pool. A failed torch allocation
returns NULL: the library then takes the streaming paths, or raises where it
may not (grouping="no_fallback", and the reduces that run grouped only).
"""

import _thread
import ctypes
import threading

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


# Kept alive here: calls hold only its address.
_registration = None
_registration_lock = threading.Lock()


def torch_allocator():
    """The address of the allocator struct the calls pass, made once per process."""
    global _registration
    if _registration is None:
        with _registration_lock:  # one struct, whose callbacks this module keeps alive
            if _registration is None:
                _registration = Allocator(_ALLOCATE(_allocate), _RELEASE(_release), None)
    return ctypes.addressof(_registration)
