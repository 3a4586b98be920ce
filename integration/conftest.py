"""Integration tests run the installed `ztsa` in real environments."""

from __future__ import annotations

import os
import shutil
import sys

import pytest


@pytest.fixture(scope="session")
def ztsa_bin() -> str:
    # the command beside this interpreter, as installed (a pyenv shim would be a bash
    # script that finds it)
    beside = os.path.join(os.path.dirname(sys.executable), "ztsa")
    path = beside if os.access(beside, os.X_OK) else shutil.which("ztsa")
    if path is None:
        pytest.fail("the `ztsa` command is not installed: run `pip install .` first")
    return path
