"""Shared test fixtures: a fake machine built from real files in a temporary tree."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from support import FIXTURES, unprivileged

from ztsa.context import Context
from ztsa.engine import evaluate
from ztsa.host import Host
from ztsa.model import Outcome, Profile
from ztsa.registry import load_rules

SANDBOXED_STATUS = {
    "Name": "python3",
    "Uid": "1000\t1000\t1000\t1000",
    "Gid": "1000\t1000\t1000\t1000",
    "Groups": "1000",
    "NoNewPrivs": "1",
    "Seccomp": "2",
    "Seccomp_filters": "1",
    "CapInh": "0000000000000000",
    "CapPrm": "0000000000000000",
    "CapEff": "0000000000000000",
    "CapBnd": "0000000000000000",
    "CapAmb": "0000000000000000",
}


class Machine:
    """A temporary machine: ``root`` for files, ``proc`` for /proc, an environment."""

    def __init__(self, base: Path) -> None:
        self.root = base / "root"
        self.proc = base / "proc"
        self.workspace = base / "workspace"
        for d in (self.root, self.proc, self.workspace):
            d.mkdir()
        self.environ: dict[str, str] = {"PATH": "/usr/bin:/bin", "HOME": "/home/agent"}

    def write(self, path: str, text: str | bytes = "", mode: int | None = None) -> Path:
        """Write an absolute machine path (``/proc/...`` goes under proc)."""
        real = Path(self.host().path(path))
        real.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            real.write_bytes(text)
        else:
            real.write_text(text)
        if mode is not None:
            os.chmod(real, mode)
        return real

    def ws(self, rel: str, text: str | bytes = "") -> Path:
        p = self.workspace / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(text)
        return p

    def fixture(self, name: str) -> None:
        """Copy tests/fixtures/supply/NAME into the workspace."""
        src = FIXTURES / name
        assert src.is_dir(), f"no fixture {name}"
        shutil.copytree(src, self.workspace, symlinks=True, dirs_exist_ok=True)

    def status(self, pid: str = "self", **fields: str) -> None:
        merged = {**SANDBOXED_STATUS, **fields}
        self.write(f"/proc/{pid}/status",
                   "".join(f"{k}:\t{v}\n" for k, v in merged.items()))

    def host(self) -> Host:
        return Host(root=str(self.root), proc=str(self.proc), environ=self.environ)

    def context(self, profile: Profile = Profile.UNTRUSTED,
                options: Mapping[str, object] | None = None) -> Context:
        return Context(host=self.host(), workspace=str(self.workspace), profile=profile,
                       options=dict(options or {}))

    def run(self, rule_id: str, **kw: object) -> Outcome:
        return evaluate(load_rules()[rule_id], self.context(**kw))  # type: ignore[arg-type]

    def run_unprivileged(self, rule_id: str) -> Outcome:
        """Evaluate as uid/gid 65534 in a forked child (real access checks). The fake
        machine's files must belong to another user than the one who checks: only root
        can make them so."""
        if os.geteuid() != 0:
            pytest.skip("needs root: this test's files must belong to another user than "
                        "the one who checks them")
        return unprivileged(lambda: self.run(rule_id))


@pytest.fixture
def machine() -> Iterator[Machine]:
    # world-traversable, so that run_unprivileged can reach it
    base = Path(tempfile.mkdtemp(prefix="ztsa-test-"))
    os.chmod(base, 0o755)
    try:
        yield Machine(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def unreadable(tmp_path: Path):
    """Make a path unreadable in a way that stops even root: a symlink loop."""

    def make(m: Machine, path: str) -> None:
        real = Path(m.host().path(path))
        real.parent.mkdir(parents=True, exist_ok=True)
        if real.exists() or real.is_symlink():
            real.unlink()
        os.symlink(real.name, real)  # points at itself: ELOOP for everyone

    return make
