"""Shared by tests/ and integration/: ztsa's parse cache goes to a directory of the test
session's own, never to the caller's ~/.cache."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

_dirs: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    d = tempfile.mkdtemp(prefix="ztsa-test-cache-")
    _dirs.append(d)
    os.environ["ZTSA_CACHE_DIR"] = os.path.join(d, "cache")


def pytest_unconfigure(config: pytest.Config) -> None:
    for d in _dirs:
        shutil.rmtree(d, ignore_errors=True)
