"""Which scatterptx the tests import.

By default this checkout's python/ goes first on sys.path: ctest's
python_binding test runs the source tree against the build's library
(SCATTERPTX_LIBRARY). With SCATTERPTX_TEST_INSTALLED=1 nothing is added and
the installed package is imported: CI runs the tests so in a fresh venv
holding the wheel, to test what a user gets.
"""

import os
import sys

CHECKOUT_PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTING_INSTALLED = os.environ.get("SCATTERPTX_TEST_INSTALLED") == "1"

if not TESTING_INSTALLED:
    sys.path.insert(0, CHECKOUT_PYTHON_DIR)

import scatterptx  # noqa: E402,F401
