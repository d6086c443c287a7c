"""The GPUs the torch tests may run on: torch's CUDA devices of compute
capability 9.0 or newer ([] without torch or CUDA)."""

import importlib.util


def sm90_devices():
    if importlib.util.find_spec("torch") is None:
        return []
    import torch

    if not torch.cuda.is_available():
        return []
    return [d for d in range(torch.cuda.device_count()) if torch.cuda.get_device_capability(d)[0] >= 9]


GPUS = sm90_devices()
NO_GPU = "needs torch with an sm_90+ GPU"
