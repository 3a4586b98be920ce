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
    # shutdown() waits one poll interval
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield root, server.server_address[1]
    server.shutdown()
    server.server_close()


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is required for this positive control")
    return path


def _wheel(directory: Path, name: str, version: str) -> Path:
    wheel = directory / f"{name}-{version}-py3-none-any.whl"
    files = {
        f"{name}/__init__.py": "VALUE = 42\n",
        f"{name}-{version}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\n"
                                                f"Version: {version}\n",
        f"{name}-{version}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: ztsa-test\n"
                                             "Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    with zipfile.ZipFile(wheel, "w") as z:
        for n, text in files.items():
            z.writestr(n, text)
        z.writestr(f"{name}-{version}.dist-info/RECORD",
                   "".join(f"{n},,\n" for n in files) + f"{name}-{version}.dist-info/RECORD,,\n")
    return wheel


def test_pip_install_from_a_loopback_index(run, http_root, tmp_path):
    root, port = http_root
    wheel = _wheel(tmp_path, "ztsademo", "1.0")
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


def _npm_package(root: Path, port: int, tmp_path: Path, name: str, version: str,
                 body: str) -> tuple[str, str]:
    """Publish NAME@VERSION (index.js holding `body`) on the loopback registry in root:
    its tarball and packument. Returns (tarball URL, integrity)."""
    import base64
    import hashlib

    pkg = tmp_path / "pkg" / name / "package"
    pkg.mkdir(parents=True)
    (pkg / "package.json").write_text(json.dumps({"name": name, "version": version,
                                                  "main": "index.js"}))
    (pkg / "index.js").write_text(body)
    tgz = root / f"{name}-{version}.tgz"
    with tarfile.open(tgz, "w:gz") as tar:
        tar.add(pkg, arcname="package")
    integrity = "sha512-" + base64.b64encode(hashlib.sha512(tgz.read_bytes()).digest()).decode()
    tarball = f"http://127.0.0.1:{port}/{tgz.name}"
    (root / name).write_text(json.dumps({
        "name": name, "dist-tags": {"latest": version}, "versions": {version: {
            "name": name, "version": version,
            "dist": {"tarball": tarball, "integrity": integrity}}}}))
    return tarball, integrity


def test_npm_install_from_a_loopback_registry(run, http_root, tmp_path):
    npm = _tool("npm")
    root, port = http_root
    _npm_package(root, port, tmp_path, "ztsa-demo", "1.0.0", "module.exports = 42;\n")
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


# -- the confinement's positive controls: real builds in the workspace root, with the
#    agent files protected and writes confined to the workspace --------------------------
def _open_up(path: Path) -> None:
    """Let the unprivileged case write what the test prepared as root."""
    for d, _dirs, files in os.walk(path):
        os.chmod(d, 0o777)
        for f in files:
            if not os.path.islink(os.path.join(d, f)):
                os.chmod(os.path.join(d, f), 0o666)


def test_npm_ci_in_the_workspace_from_a_loopback_registry(run, http_root, tmp_path):
    npm = _tool("npm")
    root, port = http_root
    tarball, integrity = _npm_package(root, port, tmp_path, "ztsa-ci", "2.0.0",
                                      "module.exports = 'ci';\n")
    ws = run.workspace
    (ws / "package.json").write_text(json.dumps({"name": "app", "version": "1.0.0",
                                                 "dependencies": {"ztsa-ci": "2.0.0"}}))
    (ws / "package-lock.json").write_text(json.dumps({
        "name": "app", "version": "1.0.0", "lockfileVersion": 3, "requires": True,
        "packages": {"": {"name": "app", "version": "1.0.0",
                          "dependencies": {"ztsa-ci": "2.0.0"}},
                     "node_modules/ztsa-ci": {"version": "2.0.0", "resolved": tarball,
                                              "integrity": integrity}}}))
    (ws / "CLAUDE.md").write_text("# rules\n")
    _open_up(ws)
    script = (f"HOME=$TMPDIR npm_config_cache=$TMPDIR/cache {npm} ci --no-audit --no-fund "
              f"--no-update-notifier --registry http://127.0.0.1:{port}/ && "
              "node -e \"console.log(require('ztsa-ci'))\"")
    proc, _ = run("sh", "-c", script, allow=[f"127.0.0.1:{port}"], timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "ci"
    assert (ws / "node_modules" / "ztsa-ci" / "index.js").exists()
    assert (ws / "CLAUDE.md").read_text() == "# rules\n"


def test_pip_install_from_local_wheels_into_a_venv_in_the_workspace(run):
    ws = run.workspace
    wheels = ws / "wheels"
    wheels.mkdir()
    _wheel(wheels, "ztsavenv", "1.0")
    _open_up(ws)
    script = (f"{run.python} -m venv --without-pip .venv && {run.python} -m pip --python "
              ".venv/bin/python install -q --no-index --find-links wheels "
              "--disable-pip-version-check ztsavenv && "
              ".venv/bin/python -c 'import ztsavenv; print(ztsavenv.__file__)'")
    proc, events = run("sh", "-c", script)
    assert proc.returncode == 0, proc.stderr
    installed = Path(proc.stdout.strip())
    assert installed.is_relative_to(ws / ".venv")
    assert installed.read_text() == "VALUE = 42\n"
    assert not [e for e in events if e["event"] == "connect"]


def make_vendored_crate(ws: Path) -> None:
    """A binary crate whose one dependency comes from a vendored source directory."""
    (ws / "src").mkdir()
    (ws / "Cargo.toml").write_text('[package]\nname = "app"\nversion = "0.1.0"\n'
                                   'edition = "2021"\n\n[dependencies]\nleftpad = "1.0"\n')
    (ws / "src" / "main.rs").write_text('fn main() { println!("{}", leftpad::pad("7", 3)); }\n')
    dep = ws / "vendor" / "leftpad"
    (dep / "src").mkdir(parents=True)
    (dep / "Cargo.toml").write_text('[package]\nname = "leftpad"\nversion = "1.0.0"\n'
                                    'edition = "2021"\n')
    (dep / "src" / "lib.rs").write_text(
        'pub fn pad(s: &str, n: usize) -> String { format!("{:0>1$}", s, n) }\n')
    (dep / ".cargo-checksum.json").write_text('{"files":{},"package":"' + "0" * 64 + '"}')
    (ws / ".cargo").mkdir()
    (ws / ".cargo" / "config.toml").write_text(
        '[source.crates-io]\nreplace-with = "vendored"\n\n'
        '[source.vendored]\ndirectory = "vendor"\n')


def cargo_for(run) -> tuple[str, list[str], list[tuple[str, str]]]:
    """(cargo, ztsa --env options, mounts) for the runner's user."""
    cargo = _tool("cargo")
    path, mounts = run.visible(cargo)
    # cargo runs rustc from PATH: the visible directory first
    env = ["--env", f"PATH={os.path.dirname(path)}:/usr/local/bin:/usr/bin:/bin"]
    rustup = os.environ.get("RUSTUP_HOME") or os.path.expanduser("~/.rustup")
    if os.path.isdir(rustup) and os.path.realpath(cargo).startswith(
            os.path.dirname(os.path.realpath(rustup))):
        rpath, rmounts = run.visible(rustup)
        env += ["--env", f"RUSTUP_HOME={rpath}"]
        mounts += [m for m in rmounts if m not in mounts]
    return path, env, mounts


def test_cargo_build_offline_with_a_vendored_dependency(run):
    ws = run.workspace
    make_vendored_crate(ws)
    _open_up(ws)
    cargo, env, mounts = cargo_for(run)
    proc, _ = run("sh", "-c", f"{cargo} build --offline -q && ./target/debug/app",
                  extra=env, mounts=mounts, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "007"
    assert (ws / "Cargo.lock").exists()


def test_git_commit_in_the_workspace_root(run):
    git = _tool("git")
    ws = run.workspace
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e.invalid"}
    subprocess.run([git, "init", "-q", str(ws)], check=True, env=env)
    (ws / "README").write_text("hello\n")
    subprocess.run([git, "-C", str(ws), "add", "README"], check=True, env=env)
    subprocess.run([git, "-C", str(ws), "commit", "-qm", "init"], check=True, env=env)
    _open_up(ws)
    config = (ws / ".git" / "config").read_text()
    script = ("echo more >> README && git -c safe.directory='*' -c user.name=t "
              "-c user.email=t@e.invalid commit -qam change && "
              "git -c safe.directory='*' log --oneline | wc -l")
    proc, _ = run("sh", "-c", script)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "2"
    assert (ws / ".git" / "config").read_text() == config


def test_make_j2_builds_a_c_project(run):
    gcc = _tool("gcc")
    ws = run.workspace
    for i in range(4):
        (ws / f"m{i}.c").write_text(f"int f{i}(void) {{ return {i}; }}\n")
    (ws / "main.c").write_text("int f0(void), f1(void), f2(void), f3(void);\n"
                               "int main(void) { return f0() + f1() + f2() + f3() - 6; }\n")
    (ws / "Makefile").write_text(
        f"CC={gcc}\nOBJS=main.o m0.o m1.o m2.o m3.o\n"
        "app: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n%.o: %.c\n\t$(CC) -c $<\n")
    _open_up(ws)
    make = _tool("make")
    proc, _ = run("sh", "-c", f"{make} -s -j2 && ./app && echo built", timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "built"


def test_pytest_runs_a_test_suite_in_the_workspace(run):
    ws = run.workspace
    (ws / "test_demo.py").write_text(
        "import os\n\n"
        "def test_writes_a_file(tmp_path):\n"
        "    (tmp_path / 'x').write_text('y')\n"
        "    assert (tmp_path / 'x').read_text() == 'y'\n\n"
        "def test_sees_its_workspace():\n"
        "    assert os.path.exists('test_demo.py')\n")
    _open_up(ws)
    proc, _ = run(run.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_demo.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout


def test_an_interactive_program_on_a_pty(run):
    """A program that drives another through a pseudo-terminal of its own (as expect,
    script or a test of a TUI does)."""
    code = ("import os, pty\n"
            "pid, fd = pty.fork()\n"
            "if pid == 0:\n"
            "    os.execvp('sh', ['sh', '-c', 'read x; echo got:$x; tty >/dev/null && echo tty'])\n"
            "os.write(fd, b'hello\\n')\n"
            "out = b''\n"
            "while True:\n"
            "    try: chunk = os.read(fd, 1024)\n"
            "    except OSError: break\n"
            "    if not chunk: break\n"
            "    out += chunk\n"
            "os.waitpid(pid, 0)\n"
            "print(out.decode().replace('\\r', ''))\n")
    proc, _ = run(run.python, "-c", code, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "got:hello" in proc.stdout and "\ntty" in proc.stdout, proc.stdout
