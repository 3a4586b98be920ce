"""Test helpers importable by name (conftest modules of tests/ and integration/ clash)."""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

FIXTURES = Path(__file__).parent / "fixtures" / "supply"


def unprivileged(fn: Callable[[], T]) -> T:
    """fn() as uid/gid 65534 in a forked child when we are root (root passes access
    checks that stop everyone else); its result must pickle."""
    if os.geteuid() != 0:
        return fn()
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.close(rfd)
            os.setgroups([])
            os.setresgid(65534, 65534, 65534)
            os.setresuid(65534, 65534, 65534)
            data = pickle.dumps(fn())
            with os.fdopen(wfd, "wb") as w:
                w.write(data)
        finally:
            os._exit(0)
    os.close(wfd)
    with os.fdopen(rfd, "rb") as r:
        data = r.read()
    os.waitpid(pid, 0)
    return pickle.loads(data)  # type: ignore[no-any-return]
