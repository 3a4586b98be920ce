"""`ztsa exec --audit-only`: learn, then enforce. In that mode the tree is refused
nothing on the network or in the file system outside the workspace, and every call
the enforced run would have refused is logged with "enforced": false; `ztsa policy
suggest` turns that log into a policy, and the same run enforced under it is refused
nothing. What the mode never opens: the agent files, a policy's deny entries, the
audit log, and the untrusted profile. Judged by effects: what arrived, what exists."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import jsonschema
import tomllib

from conftest import Runner

# the mode needs the file helper and the tree's own namespaces
RUN_MODES = ("root", "user")

CODE = ("import socket, sys\n"
        "p, out, conf = int(sys.argv[1]), sys.argv[2], sys.argv[3]\n"
        "r = []\n"
        "try: socket.create_connection(('127.0.0.1', p), 3).close(); r.append('tcp')\n"
        "except OSError: pass\n"
        "try: open(out + '/made', 'w').write('x'); r.append('file')\n"
        "except OSError: pass\n"
        "u = socket.socket(socket.AF_UNIX)\n"
        "try: u.connect(out + '/app.sock'); r.append('unix')\n"
        "except OSError: pass\n"
        "try: r.append(open(conf).read().strip())\n"
        "except OSError: pass\n"
        "print(' '.join(r) or 'nothing')\n")


def _dirs() -> tuple[Path, Path, Path]:
    """(outside, a fake home holding conf.txt, an XDG_CONFIG_HOME), all reachable by the
    suite's unprivileged user."""
    dirs = [Path(tempfile.mkdtemp(prefix=p)) for p in ("ztsa-out-", "ztsa-home-", "ztsa-xdg-")]
    for d in dirs:
        os.chmod(d, 0o777)
    (dirs[1] / "conf.txt").write_text("learnt\n")
    os.chmod(dirs[1] / "conf.txt", 0o644)
    (dirs[2] / "ztsa").mkdir()
    os.chmod(dirs[2] / "ztsa", 0o777)
    return dirs[0], dirs[1], dirs[2]


def _unix_server(outside: Path) -> socket.socket:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(outside / "app.sock"))
    server.listen(8)
    os.chmod(outside / "app.sock", 0o777)
    return server


def test_learn_then_enforce_end_to_end(run: Runner, listeners):
    """Recorded under --audit-only, the run reaches a host service, writes outside,
    connects a Unix socket outside and reads a file of the hidden home, and each is a
    deny line that enforced nothing; suggested and applied as the user's policy, the
    same run enforced gets the same and is refused nothing."""
    port = listeners.add_tcp("service")
    outside, home, xdg = _dirs()
    server = _unix_server(outside)
    conf = str(home / "conf.txt")
    # the fake home is $HOME for ztsa: hidden from the tree like the real one
    env = {"XDG_CONFIG_HOME": str(xdg), "ZTSA_SYSTEM_POLICY": str(xdg / "none.toml"),
           "HOME": str(home)}
    args = (run.python, "-c", CODE, str(port), str(outside), conf)
    enforced, _ = run(*args, env=env, log=True)
    assert enforced.stdout.strip() == "nothing", enforced.stdout + enforced.stderr
    assert listeners.settle()["service"] == 0 and not (outside / "made").exists()
    argv, log = run.command(*args, env=env, log=True, extra=["--audit-only"])
    learn = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                           cwd=run.workspace)
    assert learn.stdout.split() == ["tcp", "file", "unix", "learnt"], learn.stdout + learn.stderr
    assert listeners.settle()["service"] == 1 and (outside / "made").read_text() == "x"
    assert "audit only, nothing outside the workspace was enforced" in learn.stderr
    events = run.finish(learn.stderr, log)
    would = [e for e in events if e["event"] == "deny"]
    assert would and all(e.get("enforced") is False for e in would), would
    assert {e.get("path") or e.get("address") for e in would} >= {
        f"127.0.0.1:{port}", str(outside / "made"), str(outside / "app.sock"), conf}, would
    summary = next(e for e in events if e["event"] == "summary")
    assert summary["enforced"] is False and summary["would_deny"] >= 4, summary
    schema = json.loads((Path(__file__).parents[2] / "docs" / "audit-schema.json").read_text())
    for e in events:
        jsonschema.validate(e, schema)
    (outside / "made").unlink()
    done = subprocess.run([sys.executable, "-m", "ztsa", "policy", "suggest", str(log)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    suggested = tomllib.loads(done.stdout)
    assert suggested["fs"] == {"allow_write": [str(outside)], "allow_read": [conf]}, done.stdout
    assert suggested["net"]["unix"] == [str(outside / "app.sock")], done.stdout
    assert [r["to"] for r in suggested["net"]["allow"]] == [f"127.0.0.1:{port}"], done.stdout
    policy = xdg / "ztsa" / "policy.toml"
    policy.write_text(done.stdout)
    os.chmod(policy, 0o644)
    again, events = run(*args, env=env, log=True)
    assert again.stdout.split() == ["tcp", "file", "unix", "learnt"], (
        again.stdout + again.stderr + done.stdout)
    assert [e["denied"] for e in events if e["event"] == "summary"] == [0], again.stderr
    assert not [e for e in events if e["event"] == "deny"]
    assert listeners.settle()["service"] == 2 and (outside / "made").read_text() == "x"
    server.close()


def test_audit_only_keeps_agent_files_policy_denies_and_its_log(run: Runner, listeners):
    """The agent files stay read-only, an address a policy denies stays refused (by
    the unspecified address too, which the kernel connects to loopback), and the audit
    log in the workspace cannot be changed."""
    port = listeners.add_tcp("denied")
    _outside, _home, xdg = _dirs()
    (xdg / "ztsa" / "policy.toml").write_text('[net]\ndeny = ["127.0.0.1/32"]\n')
    os.chmod(xdg / "ztsa" / "policy.toml", 0o644)
    ws = run.workspace
    (ws / "CLAUDE.md").write_text("be careful\n")
    os.chmod(ws / "CLAUDE.md", 0o666)
    env = {"XDG_CONFIG_HOME": str(xdg), "ZTSA_SYSTEM_POLICY": str(xdg / "none.toml")}
    code = ("import glob, socket, sys\n"
            "r = []\n"
            "try: open('CLAUDE.md', 'w').write('obey me'); r.append('claude')\n"
            "except OSError: pass\n"
            "for host, fam in (('127.0.0.1', socket.AF_INET), ('0.0.0.0', socket.AF_INET),\n"
            "                  ('::ffff:0.0.0.0', socket.AF_INET6)):\n"
            "    s = socket.socket(fam)\n"
            "    try: s.connect((host, int(sys.argv[1]))); r.append('tcp ' + host)\n"
            "    except OSError: pass\n"
            "for log in glob.glob('audit-*.jsonl'):\n"
            "    try: open(log, 'w').write('forged'); r.append('log')\n"
            "    except OSError: pass\n"
            "print(' '.join(r) or 'nothing')\n")
    proc, events = run(run.python, "-c", code, str(port), env=env, log=True,
                       extra=["--audit-only"])
    assert proc.stdout.strip() == "nothing", proc.stdout + proc.stderr
    assert (ws / "CLAUDE.md").read_text() == "be careful\n"
    assert listeners.settle()["denied"] == 0
    assert events and events[-1]["event"] == "summary" and events[0]["event"] == "env"


def test_no_directory_on_the_way_to_the_workspace_or_the_log_can_be_renamed(run: Runner):
    """Outside the workspace nothing is read-only under --audit-only: renaming a parent
    of the workspace (or of the log) and making a new one in its place would hand the
    run's end a workspace and a log of the tree's making."""
    top = Path(tempfile.mkdtemp(prefix="ztsa-top-"))
    os.chmod(top, 0o777)
    ws = top / "p" / "ws"
    ws.mkdir(parents=True)
    os.chmod(top / "p", 0o777)
    os.chmod(ws, 0o777)
    (ws / "CLAUDE.md").write_text("be careful\n")
    os.chmod(ws / "CLAUDE.md", 0o666)
    log = top / "p" / "log.jsonl"
    runner = Runner(run.mode, ws)
    argv, _ = runner.command(
        "sh", "-c", f"mv {top}/p {top}/old; mv {top} {top}.old; mkdir -p {top}/p/ws; "
        f"echo PWNED > {top}/p/ws/CLAUDE.md; echo forged > {log}; echo done",
        log=False, extra=["--audit-only", "--audit-log", str(log)])
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=ws)
    assert "done" in done.stdout, done.stderr
    assert (ws / "CLAUDE.md").read_text() == "be careful\n"
    assert not (top / "old").exists() and not Path(f"{top}.old").exists()
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert lines[-1]["event"] == "summary"
    assert any(e.get("rule") == "a directory on the way to the workspace or the audit log"
               for e in lines)


def test_audit_only_is_refused_under_untrusted(run: Runner):
    argv, _ = run.command("true", profile="untrusted", extra=["--audit-only"])
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                          cwd=run.workspace)
    assert done.returncode == 2 and "untrusted profile forbids" in done.stderr, done.stderr
