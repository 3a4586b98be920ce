"""Nothing the tree leaves in the workspace's bytecode caches or virtual environments
runs later, outside the sandbox (issue #44). Each test plants inside, then runs the
real interpreter outside after ztsa has exited (`python -c 'import app'`, the venv's
own python) and judges one thing: whether the planted code ran (a marker file it
would create). A control shows the forged bytecode does run where ztsa is absent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_git_persistence import open_up
from test_positive_controls import _wheel

RUN_MODES = ("root", "user", "nouserns")
EXIT_UNCLEAN = 122  # ztsa.sandbox.run.EXIT_UNCLEAN
SITE = f".venv/lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages"
APP = "VALUE = 1\n" + "# an ordinary module, as the person reviewed it\n" * 8
# run in the tree: a pyc of other source written as app.py's, with app.py's own mtime
# and size in its header (the source padded to that size, its times set to app.py's),
# so that app.py is unchanged and the importer takes the pyc as up to date
FORGE = """
import importlib.util, os, py_compile, sys
marker = sys.argv[1]
st = os.stat("app.py")
evil = f"open({marker!r}, 'w').close()\\nVALUE = 2\\n"
evil += "#" * (st.st_size - len(evil) - 1) + "\\n"
with open("forged_src.py", "w") as f:
    f.write(evil)
os.utime("forged_src.py", ns=(st.st_atime_ns, st.st_mtime_ns))
cfile = importlib.util.cache_from_source("app.py")
py_compile.compile("forged_src.py", cfile=cfile, doraise=True,
                   invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)
os.remove("forged_src.py")
if len(sys.argv) > 2:
    os.chmod(os.path.dirname(cfile), 0o555)
"""


def outside(*argv: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The person's interpreter after the run: no sandbox, an ordinary environment."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd)}
    return subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=60)


def marker_in(tmp_path: Path) -> Path:
    os.chmod(tmp_path, 0o777)
    return tmp_path / "ran"


def app(ws: Path) -> os.stat_result:
    (ws / "app.py").write_text(APP)
    return os.stat(ws / "app.py")


def venv(ws: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(ws / ".venv")],
                   check=True, capture_output=True, timeout=120)
    return ws / SITE


def schema_valid(events: list[dict[str, object]]) -> None:
    import jsonschema

    schema = json.loads((Path(__file__).parents[2] / "docs" / "audit-schema.json").read_text())
    for e in events:
        jsonschema.validate(e, schema)


def test_control_the_forged_pyc_runs_where_ztsa_is_absent(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    marker = marker_in(tmp_path)
    before = app(ws)
    subprocess.run([sys.executable, "-c", FORGE, str(marker)], cwd=ws, check=True,
                   timeout=60)
    assert (ws / "app.py").read_text() == APP
    assert os.stat(ws / "app.py").st_mtime_ns == before.st_mtime_ns
    got = outside(sys.executable, "-c", "import app; print(app.VALUE)", cwd=ws)
    assert got.stdout.strip() == "2", got.stderr
    assert marker.exists(), "the control failed: the forged pyc would not be loaded"


@pytest.mark.parametrize("locked", [False, True], ids=["open", "read-only-dir"])
def test_a_forged_pyc_with_the_sources_mtime_and_size_is_removed(run, tmp_path, locked):
    ws = run.workspace
    marker = marker_in(tmp_path)
    app(ws)
    (ws / "other.py").write_text("VALUE = 3\n")
    other = ws / "__pycache__" / f"other.{sys.implementation.cache_tag}.pyc"
    if not locked:
        # the person's own caches, from before the run: the tree overwrites app's, and
        # leaves other's alone, which stays
        outside(sys.executable, "-c", "import app, other", cwd=ws)
    open_up(ws)
    kept = os.stat(other) if not locked else None
    proc, events = run(run.python, "-c", FORGE, str(marker), *(["lock"] if locked else []))
    assert proc.returncode == 0, proc.stderr
    assert "could not" not in proc.stderr, proc.stderr
    assert not marker.exists()  # nothing imported app inside
    got = outside(sys.executable, "-c", "import app; print(app.VALUE)", cwd=ws)
    assert got.stdout.strip() == "1", got.stderr
    assert not marker.exists(), "the forged bytecode ran outside the sandbox"
    if kept is not None:
        now = os.stat(other)
        assert (now.st_ino, now.st_ctime_ns) == (kept.st_ino, kept.st_ctime_ns)
    if run.log:
        schema_valid(events)
        removed = [e for e in events if e["event"] == "bytecode"]
        assert removed and removed[0]["paths"] == [
            f"__pycache__/app.{sys.implementation.cache_tag}.pyc"], removed


def test_a_pyc_that_cannot_be_removed_is_emptied_and_the_run_is_unclean(run, tmp_path):
    """The person's cache, in a directory of root's the tree cannot write, holds a pyc
    anybody may write: the tree forges it in place, ztsa cannot remove it, so it
    empties it (the importer then compiles the source) and says the run is unclean."""
    if run.mode == "root":
        pytest.skip("root is never refused the removal")
    ws = run.workspace
    marker = marker_in(tmp_path)
    app(ws)
    outside(sys.executable, "-c", "import app", cwd=ws)
    cache = ws / "__pycache__"
    pyc = cache / f"app.{sys.implementation.cache_tag}.pyc"
    os.chmod(pyc, 0o666)
    os.chmod(cache, 0o555)
    os.chmod(ws / "app.py", 0o666)
    script = ("import os, shutil, subprocess, sys\n"
              "os.mkdir('w'); shutil.copy('app.py', 'w/app.py')\n"
              "st = os.stat('app.py'); os.utime('w/app.py', ns=(st.st_atime_ns, "
              "st.st_mtime_ns))\n"
              f"subprocess.run([sys.executable, '-c', {FORGE!r}, {str(marker)!r}], "
              "cwd='w', check=True)\n"
              "data = open('w/' + os.path.relpath(sys.argv[1]), 'rb').read()\n"
              "open(sys.argv[1], 'wb').write(data)\n")
    proc, _ = run(run.python, "-c", script, os.path.relpath(pyc, ws))
    try:
        assert proc.returncode == EXIT_UNCLEAN, proc.stderr
        assert "emptied it in place" in proc.stderr, proc.stderr
        got = outside(sys.executable, "-c", "import app; print(app.VALUE)", cwd=ws)
        assert got.stdout.strip() == "1", got.stderr
        assert not marker.exists(), "the forged bytecode ran outside the sandbox"
    finally:
        os.chmod(cache, 0o755)


@pytest.mark.parametrize("keep", [False, True], ids=["default", "keep-pth"])
def test_a_code_running_pth_is_moved_aside(run, tmp_path, keep):
    """A new .pth with an `import` line runs at every start of the venv's python:
    moved aside; with --keep-pth still, as no RECORD of the run lists it. A .pth of
    paths only stays, and is named."""
    ws = run.workspace
    marker = marker_in(tmp_path)
    site = venv(ws)
    open_up(ws)
    proc, events = run("/bin/sh", "-c", f"""
        printf 'import os; open("{marker}", "w")\\n' > {SITE}/evil.pth
        printf '{ws}/src\\n' > {SITE}/paths.pth
        true""", extra=["--keep-pth"] if keep else [])
    assert proc.returncode == 0, proc.stderr
    assert "moved aside 1 file(s)" in proc.stderr and "evil.pth" in proc.stderr, proc.stderr
    assert not (site / "evil.pth").exists()
    assert (site / "paths.pth").exists()
    outside(ws / ".venv" / "bin" / "python", "-c", "pass", cwd=ws)
    assert not marker.exists(), "the planted .pth ran outside the sandbox"
    if run.log:
        schema_valid(events)
        moved = [e for e in events if e["event"] == "quarantine"]
        assert [e["path"] for e in moved] == [f"{SITE}/evil.pth"]
        assert str(marker) in moved[0]["runs"]
        assert f"{SITE}/paths.pth" in [e["path"] for e in events if e["event"] == "reported"]


def test_keep_pth_keeps_what_a_record_of_the_run_lists(run, tmp_path):
    ws = run.workspace
    marker = marker_in(tmp_path)
    site = venv(ws)
    open_up(ws)
    proc, events = run("/bin/sh", "-c", f"""
        set -e
        mkdir {SITE}/kept-1.0.dist-info
        printf 'import os; open("{marker}.kept", "w")\\n' > {SITE}/kept.pth
        printf 'kept.pth,,\\nkept-1.0.dist-info/RECORD,,\\n' > {SITE}/kept-1.0.dist-info/RECORD
        printf 'import os; open("{marker}", "w")\\n' > {SITE}/orphan.pth
        """, extra=["--keep-pth"])
    assert proc.returncode == 0, proc.stderr
    assert (site / "kept.pth").exists()
    assert not (site / "orphan.pth").exists()
    assert "kept.pth" in proc.stderr  # named even so
    outside(ws / ".venv" / "bin" / "python", "-c", "pass", cwd=ws)
    assert not marker.exists(), "the orphan .pth ran outside the sandbox"
    assert Path(f"{marker}.kept").exists()  # what the person chose to keep runs
    if run.log:
        schema_valid(events)
        kept = [e for e in events if e["event"] == "reported"]
        assert [e["path"] for e in kept] == [f"{SITE}/kept.pth"], kept
        assert "--keep-pth" in kept[0]["reason"] and "kept-1.0" in kept[0]["reason"]


def test_a_planted_sitecustomize_and_a_module_an_existing_pth_imports(run, tmp_path):
    ws = run.workspace
    marker = marker_in(tmp_path)
    site = venv(ws)
    # an installed package's start-up hook, as setuptools' distutils-precedence.pth
    (site / "hook.pth").write_text("import hookmod; hookmod.start()\n")
    (site / "hookmod.py").write_text("def start():\n    pass\n")
    outside(ws / ".venv" / "bin" / "python", "-c", "pass", cwd=ws)
    open_up(ws)
    proc, events = run("/bin/sh", "-c", f"""
        set -e
        printf 'open("{marker}", "w")\\n' > {SITE}/sitecustomize.py
        mkdir {SITE}/usercustomize
        printf 'open("{marker}", "w")\\n' > {SITE}/usercustomize/__init__.py
        printf 'def start():\\n    open("{marker}.hook", "w")\\n' > {SITE}/hookmod.py
        """)
    assert proc.returncode == 0, proc.stderr
    assert not (site / "sitecustomize.py").exists()
    assert not (site / "hook.pth").exists()
    for argv in (["-c", "pass"], ["-c", "import site, sys; print(sys.path)"]):
        outside(ws / ".venv" / "bin" / "python", *argv, cwd=ws)
    assert not marker.exists(), "the planted sitecustomize ran outside the sandbox"
    assert not Path(f"{marker}.hook").exists(), "the changed module of a .pth ran"
    if run.log:
        schema_valid(events)
        moved = {e["path"] for e in events if e["event"] == "quarantine"}
        assert {f"{SITE}/sitecustomize.py", f"{SITE}/hook.pth"} <= moved, moved


def test_a_replaced_interpreter_is_reported(run, tmp_path):
    ws = run.workspace
    marker = marker_in(tmp_path)
    venv(ws)
    open_up(ws)
    proc, events = run("/bin/sh", "-c", f"""
        set -e
        rm .venv/bin/python
        printf '#!/bin/sh\\ntouch {marker}\\nexec python3 "$@"\\n' > .venv/bin/python
        chmod +x .venv/bin/python
        printf 'home = {ws}/evil\\n' >> .venv/pyvenv.cfg
        """)
    assert proc.returncode == 0, proc.stderr
    line = next((x for x in proc.stderr.splitlines() if "virtual environment .venv" in x), "")
    assert "bin/python (a file of" in line and "#!/bin/sh" in line, proc.stderr
    assert "pyvenv.cfg" in line and f"{ws}/evil" in line, proc.stderr
    if run.log:
        schema_valid(events)
        reported = {e["path"]: e for e in events if e["event"] == "reported"}
        assert set(reported) == {".venv/bin/python", ".venv/pyvenv.cfg"}, reported
        assert "#!/bin/sh" in reported[".venv/bin/python"]["runs"]
        summary = next(e for e in events if e["event"] == "summary")
        assert summary["reported"] == 2


def test_positive_control_a_new_venv_and_a_local_wheel_keep_working(run, tmp_path):
    """`python -m venv` and `pip install --no-index` of a local wheel inside the run: the
    venv works afterwards, its bytecode rebuilt on use; the new venv is named."""
    ws = run.workspace
    wheel = _wheel(ws, "ztsademo", "1.0")
    open_up(ws)
    proc, _ = run("/bin/sh", "-c", f"""
        set -e
        {run.python} -m venv .venv
        .venv/bin/pip install -q --no-index --no-cache-dir --disable-pip-version-check \
            {wheel}
        .venv/bin/python -c 'import ztsademo'
        """, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "could not" not in proc.stderr, proc.stderr
    assert "the run made the virtual environment .venv: pyvenv.cfg" in proc.stderr, proc.stderr
    got = outside(ws / ".venv" / "bin" / "python", "-c",
                  "import ztsademo; print(ztsademo.VALUE)", cwd=ws)
    assert got.stdout.strip() == "42", got.stderr
    pip = outside(ws / ".venv" / "bin" / "python", "-m", "pip", "--version", cwd=ws)
    assert pip.returncode == 0, pip.stderr
    listed = outside(ws / ".venv" / "bin" / "python", "-m", "pip", "list",
                     "--disable-pip-version-check", cwd=ws)
    assert "ztsademo" in listed.stdout, listed.stderr


def _console_wheel(directory: Path) -> Path:
    """A wheel with a console script, as setuptools builds one: pip writes bin/tooldemo
    and lists it in the RECORD it writes."""
    import zipfile

    name, version = "tooldemo", "1.0"
    wheel = directory / f"{name}-{version}-py3-none-any.whl"
    info = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": "def main():\n    print('tooldemo ran')\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: ztsa-test\nRoot-Is-Purelib: true\n"
                         "Tag: py3-none-any\n",
        f"{info}/entry_points.txt": f"[console_scripts]\n{name} = {name}:main\n",
    }
    with zipfile.ZipFile(wheel, "w") as z:
        for n, text in files.items():
            z.writestr(n, text)
        z.writestr(f"{info}/RECORD", "".join(f"{n},,\n" for n in files) + f"{info}/RECORD,,\n")
    return wheel


def test_positive_control_pips_programs_and_a_built_extension_stay(run, tmp_path):
    """What pip installs into a workspace venv's bin/ (pip itself, a package's console
    script) is listed by the RECORD the run wrote: kept, and runs afterwards. An
    extension module built in place (no source of its name beside it) is kept and
    named; the same bytes as app's extension module beside app.py are moved aside."""
    import sysconfig

    ws = run.workspace
    wheel = _console_wheel(ws)
    (ws / "pkg").mkdir()
    (ws / "pkg" / "__init__.py").write_text("")
    (ws / "app.py").write_text(APP)
    src = tmp_path / "fast.c"
    src.write_text("int fast(void) { return 42; }\n")
    blob = ws / "blob.bin"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(blob), str(src)], check=True,
                   capture_output=True)
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    open_up(ws)
    proc, events = run("/bin/sh", "-c", f"""
        set -e
        {run.python} -m venv .venv
        .venv/bin/pip install -q --no-index --no-cache-dir --disable-pip-version-check \
            {wheel}
        cp blob.bin pkg/_fast{suffix}
        cp blob.bin app{suffix}
        rm blob.bin
        """, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "could not" not in proc.stderr, proc.stderr
    got = outside("/bin/bash", "-c", ". .venv/bin/activate && tooldemo && pip --version",
                  cwd=ws)
    assert got.returncode == 0 and "tooldemo ran" in got.stdout, got.stderr
    assert (ws / "pkg" / f"_fast{suffix}").exists()  # a build's: kept
    assert not (ws / f"app{suffix}").exists()  # in place of app.py: moved aside
    assert f"pkg/_fast{suffix}" in proc.stderr, proc.stderr
    if run.log:
        schema_valid(events)
        moved = {e["path"] for e in events if e["event"] == "quarantine"}
        # (and, as documented, setuptools' distutils-precedence.pth: --keep-pth keeps it)
        assert {p for p in moved if not p.endswith(".pth")} == {f"app{suffix}"}, moved
        reported = {e["path"] for e in events if e["event"] == "reported"}
        assert f"pkg/_fast{suffix}" in reported, reported
