"""`ztsa hook claude`: Claude Code's PreToolUse event on standard input, as Claude Code
sends it, and the rewritten command run by bash as Claude Code's Bash tool runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HOOK = [sys.executable, "-m", "ztsa", "hook", "claude"]


def event(cwd: Path, tool: str = "Bash", **tool_input: object) -> bytes:
    """A PreToolUse event with every field Claude Code sends."""
    return json.dumps({
        "session_id": "5d1b7c2e-0f3a-4c55-9a51-2b1f0c8e9d10",
        "transcript_path": str(cwd / "transcript.jsonl"),
        "cwd": str(cwd), "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": tool, "tool_input": tool_input, "tool_use_id": "toolu_01ABC",
    }).encode()


def hook(stdin: bytes, *options: str, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*HOOK, *options], input=stdin, capture_output=True, timeout=60,
                          env={**os.environ, **(env or {})})


def test_a_bash_call_runs_confined_with_its_words_intact(tmp_path: Path):
    ws = tmp_path / "project"
    ws.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    os.chmod(tmp_path, 0o755)
    command = (f"""printf '%s|' "it's" "$HOME" 'a  b' "$((6*7))"; echo > {ws}/made; """
               f"echo evil > {outside}/x; echo rc=$?")
    done = hook(event(ws, command=command, description="list", timeout=120000),
                "--profile", "repo")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["hookEventName"] == "PreToolUse" and "permissionDecision" not in answer
    updated = answer["updatedInput"]
    assert updated["description"] == "list" and updated["timeout"] == 120000
    # run as Claude Code's Bash tool runs a command: a shell evaluates the string
    ran = subprocess.run(["bash", "-c", updated["command"]], capture_output=True,
                         text=True, timeout=120, cwd=ws)
    words = ran.stdout.split("|")
    assert words[0] == "it's" and words[2:4] == ["a  b", "42"], ran.stdout
    assert words[1] != os.environ.get("HOME") and "ztsa-run-" in words[1]  # private HOME
    assert (ws / "made").exists()
    assert not (outside / "x").exists() and "rc=1" in ran.stdout, ran.stderr


def test_a_ztsa_package_left_in_the_project_is_not_what_runs(tmp_path: Path):
    """Started as `python -m ztsa hook claude` (or by another name), the hook rewrote
    calls to `python -m ztsa exec ...`, which Claude Code runs in the project directory:
    one confined call planted a `ztsa` package there and every later call ran it,
    unconfined (helper-3)."""
    ws = tmp_path / "project"
    (ws / "ztsa").mkdir(parents=True)
    marker = tmp_path / "planted-ran"
    for name in ("__init__.py", "__main__.py"):
        (ws / "ztsa" / name).write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    done = hook(event(ws, command="echo confined"), "--profile", "repo")
    assert done.returncode == 0, done.stderr
    command = json.loads(done.stdout)["hookSpecificOutput"]["updatedInput"]["command"]
    ran = subprocess.run(["bash", "-c", command], capture_output=True, text=True,
                         timeout=120, cwd=ws)
    assert not marker.exists(), command
    assert ran.returncode == 0 and ran.stdout == "confined\n", ran.stderr


def test_other_tools_pass_unchanged(tmp_path: Path):
    done = hook(event(tmp_path, "Read", file_path=str(tmp_path / "a")))
    assert done.returncode == 0 and done.stdout == b""


def test_the_project_dir_of_claude_code_is_the_workspace(tmp_path: Path):
    done = hook(event(tmp_path / "sub", command="true"),
                env={"CLAUDE_PROJECT_DIR": str(tmp_path)})
    cmd = json.loads(done.stdout)["hookSpecificOutput"]["updatedInput"]["command"]
    assert f"--workspace {tmp_path} " in cmd


@pytest.mark.parametrize("stdin", [
    b"", b"not json", b"[1]", b'{"tool_name": "Bash", "tool_input": {"command": 7}}',
    b'{"tool_name": "Bash", "tool_input": {"command": "ls"}}',  # no cwd
    b'{"hook_event_name": "PostToolUse", "tool_name": "Bash", "cwd": "/",'
    b' "tool_input": {"command": "ls"}}',
    b'\xff\xfe',
    # deeper than the parser recurses: blocked, not a crash (a short id: pytest puts it
    # in PYTEST_CURRENT_TEST, and a long one makes the environment too large to exec)
    pytest.param(b'{"a": ' * 100_000, id="nested-too-deeply"),
])
def test_an_event_it_cannot_read_blocks_the_call(stdin: bytes):
    done = hook(stdin, env={"CLAUDE_PROJECT_DIR": ""})
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.startswith(b"ztsa hook: refused: ")


def decisions(answer: object) -> list[object]:
    """Every permission decision anywhere in an answer (and the old top-level one)."""
    if isinstance(answer, dict):
        found = [v for k, v in answer.items() if k in ("permissionDecision", "decision")]
        return found + [d for v in answer.values() for d in decisions(v)]
    if isinstance(answer, list):
        return [d for v in answer for d in decisions(v)]
    return []


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "plan", "bypassPermissions"])
def test_the_hook_never_answers_allow(tmp_path: Path, mode: str):
    """The hook only rewrites (updatedInput) or blocks (exit 2): an `allow` would skip the
    person's own rules and prompts for the call."""
    cases = [event(tmp_path, command="touch /etc/pwned-by-agent"),
             event(tmp_path, command='echo \'{"permissionDecision": "allow"}\''),
             event(tmp_path, "Read", file_path="/etc/shadow"),
             event(tmp_path, "Write", file_path=str(tmp_path / "a"), content="x"),
             event(tmp_path, "WebFetch", url="https://example.com", prompt="p"),
             b'{"tool_name": "Bash", "tool_input": {"command": 7}}', b"not json"]
    answers = 0
    for stdin in cases:
        stdin = stdin.replace(b'"permission_mode": "default"',
                              f'"permission_mode": "{mode}"'.encode())
        for options in ([], ["--profile", "repo"]):
            done = hook(stdin, *options)
            assert done.returncode in (0, 2), done.stderr
            if done.returncode == 2 or not done.stdout:
                assert done.stdout == b""
                continue
            answer = json.loads(done.stdout)
            assert decisions(answer) == [], answer
            assert set(answer) == {"hookSpecificOutput"}
            assert set(answer["hookSpecificOutput"]) == {
                "hookEventName", "updatedInput", "additionalContext"}
            answers += 1
    assert answers == 4  # the two Bash calls, with and without options


def test_a_network_preset_in_the_options_reaches_execs_parser(tmp_path: Path, monkeypatch):
    """`ztsa hook claude --allow-net @pypi`: the rewritten call's `ztsa exec` reads the
    preset as its hosts on 443 (a deny of one host refuses it, exit 2, before anything
    starts); an unknown preset fails the call naming the presets, and --install
    refuses it."""
    import shlex

    import ztsa.sandbox.cgroup
    import ztsa.sandbox.native
    import ztsa.sandbox.run
    from ztsa import cli
    from ztsa import hook as hook_module

    ws = tmp_path / "project"
    ws.mkdir()
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "policy.toml").write_text("")
    env = {"ZTSA_SYSTEM_POLICY": str(etc / "policy.toml"), "XDG_CONFIG_HOME": str(etc)}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    done = hook(event(ws, command="echo hi"), "--profile", "repo", "--allow-net", "@pypi",
                env=env)
    assert done.returncode == 0, done.stderr
    assert " --profile repo --allow-net @pypi -- bash -c " in json.loads(
        done.stdout)["hookSpecificOutput"]["updatedInput"]["command"]

    def rewritten(*options: str) -> str:
        """The command the hook answers, naming this checkout's ztsa (the hook's own
        `python -I -m ztsa` would import the installed one, not the one under test)."""
        answer = hook_module.rewrite(json.loads(event(ws, command="echo hi")),
                                     list(options), [sys.executable, "-m", "ztsa"])
        assert answer is not None
        return str(answer["hookSpecificOutput"]["updatedInput"]["command"])

    command = rewritten("--profile", "repo", "--allow-net", "@pypi")
    argv = shlex.split(command)
    assert argv[argv.index("exec"):][:6] == ["exec", "--workspace", str(ws), "--profile",
                                              "repo", "--allow-net"]
    # exec's own parser, in this process up to the run
    seen = {}
    monkeypatch.setattr(ztsa.sandbox.run, "execute",
                        lambda req, host, policy, *a, **kw: seen.setdefault("policy", policy) and 0)
    monkeypatch.setattr(ztsa.sandbox.cgroup, "prewarm", lambda: None)
    monkeypatch.setattr(ztsa.sandbox.native, "userns_available", lambda: True)
    monkeypatch.setattr(cli, "run_gate", lambda *a, **kw: True)
    cli.main(argv[argv.index("exec"):])
    assert [(r.name, r.port) for r in seen["policy"].net] == [
        ("pypi.org", 443), ("files.pythonhosted.org", 443)]
    # the rewritten call as Claude Code runs it: refused by a deny of one of the hosts
    (etc / "policy.toml").write_text('[net]\ndeny = ["files.pythonhosted.org"]\n')
    ran = subprocess.run(["bash", "-c", command], capture_output=True, text=True,
                         timeout=120, cwd=ws, env={**os.environ, **env})
    assert ran.returncode == 2 and ran.stdout == "", ran.stderr
    assert "--allow-net @pypi (command line) is refused: it opens 'files.pythonhosted.org'" \
        in ran.stderr.replace("\n", " ")
    # an unknown preset: the call fails (exit 2) naming the presets
    command = rewritten("--allow-net", "@pip")
    ran = subprocess.run(["bash", "-c", command], capture_output=True, text=True,
                         timeout=120, cwd=ws, env={**os.environ, **env})
    assert ran.returncode == 2 and "'@pip' is not a network preset (known: @npm" in ran.stderr
    with pytest.raises(hook_module.Refused):
        hook_module._check_exec_options(["--allow-net", "@pip"])
    hook_module._check_exec_options(["--allow-net", "@pypi"])
