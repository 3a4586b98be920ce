"""Shared by tests/ and integration/: ztsa's parse cache goes to a directory of the test
session's own, never to the caller's ~/.cache; and the tests, which import ztsa from
this checkout, find the native module that `pip install .` built from it."""

from __future__ import annotations

import glob
import os
import shutil
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.abspath(__file__))


def _installed_native() -> None:
    """The checkout has no compiled ztsa._native (setuptools builds it into the
    installed copy): let the checkout's package find the installed one."""
    import ztsa

    if glob.glob(os.path.join(ROOT, "ztsa", "_native*.so")):
        return
    for entry in sys.path:
        where = os.path.join(os.path.abspath(entry or "."), "ztsa")
        if os.path.dirname(where) != ROOT and glob.glob(os.path.join(where, "_native*.so")):
            ztsa.__path__.append(where)
            return


_installed_native()

_dirs: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    d = tempfile.mkdtemp(prefix="ztsa-test-cache-")
    _dirs.append(d)
    os.environ["ZTSA_CACHE_DIR"] = os.path.join(d, "cache")


def pytest_unconfigure(config: pytest.Config) -> None:
    for d in _dirs:
        shutil.rmtree(d, ignore_errors=True)
