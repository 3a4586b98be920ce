"""Integration tests run the installed `ztsa` in real environments."""

from __future__ import annotations

import shutil

import pytest


@pytest.fixture(scope="session")
def ztsa_bin() -> str:
    path = shutil.which("ztsa")
    if path is None:
        pytest.fail("the `ztsa` command is not installed: run `pip install .` first")
    return path
