"""Host-only tests of the package's version and of where it finds the library.
With SCATTERPTX_TEST_INSTALLED=1 (CI, in a venv holding the wheel) they also
check that the installed package, not this checkout, is under test and that
it loads the library inside it."""

import importlib
import os
import re
import unittest
from unittest import mock

from package_under_test import CHECKOUT_PYTHON_DIR, TESTING_INSTALLED, scatterptx
from scatterptx import _binding

CHECKOUT_DIR = os.path.dirname(CHECKOUT_PYTHON_DIR)
PACKAGE_LIBRARY = os.path.join(os.path.dirname(os.path.abspath(scatterptx.__file__)), "libscatterptx.so")


def cmake_project_version():
    with open(os.path.join(CHECKOUT_DIR, "CMakeLists.txt"), encoding="utf-8") as cmake_lists:
        return re.search(r"project\(scatterptx VERSION ([0-9.]+)", cmake_lists.read()).group(1)


class VersionTest(unittest.TestCase):
    def test_version_is_the_cmake_project_version(self):
        self.assertEqual(scatterptx.__version__, cmake_project_version())


class LibraryLookupTest(unittest.TestCase):
    def test_scatterptx_library_is_the_only_candidate_when_set(self):
        with mock.patch.dict(os.environ, {"SCATTERPTX_LIBRARY": "/elsewhere/libscatterptx.so"}):
            self.assertEqual(list(_binding._candidate_paths()), ["/elsewhere/libscatterptx.so"])

    def test_package_copy_then_checkout_build_then_system_loader(self):
        with mock.patch.dict(os.environ):
            os.environ.pop("SCATTERPTX_LIBRARY", None)
            paths = list(_binding._candidate_paths())
        if TESTING_INSTALLED:
            expected = [PACKAGE_LIBRARY, "libscatterptx.so"]
        else:
            expected = [PACKAGE_LIBRARY, os.path.join(CHECKOUT_DIR, "build", "libscatterptx.so"), "libscatterptx.so"]
        self.assertEqual(paths, expected)


@unittest.skipUnless(TESTING_INSTALLED, "SCATTERPTX_TEST_INSTALLED=1 tests the installed package")
class InstalledPackageTest(unittest.TestCase):
    def test_the_installed_package_is_under_test_not_this_checkout(self):
        self.assertFalse(os.path.abspath(scatterptx.__file__).startswith(CHECKOUT_PYTHON_DIR + os.sep),
                         scatterptx.__file__)

    def test_loads_the_library_inside_the_package(self):
        self.assertNotIn("SCATTERPTX_LIBRARY", os.environ, "the installed package must find its own library")
        self.assertTrue(os.path.isfile(PACKAGE_LIBRARY) and not os.path.islink(PACKAGE_LIBRARY))
        self.assertEqual(scatterptx.library()._name, PACKAGE_LIBRARY)

    def test_version_comes_from_the_wheel(self):
        wheel_version = importlib.import_module("scatterptx._wheel_version")
        self.assertEqual(wheel_version.version, scatterptx.__version__)


if __name__ == "__main__":
    unittest.main()
