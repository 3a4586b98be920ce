"""Hostile files never crash the audit or pass it: each makes the rule that reads the
file unknown, with a message naming the file, within bounded time and memory."""

from __future__ import annotations

import os
import signal

import pytest

from ztsa.engine import run
from ztsa.model import Profile, Status

# file -> the rule that must read it
READERS = {
    "package.json": "SUP004", "package-lock.json": "SUP002", "pnpm-lock.yaml": "SUP002",
    "yarn.lock": "SUP002", "bun.lock": "SUP002", "Cargo.toml": "SUP006",
    "Cargo.lock": "SUP002", "pyproject.toml": "SUP014", "uv.lock": "SUP002",
    "poetry.lock": "SUP002", "requirements.txt": "SUP012", "setup.py": "SUP013",
    ".npmrc": "SUP008", ".yarnrc.yml": "SUP008", "build.rs": "SUP009",
}
MALFORMED = {
    "package.json": '{"name": "x", "scripts": {', "package-lock.json": '{"lockfileVersion": 3,',
    "pnpm-lock.yaml": "lockfileVersion: '6.0'\npackages:\n  /a@1: {resolution: [",
    "yarn.lock": "a@1:\n version 1\n  weird\n", "bun.lock": '{"lockfileVersion": 1, "packages": {',
    "Cargo.toml": "[package\nname=", "Cargo.lock": "[[package]]\nname = ",
    "pyproject.toml": "[build-system]\nrequires = [", "uv.lock": "version = 1\n[[package]\n",
    "poetry.lock": "[[package]]\nname = 'a'\nfiles = [{", "requirements.txt": "flask[\n",
    "setup.py": "setup(name='x'", ".npmrc": None, ".yarnrc.yml": "yarnPath: [\n",
    "build.rs": None,
}


def variants():
    for name in READERS:
        if MALFORMED.get(name) is not None:
            yield name, "malformed"
        yield name, "garbage"
        yield name, "loop"
        yield name, "outside"
        yield name, "fifo"
    yield "package-lock.json", "huge"
    yield "requirements.txt", "huge"


@pytest.fixture(autouse=True)
def no_hang():
    def boom(*_):
        raise TimeoutError("the audit hung")

    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize(("name", "kind"), list(variants()))
def test_hostile_file_is_unknown(machine, name, kind, tmp_path):
    path = machine.workspace / name
    if name == "build.rs":
        machine.ws("Cargo.toml", '[package]\nname = "x"\nversion = "0.1.0"\n')
    if kind == "malformed":
        path.write_text(MALFORMED[name])
    elif kind == "garbage":
        path.write_bytes(b"\x00\xff\xfe\x9c" * 512 + os.urandom(256))
    elif kind == "loop":
        os.symlink(name, path)
    elif kind == "outside":
        outside = tmp_path / "secret"
        outside.write_text("{}")
        os.symlink(outside, path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "huge":
        with open(path, "wb") as f:
            f.truncate(200 * 1024 * 1024)  # sparse: 200 MB without using the disk
    report = run(machine.context(profile=Profile.UNTRUSTED),
                 only={f"SUP{i:03d}" for i in range(1, 18)})
    result = next(r for r in report.results if r.id == READERS[name])
    assert result.status is Status.UNKNOWN, (name, kind, result)
    assert name in result.message
    # a file no rule can read blocks wherever an attack in it would: a rule whose
    # nature is an attack cannot decide (a hygiene rule's unknown alone only warns)
    assert not report.passed, [(r.id, r.status) for r in report.results]
