"""scatterptx.__version__: the version of CMakeLists.txt's project(), the one source.

An installed wheel carries it in _wheel_version.py (written by the wheel
build, see pyproject.toml); a source checkout reads its CMakeLists.txt.
"""

import os
import re

from ._binding import CHECKOUT_DIR


def _checkout_version():
    try:
        with open(os.path.join(CHECKOUT_DIR, "CMakeLists.txt"), encoding="utf-8") as cmake_lists:
            match = re.search(r"project\(scatterptx VERSION ([0-9.]+)", cmake_lists.read())
    except OSError:
        match = None
    return match.group(1) if match else "0+unknown"


try:
    from ._wheel_version import version as __version__
except ImportError:
    __version__ = _checkout_version()
