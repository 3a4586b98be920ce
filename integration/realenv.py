"""Helpers for the integration tests: run the installed ztsa, read its JSON."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest


def run_json(argv: list[str], env: dict[str, str] | None = None,
             cwd: str | None = None) -> tuple[int, dict[str, Any]]:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=cwd,
                          env=env if env is not None else dict(os.environ))
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"no JSON report (rc {proc.returncode}): {proc.stderr}") from None
    return proc.returncode, doc


def by_id(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in doc["results"]}


def keep_python(under: str) -> list[str]:
    """bwrap arguments that bind this interpreter (a virtual environment, its base)
    back over a tmpfs mounted on UNDER (/tmp, or /home for a venv in a user's home)."""
    keep = sorted({p for p in (sys.prefix, os.path.realpath(sys.prefix),
                              os.path.dirname(os.path.realpath(sys.executable)))
                   if p.startswith(under.rstrip("/") + "/")})
    return [a for p in keep for a in ("--ro-bind", p, p)]


def bwrap_base() -> list[str]:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        pytest.fail("bubblewrap is not installed (`apt-get install bubblewrap`)")
    return [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--tmpfs", "/tmp", *keep_python("/tmp"),
            "--unshare-user", "--unshare-pid", "--die-with-parent"]


@contextlib.contextmanager
def host_port_53() -> Iterator[None]:
    """Held while a test binds the host's 127.0.0.1:53: test processes running side by
    side (pytest-xdist's workers) take turns for it rather than skip or time out."""
    try:
        f = open("/tmp/ztsa-tests-port-53.lock", "a")  # noqa: SIM115
    except OSError:  # another user's: binding the port is root's anyway
        yield
        return
    with f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield
