"""The installed `ztsa` command: an isolated interpreter that nothing around it steers."""

from __future__ import annotations

import os
import subprocess

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
