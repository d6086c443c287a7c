"""The GPUs the torch tests may run on: torch's CUDA devices of compute
capability 9.0 or newer, device 0 first ([] without torch or CUDA). The GPU
cases allocate on "cuda", device 0, so none runs unless device 0 is one:
every module asks here rather than checking a device of its own."""

import importlib.util


def sm90_devices():
    if importlib.util.find_spec("torch") is None:
        return []
    import torch

    if not torch.cuda.is_available() or torch.cuda.get_device_capability(0)[0] < 9:
        return []
    return [d for d in range(torch.cuda.device_count()) if torch.cuda.get_device_capability(d)[0] >= 9]


GPUS = sm90_devices()
NO_GPU = "needs torch with an sm_90+ GPU"
