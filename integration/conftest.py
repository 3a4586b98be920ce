"""Integration tests run the installed `ztsa` in real environments."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BUILD_TIMEOUT = 900


@pytest.fixture(scope="session")
def ztsa_bin() -> str:
    # the command beside this interpreter, as installed (a pyenv shim would be a bash
    # script that finds it)
    beside = os.path.join(os.path.dirname(sys.executable), "ztsa")
    path = beside if os.access(beside, os.X_OK) else shutil.which("ztsa")
    if path is None:
        pytest.fail("the `ztsa` command is not installed: run `pip install .` first")
    return path


# Run by `python -m build` in place of its own start: it says which temporary
# directories it makes, among them the isolated build environment whose interpreter an
# older launcher named.
BUILD = """\
import runpy, sys, tempfile
made = tempfile.mkdtemp
def mkdtemp(*args, **kwargs):
    path = made(*args, **kwargs)
    sys.stderr.write("ztsa-test made " + path + "\\n")
    return path
tempfile.mkdtemp = mkdtemp
sys.argv[0] = "build"
runpy.run_module("build", run_name="__main__", alter_sys=True)
"""


@dataclass(frozen=True)
class Built:
    wheel: Path
    build_paths: list[str]  # the build machine's: the source tree, the temporary files
    build_pythons: list[Path]  # the build environment's interpreter, by each name


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """A wheel of this checkout, built once as a release is: `python -m build --wheel`
    (its isolated environment, under a TMPDIR of its own), from a copy of the tree
    whose path is this build's own; `pip wheel` where `build` is not installed. The
    launcher's tests and the walkthrough's installs share it (one build per session)."""
    root = tmp_path_factory.mktemp("wheel-build")
    src, tmp, dist = root / "source-tree", root / "tmp", root / "dist"
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(
        ".git", "build", "dist", "*.so", "*.egg-info", "__pycache__", ".*_cache",
        ".hypothesis", ".venv"))
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    if importlib.util.find_spec("build") is not None:
        argv = [sys.executable, "-c", BUILD, "--wheel", "--outdir", str(dist), str(src)]
    else:
        argv = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(dist), str(src)]
    proc = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          env=env, cwd=root, timeout=BUILD_TIMEOUT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    made = re.findall(r"^ztsa-test made (.*)$", proc.stderr, re.MULTILINE)
    envs = [Path(p) for p in made if os.path.basename(p).startswith("build-env-")]
    wheel = next(dist.glob("ztsa-*.whl"))
    return Built(wheel, [str(src), str(tmp)],
                 [e / "bin" / name for e in envs for name in ("python", "python3")])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With pytest-xdist's workers (`-n 2 --dist loadfile`), the files that take longest
    start first and the many short unit-test files fill the end: integration/'s own
    files (wheel builds, installs from the registries, the walkthrough), then the escape
    suite, then tests/. Each file's own order stays as it is; a run in one process
    keeps the order as collected."""
    if not getattr(config.option, "numprocesses", None):
        return
    here = Path(__file__).resolve().parent

    def rank(item: pytest.Item) -> int:
        path = Path(str(item.path)).resolve()
        if path.parent == here:
            return 0
        return 1 if here in path.parents else 2

    items.sort(key=rank)  # stable: the order within each rank is kept
