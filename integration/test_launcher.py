"""The installed `ztsa` command: an isolated interpreter that nothing around it steers."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from ztsa import __version__

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
    """The launcher names an interpreter and starts it with -I -S: no .pth file of
    site-packages runs before ztsa's first line."""
    with open(ztsa_bin, encoding="utf-8") as f:
        text = f.read()
    assert text.startswith("#!/bin/sh\n")
    assert 'exec "$py" -I -S -c ' in text
    py = next(line for line in text.splitlines() if line.startswith("py="))[3:].strip("'")
    assert os.access(py, os.X_OK), py


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
    with open(ztsa_bin, encoding="utf-8") as f:
        text = f.read()
    launcher = venv / "bin" / "ztsa"
    launcher.write_text(re.sub(r"^py=.*$", f"py={shlex.quote(str(python))}", text,
                               count=1, flags=re.MULTILINE))
    launcher.chmod(0o755)
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
