"""The installed `ztsa` command: an isolated interpreter that nothing around it steers.

The launcher starts the interpreter its installer wrote into the first line of
`ztsa-interpreter` beside its real file, and nothing else: real installs of a wheel
built here (`python -m build`, as a release is) into a venv, the user site, pipx and uv
tool, with executables planted wherever an older launcher looked."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from ztsa import __version__
from ztsa._boot import INTERPRETER_FILE

REPO = Path(__file__).resolve().parent.parent

EVIL = "open({marker!r}, 'w').write('ran')\n"


def _plant(root, marker) -> None:
    """Modules that would run if ztsa imported from ROOT: ztsa itself, and stdlib names
    the command imports on every run."""
    (root / "ztsa").mkdir(parents=True)
    for rel in ("ztsa/__init__.py", "ztsa/cli.py", "argparse.py", "re.py", "typing.py",
                "sitecustomize.py", "usercustomize.py"):
        (root / rel).write_text(EVIL.format(marker=str(marker)))


def test_the_command_ignores_pythonpath_the_workspace_and_user_site(ztsa_bin, tmp_path):
    marker = tmp_path / "planted-code-ran"
    planted = tmp_path / "planted"
    _plant(planted, marker)
    home = tmp_path / "home"
    _plant(home / ".local" / "lib" / "python3" / "site-packages", marker)
    env = {**os.environ, "PYTHONPATH": str(planted), "PYTHONSTARTUP": str(planted / "re.py"),
           "PYTHONUSERBASE": str(home / ".local"), "PYTHONINSPECT": "1", "HOME": str(home)}
    # the current directory holds the same modules
    proc = subprocess.run([ztsa_bin, "--version"], cwd=planted, env=env, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"ztsa, version {__version__}"
    assert not marker.exists()
    proc = subprocess.run([ztsa_bin, "check", "--profile", "repo", "--format", "json",
                           str(tmp_path / "home")], cwd=planted, env=env,
                          capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode in (0, 3), proc.stderr
    assert proc.stdout.lstrip().startswith("{")
    assert not marker.exists()


def test_the_command_starts_python_isolated_without_site(ztsa_bin):
    """The launcher starts the interpreter its installer recorded beside it, with -I -S:
    no .pth file of site-packages runs before ztsa's first line. It names none itself."""
    with open(ztsa_bin, encoding="utf-8") as f:
        text = f.read()
    assert text.startswith("#!/bin/sh\n")
    assert 'exec "$py" -I -S -c ' in text
    assert not re.search(r"^py=/", text, re.MULTILINE)
    record = Path(os.path.realpath(ztsa_bin)).parent / INTERPRETER_FILE
    first = record.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("#!/"), first
    assert os.access(first[2:], os.X_OK), first


def test_the_command_runs_the_boot_module_as_it_is_now(ztsa_bin):
    """The launcher embeds ztsa/_boot.py's text, as this checkout has it (else reinstall:
    `pip install .`)."""
    boot = (Path(__file__).resolve().parent.parent / "ztsa" / "_boot.py").read_text()
    with open(ztsa_bin, encoding="utf-8") as f:
        text = f.read()
    assert f'exec "$py" -I -S -c {shlex.quote(boot)} "$0" "$@"\n' in text


@pytest.mark.parametrize("system", [False, True], ids=["own", "system-site-packages"])
@pytest.mark.parametrize("interpreter", [sys.executable, "/usr/bin/python3"],
                         ids=["this-python", "system-python"])
def test_in_a_virtual_environment_the_command_imports_its_own_ztsa(ztsa_bin, tmp_path,
                                                                  system, interpreter):
    """Installed in a virtual environment (pipx makes one), the command imports the
    environment's ztsa, not one of the interpreter it was made from, and still runs no
    .pth file; the interpreter's site-packages are on the path only where the
    environment includes them."""
    if not os.path.exists(interpreter):
        pytest.skip(f"no {interpreter} on this machine")
    venv = tmp_path / "venv"
    subprocess.run([interpreter, "-m", "venv", "--without-pip",
                    *(["--system-site-packages"] if system else []), str(venv)], check=True)
    python = venv / "bin" / "python3"
    site_dir = Path(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True).stdout.strip())
    marker = tmp_path / "pth-ran"
    (site_dir / "planted.pth").write_text(
        f"import os; open({str(marker)!r}, 'w').write('ran')\n")
    (site_dir / "ztsa").mkdir()
    (site_dir / "ztsa" / "__init__.py").write_text("")
    (site_dir / "ztsa" / "cli.py").write_text(
        "import json, sys\n"
        "def entry():\n"
        "    print(json.dumps({'file': __file__, 'path': sys.path}))\n")
    launcher = venv / "bin" / "ztsa"
    shutil.copy(ztsa_bin, launcher)
    # as the installer leaves them: the interpreter's record, and the distribution that
    # lists the launcher among its files
    (venv / "bin" / INTERPRETER_FILE).write_text(f"#!{python}\n")
    (site_dir / "ztsa-0.1.dist-info").mkdir()
    (site_dir / "ztsa-0.1.dist-info" / "RECORD").write_text(
        "../../../bin/ztsa,,\nztsa/__init__.py,,\n")
    proc = subprocess.run([str(launcher), "--version"], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["file"] == str(site_dir / "ztsa" / "cli.py")
    assert not marker.exists()
    # the base interpreter's own site-packages (Debian's: dist-packages), which a venv
    # made from a venv's interpreter includes too
    code = ("import os, site, sys; print([p for p in site.getsitepackages([sys.base_prefix])"
            " if os.path.isdir(p)][0])")
    base = subprocess.run([interpreter, "-I", "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip()
    assert str(site_dir) in doc["path"]
    assert (base in doc["path"]) == system
    if system:  # the environment's own come first
        assert doc["path"].index(str(site_dir)) < doc["path"].index(base)


# --- the interpreter: the one the installer recorded, beside the launcher's real file ---

@dataclass(frozen=True)
class Venv:
    root: Path
    python: Path
    site_dir: Path


def _run(argv, **kwargs) -> subprocess.CompletedProcess[str]:
    kwargs.setdefault("timeout", 120)
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, **kwargs)


def _base_python() -> str:
    """The interpreter this test's environment was made from."""
    return getattr(sys, "_base_executable", "") or sys.executable


def _venv(path: Path, wheel: Path) -> Venv:
    subprocess.run([_base_python(), "-m", "venv", str(path)], check=True, timeout=300)
    python = path / "bin" / "python"
    proc = _run([python, "-m", "pip", "install", "-q", wheel], timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    site_dir = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()"
                                        "['purelib'])"]).stdout.strip())
    return Venv(path, python, site_dir)


@pytest.fixture(scope="session")
def installed(built, tmp_path_factory) -> Venv:
    """The wheel installed by pip into a virtual environment."""
    return _venv(tmp_path_factory.mktemp("installed") / "venv", built.wheel)


def _plant_interpreter(path: Path, marker: Path) -> None:
    """An executable at PATH that, if ever started, says so in MARKER."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho \"$0\" >>{shlex.quote(str(marker))}\nexit 99\n")
    path.chmod(0o755)


def _version(argv, **kwargs) -> None:
    proc = _run([*argv, "--version"], **kwargs)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"ztsa, version {__version__}"


def test_the_wheel_records_no_interpreter(built):
    """Nothing of the build machine's interpreter goes into the wheel: the record's
    first line is `#!python`, for the installer to write."""
    import zipfile

    with zipfile.ZipFile(built.wheel) as whl:
        names = whl.namelist()
        scripts = {n.rsplit("/", 1)[1]: whl.read(n).decode() for n in names
                   if ".data/scripts/" in n}
    assert set(scripts) == {"ztsa", INTERPRETER_FILE}
    assert scripts[INTERPRETER_FILE].startswith("#!python\n")
    assert scripts["ztsa"].startswith("#!/bin/sh\n")


def test_a_link_to_the_launcher_starts_its_installation_and_nothing_planted(
        installed, built, tmp_path):
    """Started by its own path, by a link in another directory (as pipx and uv tool
    make, absolute or relative, through another link) and through a linked directory,
    the launcher starts its installation's interpreter. Executables planted where an
    older launcher looked (the build environment's interpreter, `python3` beside the
    link) and first on PATH never run."""
    marker = tmp_path / "planted-interpreter-ran"
    launcher = installed.root / "bin" / "ztsa"
    links = tmp_path / "links"
    links.mkdir()
    (links / "ztsa").symlink_to(launcher)
    (links / "ztsa-relative").symlink_to(os.path.relpath(launcher, links))
    (links / "ztsa-twice").symlink_to("ztsa-relative")
    (tmp_path / "bindir").symlink_to(installed.root / "bin")
    assert built.build_pythons or importlib.util.find_spec("build") is None
    for planted in [*built.build_pythons, links / "python3", links / "python",
                    tmp_path / "path" / "python3", tmp_path / "path" / "python"]:
        _plant_interpreter(planted, marker)
    env = {**os.environ, "PATH": f"{tmp_path / 'path'}:{os.environ.get('PATH', '')}"}
    for argv in ([launcher], [links / "ztsa"], [links / "ztsa-relative"],
                 [links / "ztsa-twice"], [tmp_path / "bindir" / "ztsa"]):
        _version(argv, env=env, cwd=tmp_path)
    # by name, on PATH, as a shell finds it
    _version(["ztsa"], env={**env, "PATH": f"{links}:{env['PATH']}"}, cwd=tmp_path)
    assert not marker.exists(), marker.read_text()


def test_without_readlink_a_link_is_refused_and_the_launcher_itself_runs(installed,
                                                                         tmp_path):
    """Resolving a link takes `readlink -f` (else `realpath`): without either the
    launcher refuses rather than guess; started by its own path it needs neither."""
    links = tmp_path / "links"
    links.mkdir()
    (links / "ztsa").symlink_to(installed.root / "bin" / "ztsa")
    env = {**os.environ, "PATH": str(tmp_path / "empty")}
    proc = _run([links / "ztsa", "--version"], env=env)
    assert proc.returncode == 125, proc
    assert proc.stderr.startswith("ztsa: ") and "cannot resolve" in proc.stderr
    _version([installed.root / "bin" / "ztsa"], env=env)


def test_a_launcher_not_tied_to_its_installation_refuses(installed, tmp_path):
    """Exit 125 with a message, and no interpreter started, for a launcher: copied
    without its record (a `python3` beside it is no stand-in), with a record no
    installer rewrote or that names no executable file, and copied with its record
    (the interpreter it names imports a ztsa that did not install this launcher)."""
    marker = tmp_path / "planted-interpreter-ran"
    launcher = installed.root / "bin" / "ztsa"
    record = (installed.root / "bin" / INTERPRETER_FILE).read_text()

    def case(name: str, record_text: str | None, message: str) -> None:
        d = tmp_path / name
        d.mkdir()
        shutil.copy(launcher, d / "ztsa")
        _plant_interpreter(d / "python3", marker)
        if record_text is not None:
            (d / INTERPRETER_FILE).write_text(record_text)
        proc = _run([d / "ztsa", "--version"])
        assert proc.returncode == 125, (name, proc)
        assert proc.stdout == ""
        assert proc.stderr.startswith("ztsa: ") and message in proc.stderr, (name, proc)
        assert proc.stderr.count("\n") == 1, proc.stderr  # one line, no traceback

    case("alone", None, "no interpreter is known")
    case("unwritten", "#!python\n", "names no interpreter")
    case("relative", "#!python3\n", "names no interpreter")
    case("missing", f"#!{tmp_path / 'nowhere' / 'python3'}\n", "not an executable file")
    case("copied", record, "did not install the launcher")
    assert not marker.exists(), marker.read_text()


@pytest.mark.parametrize("form", ["pip", "pipx", "installer", "long", "relocatable"])
def test_the_launcher_reads_each_form_an_installer_writes(ztsa_bin, tmp_path, form):
    """pip writes `#!PATH` whatever PATH holds; pipx then adds ` -E` where PATH has no
    space; uv and installer, for a path with a space or longer than a shebang line, a
    /bin/sh polyglot whose second line names it as one shell word (relative to the
    record in uv's relocatable venv). Each names the interpreter the launcher starts,
    with -I -S (nothing else), the boot code and its arguments."""
    d = tmp_path / "bin"
    d.mkdir()
    shutil.copy(ztsa_bin, d / "ztsa")
    spaced = tmp_path / "a dir's" / "python"
    long = tmp_path / ("x" * 130) / "python"
    plain = tmp_path / "plain" / "python"
    target = {"pip": spaced, "pipx": plain, "installer": spaced, "long": long,
              "relocatable": d / "python"}[form]
    exec_line = "#!/bin/sh\n'''exec' {} \"$0\" \"$@\"\n' '''\n"
    (d / INTERPRETER_FILE).write_text({
        "pip": f"#!{spaced}\n",
        "pipx": f"#!{plain} -E\n",
        "installer": exec_line.format(shlex.quote(str(spaced))),
        "long": exec_line.format(shlex.quote(str(long))),
        "relocatable": exec_line.format('"$(dirname -- "$(realpath -- "$0")")"/\'python\''),
    }[form] + "import sys\n")
    args = tmp_path / "args"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(f"#!/bin/sh\nprintf '%s\\0' \"$0\" \"$@\" >{shlex.quote(str(args))}\n")
    target.chmod(0o755)
    proc = _run([d / "ztsa", "--version", "a b"])
    assert proc.returncode == 0, proc.stderr
    argv = args.read_text().split("\0")[:-1]
    boot = (REPO / "ztsa" / "_boot.py").read_text()
    assert argv == [str(target), "-I", "-S", "-c", boot, str(d / "ztsa"), "--version", "a b"]


def test_installed_files_name_no_path_of_the_build(installed, built):
    """No file the wheel installs (its RECORD) names the source tree it was built from
    or the build's temporary files, its isolated environment among them."""
    info = next(installed.site_dir.glob("ztsa-*.dist-info"))
    files = [installed.site_dir / line.rsplit(",", 2)[0]
             for line in (info / "RECORD").read_text().splitlines() if line]
    assert any(f.name == INTERPRETER_FILE for f in files)
    assert any(f.suffix == ".so" for f in files)
    needles = [p.encode() for p in built.build_paths]
    for f in files:
        if f.is_file():
            data = f.read_bytes()
            assert not [n for n in needles if n in data], f


def test_a_user_install_starts_the_interpreter_that_installed_it(built, tmp_path):
    """`pip install --user`: the launcher in ~/.local/bin, the interpreter elsewhere, as
    the installer recorded it; the user site is the launcher's own, whatever $HOME or
    $PYTHONUSERBASE say when it runs (a .pth planted there never runs)."""
    base = _base_python()
    if _run([base, "-m", "pip", "--version"]).returncode != 0:
        pytest.skip(f"{base} has no pip")
    home = tmp_path / "home"
    env = {**os.environ, "HOME": str(home), "PIP_BREAK_SYSTEM_PACKAGES": "1"}
    env.pop("PYTHONUSERBASE", None)
    env.pop("VIRTUAL_ENV", None)
    proc = _run([base, "-m", "pip", "install", "-q", "--user", built.wheel], env=env,
                timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    launcher = home / ".local" / "bin" / "ztsa"
    first = (launcher.parent / INTERPRETER_FILE).read_text().splitlines()[0]
    assert os.path.samefile(first[2:], base), first
    marker = tmp_path / "planted-code-ran"
    planted = tmp_path / "planted-base"
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    _plant(planted / "lib" / version / "site-packages", marker)
    (planted / "lib" / version / "site-packages" / "planted.pth").write_text(
        f"import os; open({str(marker)!r}, 'w').write('ran')\n")
    _version([launcher], env={**env, "PYTHONUSERBASE": str(planted)}, cwd=tmp_path)
    _version([launcher], env={**env, "HOME": str(tmp_path / "elsewhere")}, cwd=tmp_path)
    assert not marker.exists()


@pytest.fixture(scope="session")
def tools(tmp_path_factory) -> Path:
    """pipx and uv, installed from the package index into a virtual environment of
    their own; the test that uses them is skipped where they cannot be."""
    venv = tmp_path_factory.mktemp("tools") / "venv"
    subprocess.run([_base_python(), "-m", "venv", str(venv)], check=True, timeout=300)
    proc = _run([venv / "bin" / "python", "-m", "pip", "install", "-q", "pipx", "uv"],
                timeout=600)
    if proc.returncode != 0:
        pytest.skip(f"pipx and uv cannot be installed here: {proc.stderr[-500:]}")
    return venv / "bin"


@pytest.mark.parametrize("tool", ["uv", "pipx", "pipx-pip"])
def test_pipx_and_uv_tool_installs_run(built, tools, tmp_path, tool):
    """`uv tool install` and `pipx install` of the wheel (pipx through uv, found beside
    it, and through pip): the `ztsa` they put on PATH is a link to the launcher in the
    tool's own venv; it runs, and a `python3` planted beside the link (where an older
    launcher looked) never does."""
    home = tmp_path / "home"
    bin_dir = home / "bin"
    env = {**os.environ, "HOME": str(home), "PIPX_HOME": str(home / "pipx"),
           "PIPX_BIN_DIR": str(bin_dir), "PIPX_MAN_DIR": str(home / "man"),
           "UV_TOOL_DIR": str(home / "uv-tools"), "UV_TOOL_BIN_DIR": str(bin_dir),
           "UV_CACHE_DIR": str(home / "uv-cache"), "UV_PYTHON_DOWNLOADS": "never",
           "PATH": f"{bin_dir}:{tools}:{os.environ.get('PATH', '')}"}
    env.pop("VIRTUAL_ENV", None)
    if tool == "pipx-pip":
        env["PIPX_DEFAULT_BACKEND"] = "pip"
    argv = ([tools / "uv", "tool", "install", "--python", _base_python(), built.wheel]
            if tool == "uv" else
            [tools / "pipx", "install", "--python", _base_python(), built.wheel])
    proc = _run(argv, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    link = bin_dir / "ztsa"
    assert link.is_symlink()
    assert not os.path.samefile(os.path.dirname(os.path.realpath(link)), bin_dir)
    marker = tmp_path / "planted-interpreter-ran"
    for name in ("python3", "python"):
        _plant_interpreter(bin_dir / name, marker)
    _version(["ztsa"], env=env, cwd=tmp_path)
    assert not marker.exists(), marker.read_text()
