"""What CMD inherits: a minimal environment, a private HOME and TMPDIR, no secrets."""

from __future__ import annotations

import json
import os

from ztsa.sandbox import toolchains


def test_secrets_in_ztsa_environment_do_not_reach_cmd(run, monkeypatch):
    token = "ghp_" + "S3cr3tT0k3n" * 3
    monkeypatch.setenv("GITHUB_TOKEN", token)
    monkeypatch.setenv("LD_PRELOAD", "/nonexistent.so")
    code = "import json, os; print(json.dumps(dict(os.environ)))"
    proc, events = run(run.python, "-c", code)
    assert proc.returncode == 0, proc.stderr
    env = json.loads(proc.stdout)
    assert "GITHUB_TOKEN" not in env and "LD_PRELOAD" not in env
    expected = {"PATH", "LANG", "TERM", "TZ", "USER", "HOME", "TMPDIR",
                # a toolchain's root that PATH leads into (ztsa/sandbox/toolchains.py)
                *(name for _, name, _ in toolchains.ROOTS)}
    if run.mode == "user":
        expected.add("PYTHONPATH")  # named with --env by the runner (see conftest)
    assert set(env) <= expected | {k for k in env if k.startswith("LC_")}
    assert token not in json.dumps(events)
    names = next(e for e in events if e["event"] == "env")["names"]
    assert "GITHUB_TOKEN" not in names and "HOME" in names


def test_env_pass_through_and_injection_log_names_only(run, monkeypatch):
    monkeypatch.setenv("BUILD_FLAVOR", "release")
    code = "import os; print(os.environ.get('BUILD_FLAVOR'), os.environ.get('INJECTED'))"
    proc, events = run(run.python, "-c", code,
                       extra=["--env", "BUILD_FLAVOR", "--env", "INJECTED=v4lu3"])
    assert proc.stdout.strip() == "release v4lu3"
    env_event = next(e for e in events if e["event"] == "env")
    assert {"BUILD_FLAVOR", "INJECTED"} <= set(env_event["names"])
    assert "v4lu3" not in json.dumps(events)


def test_private_home_and_tmpdir_are_empty_private_and_removed(run):
    code = ("import os, json, tempfile\n"
            "h, t = os.environ['HOME'], os.environ['TMPDIR']\n"
            "open(os.path.join(h, '.bashrc'), 'w').write('x')\n"
            "print(json.dumps([h, t, sorted(os.listdir(t)), oct(os.stat(h).st_mode & 0o777),"
            " tempfile.gettempdir()]))\n")
    proc, _ = run(run.python, "-c", code)
    home, tmp, listing, mode, gettempdir = json.loads(proc.stdout)
    assert listing == [] and mode == "0o700" and gettempdir == tmp
    assert home != os.path.expanduser("~")
    assert not os.path.exists(home) and not os.path.exists(tmp)  # gone after the run


def test_what_the_tree_makes_unreadable_in_its_tmpdir_is_removed_too(run):
    """chmod 000 on directories the tree made in its HOME and TMPDIR: the run's cleanup
    still removes them (for an unprivileged ztsa, the owner's rights come back first)."""
    code = ("import os, json\n"
            "h, t = os.environ['HOME'], os.environ['TMPDIR']\n"
            "for top in (h, t):\n"
            "    os.makedirs(os.path.join(top, 'a', 'b'))\n"
            "    open(os.path.join(top, 'a', 'b', 'f'), 'w').write('x')\n"
            "    os.chmod(os.path.join(top, 'a', 'b'), 0)\n"
            "    os.chmod(os.path.join(top, 'a'), 0)\n"
            "os.chmod(t, 0o100)\n"
            "print(json.dumps([h, t]))\n")
    proc, _ = run(run.python, "-c", code)
    assert proc.returncode == 0, proc.stderr
    home, tmp = json.loads(proc.stdout)
    private = os.path.dirname(home)
    assert os.path.dirname(tmp) == private
    assert not os.path.lexists(private), sorted(os.listdir(private))
