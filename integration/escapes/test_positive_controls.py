"""Positive controls: real tools work normally under ztsa exec against loopback servers
(a PyPI-style index, a git HTTP remote, an npm registry), and reach nothing else."""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import subprocess
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def http_root(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    root = tmp_path / "srv"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a, **k: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield root, server.server_address[1]
    server.shutdown()
    server.server_close()


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is required for this positive control")
    return path


def test_pip_install_from_a_loopback_index(run, http_root, tmp_path):
    root, port = http_root
    wheel = tmp_path / "ztsademo-1.0-py3-none-any.whl"
    files = {
        "ztsademo/__init__.py": "VALUE = 42\n",
        "ztsademo-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: ztsademo\n"
                                           "Version: 1.0\n",
        "ztsademo-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: ztsa-test\n"
                                        "Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    with zipfile.ZipFile(wheel, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
        z.writestr("ztsademo-1.0.dist-info/RECORD",
                   "".join(f"{n},,\n" for n in files) + "ztsademo-1.0.dist-info/RECORD,,\n")
    (root / "simple" / "ztsademo").mkdir(parents=True)
    shutil.copy(wheel, root / "simple" / "ztsademo" / wheel.name)
    (root / "simple" / "ztsademo" / "index.html").write_text(
        f'<a href="{wheel.name}">{wheel.name}</a>\n')
    target = run.workspace / "site"
    proc, events = run(run.python, "-m", "pip", "install", "--no-cache-dir", "-q",
                       "--disable-pip-version-check", "--no-deps", "--isolated",
                       "--index-url", f"http://127.0.0.1:{port}/simple", "--target",
                       str(target), "ztsademo", allow=[f"127.0.0.1:{port}"])
    assert proc.returncode == 0, proc.stderr
    assert (target / "ztsademo" / "__init__.py").read_text() == "VALUE = 42\n"
    connects = [e for e in events if e["event"] == "connect"]
    assert connects and all(e["decision"] == "allow" for e in connects)


def test_git_clone_and_commit_against_a_loopback_remote(run, http_root, tmp_path):
    git = _tool("git")
    root, port = http_root
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e.invalid"}
    work = tmp_path / "origin"
    subprocess.run([git, "init", "-q", str(work)], check=True, env=env)
    (work / "README").write_text("hello\n")
    subprocess.run([git, "-C", str(work), "add", "."], check=True, env=env)
    subprocess.run([git, "-C", str(work), "commit", "-qm", "init"], check=True, env=env)
    subprocess.run([git, "clone", "-q", "--bare", str(work), str(root / "repo.git")],
                   check=True, env=env)
    subprocess.run([git, "-C", str(root / "repo.git"), "update-server-info"], check=True)
    clone = run.workspace / "clone"
    script = (f"set -e; git clone -q http://127.0.0.1:{port}/repo.git {clone}; "
              f"cd {clone}; echo more >> README; "
              "git -c user.name=t -c user.email=t@e.invalid commit -qam change; "
              "git log --oneline | wc -l")
    proc, _ = run("sh", "-c", script, allow=[f"127.0.0.1:{port}"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "2"
    assert (clone / "README").read_text() == "hello\nmore\n"


def test_npm_install_from_a_loopback_registry(run, http_root, tmp_path):
    npm = _tool("npm")
    root, port = http_root
    pkg = tmp_path / "pkg" / "package"
    pkg.mkdir(parents=True)
    (pkg / "package.json").write_text(json.dumps({"name": "ztsa-demo", "version": "1.0.0",
                                                  "main": "index.js"}))
    (pkg / "index.js").write_text("module.exports = 42;\n")
    tgz = root / "ztsa-demo-1.0.0.tgz"
    with tarfile.open(tgz, "w:gz") as tar:
        tar.add(pkg, arcname="package")
    import base64
    import hashlib

    integrity = "sha512-" + base64.b64encode(hashlib.sha512(tgz.read_bytes()).digest()).decode()
    packument = {"name": "ztsa-demo", "dist-tags": {"latest": "1.0.0"}, "versions": {
        "1.0.0": {"name": "ztsa-demo", "version": "1.0.0", "dist": {
            "tarball": f"http://127.0.0.1:{port}/ztsa-demo-1.0.0.tgz",
            "integrity": integrity}}}}
    (root / "ztsa-demo").write_text(json.dumps(packument))
    project = run.workspace / "app"
    project.mkdir()
    os.chmod(project, 0o777)
    (project / "package.json").write_text(json.dumps({"name": "app", "version": "1.0.0",
                                                      "dependencies": {"ztsa-demo": "1.0.0"}}))
    home = run.workspace / "home"
    home.mkdir()
    os.chmod(home, 0o777)
    script = (f"cd {project} && HOME={home} npm_config_cache={home}/cache "
              f"{npm} install --no-audit --no-fund --no-update-notifier "
              f"--registry http://127.0.0.1:{port}/ && "
              "node -e \"console.log(require('ztsa-demo'))\"")
    proc, events = run("sh", "-c", script, allow=[f"127.0.0.1:{port}"], timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "42"
    assert any(e["event"] == "exec" and e["argv"][:1] == ["node"] for e in events)
