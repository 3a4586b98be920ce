"""What a new user does first (issue #40), automated, as an ordinary user with a HOME of
the test's own: ztsa installed from a wheel of this checkout into a fresh virtual
environment (the README's set-up), the Claude Code hook installed, a Bash call of the
real Claude Code confined through it, the person's allow and deny rules and a saved
approval judging the model's own command, the same call blocked once the hook's ztsa
cannot run or a project overrides its prefix, `--agent claude` over a state directory an
unconfined session has used, and `--allow-net @npm` against a registry stand-in in a
network namespace of the test's own.

Claude Code runs against a fake Messages API on loopback (bench/agents/fake_api.py): the
fake model answers with one Bash tool_use, and the test judges by the tool result the
agent sent back to the API and by files (the real HOME not visible, a file outside the
workspace not written), never by ztsa's own report. Claude Code is the version the
preset was tested with: `$ZTSA_TEST_CLAUDE` names an installed one, else the test
installs it with npm (the registries are reachable in CI) and skips, saying why, where
it cannot. The steps run in order and share the user's home: each is a test."""

from __future__ import annotations

import base64
import contextlib
import ctypes
import functools
import hashlib
import http.server
import io
import json
import os
import pwd
import shutil
import socket
import ssl
import struct
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
FAKE_API = ROOT / "bench" / "agents" / "fake_api.py"
# the escape suite's unprivileged user (integration/escapes/conftest.py), one a worker
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
USER = "ztsa-escape" + ("" if _WORKER == "gw0" else f"-{_WORKER}")
CLAUDE_PACKAGE = "@anthropic-ai/claude-code"
SENTINEL = "walk-secret-" + os.urandom(6).hex()  # in the real HOME's ~/.ssh/id_rsa
REGISTRY_ADDR = "203.0.113.10"  # the registry stand-in: off-link, behind a router
CLONE_NEWNET = 0x40000000
TARBALL = "https://registry.npmjs.org/walk-pkg/-/walk-pkg-1.0.0.tgz"

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="ztsa exec is Linux's")


def _claude_version() -> str:
    from ztsa.sandbox.agents import AGENTS

    return AGENTS["claude"].tested[0]


class Newcomer:
    """The ordinary user: its HOME, its scratch directory outside that HOME, and how to
    run a command as it (setpriv from root; the caller itself when not root)."""

    def __init__(self, top: Path, home: Path) -> None:
        self.top = top
        self.home = home
        self.venv = home / ".venvs" / "ztsa"
        self.launcher = self.venv / "bin" / "ztsa"
        self.uid, self.gid = (os.getuid(), os.getgid())
        if os.geteuid() == 0:
            pw = pwd.getpwnam(USER)
            self.uid, self.gid = pw.pw_uid, pw.pw_gid

    def own(self, *paths: Path) -> None:
        """Give paths (and what is under them) to the user."""
        if os.geteuid() != 0:
            return
        for top in paths:
            for root, dirs, files in os.walk(top):
                for name in [".", *dirs, *files]:
                    os.lchown(os.path.join(root, name), self.uid, self.gid)

    def mkdir(self, path: Path, mode: int = 0o755) -> Path:
        path.mkdir(parents=True, exist_ok=True)
        os.chmod(path, mode)
        self.own(path)
        return path

    def argv(self, argv: list[str], env: dict[str, str] | None = None,
             netns: str | None = None) -> list[str]:
        base = {"HOME": str(self.home), "PATH": "/usr/local/bin:/usr/bin:/bin",
                "LANG": "C.UTF-8", "USER": USER, "LOGNAME": USER, "TERM": "dumb"}
        setenv = ["env", "-i", *(f"{k}={v}" for k, v in {**base, **(env or {})}.items())]
        prefix = ["ip", "netns", "exec", netns] if netns else []
        if os.geteuid() == 0:
            prefix += ["setpriv", "--reuid", str(self.uid), "--regid", str(self.gid),
                       "--clear-groups"]
        return [*prefix, *setenv, *argv]

    def run(self, argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None,
            timeout: float = 120, netns: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.argv(argv, env, netns), cwd=cwd or self.top,
                              capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)


def _ensure_user() -> None:
    try:
        pwd.getpwnam(USER)
    except KeyError:
        made = subprocess.run(["useradd", "--system", "--no-create-home", "--shell",
                               "/bin/sh", USER], capture_output=True, text=True)
        # 9: made meanwhile by another test process (a parallel worker, another run)
        if made.returncode not in (0, 9):
            raise AssertionError(f"useradd {USER}: {made.stderr}") from None


@pytest.fixture(scope="module")
def newcomer(built: Any) -> Iterator[Newcomer]:
    """Step 1: ztsa installed as the README says, from a wheel of this checkout (the
    session's, integration/conftest.py), into a fresh virtual environment in the user's
    own HOME."""
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as an ordinary user needs setpriv (apt-get install "
                        "util-linux)")
        _ensure_user()
    top = Path(tempfile.mkdtemp(prefix="ztsa-walk-"))
    os.chmod(top, 0o755)
    try:
        home = top / "home"
        user = Newcomer(top, home)
        user.mkdir(home, 0o700)
        # a copy the user can read (the session's is in root's temporary directory)
        wheel = Path(shutil.copy(built.wheel, user.mkdir(top / "wheel")))
        os.chmod(wheel, 0o644)
        probe = user.run(["python3", "-c", "import ensurepip, venv"])
        if probe.returncode != 0:
            pytest.skip("python3 has no venv module for the README's set-up (apt-get "
                        "install python3-venv): " + probe.stderr.strip()[-200:])
        proc = user.run(["sh", "-c", 'python3 -m venv "$HOME/.venvs/ztsa" && '
                         '"$HOME/.venvs/ztsa/bin/pip" install -q --disable-pip-version-check '
                         f'"{wheel}"'], timeout=600)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        version = user.run([str(user.launcher), "--version"])
        from ztsa import __version__

        assert version.stdout.strip() == f"ztsa, version {__version__}", version
        # what the hook and --agent steps must keep away from the tree
        user.mkdir(home / ".ssh", 0o700)
        (home / ".ssh" / "id_rsa").write_text(SENTINEL + "\n")
        os.chmod(home / ".ssh" / "id_rsa", 0o600)
        user.own(home / ".ssh")
        yield user
    finally:
        shutil.rmtree(top, ignore_errors=True)


@pytest.fixture(scope="module")
def claude(newcomer: Newcomer) -> str:
    """The real Claude Code, at the version the preset was tested with."""
    version = _claude_version()
    named = os.environ.get("ZTSA_TEST_CLAUDE")
    if named:
        path = named
    else:
        if shutil.which("npm") is None:
            pytest.skip(f"Claude Code is not installable here: no npm to install "
                        f"{CLAUDE_PACKAGE}@{version} (or name one by ZTSA_TEST_CLAUDE)")
        prefix = newcomer.mkdir(newcomer.top / "agents")  # outside the HOME ztsa hides
        # this machine's way to the registry (a proxy and its CA), for this install only
        reach = {k: v for k, v in os.environ.items() if k.lower() in (
            "https_proxy", "http_proxy", "no_proxy", "node_extra_ca_certs")
            or k.lower().startswith("npm_config_")}
        proc = newcomer.run(["npm", "install", "--no-audit", "--no-fund", "--prefix",
                             str(prefix), f"{CLAUDE_PACKAGE}@{version}"], env=reach,
                            timeout=600)
        if proc.returncode != 0:
            pytest.skip(f"Claude Code is not installable here (npm install "
                        f"{CLAUDE_PACKAGE}@{version} exited {proc.returncode}: "
                        f"{proc.stderr.strip()[-300:]})")
        path = str(prefix / "node_modules" / ".bin" / "claude")
    probe = newcomer.run([path, "--version"], timeout=60)
    if probe.returncode != 0:
        pytest.skip(f"Claude Code at {path} does not run as {USER}: "
                    f"{(probe.stderr or probe.stdout).strip()[-300:]}")
    return path


@contextlib.contextmanager
def fake_api(command: str, log: Path) -> Iterator[int]:
    """bench/agents/fake_api.py on loopback, answering the first request that offers
    tools with a Bash tool_use running `command`; its log gets each tool result."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log.write_text("")
    api = subprocess.Popen([sys.executable, str(FAKE_API), "messages", str(port), str(log),
                            command])
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), 1).close()
                break
            except OSError:
                time.sleep(0.05)
        yield port
    finally:
        api.terminate()
        api.wait(10)


def claude_env(port: int) -> dict[str, str]:
    # no npm, no venv on PATH: the hook must not depend on the person's shell
    return {"ANTHROPIC_API_KEY": "sk-walk-" + os.urandom(8).hex(),
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}", "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}


def tool_results(log: Path) -> list[Any]:
    return [json.loads(line.split(" ", 1)[1]) for line in log.read_text().splitlines()
            if line.startswith("TOOL_RESULT ")]


def results_text(log: Path) -> str:
    return "\n".join(as_text(r) for r in tool_results(log))


def as_text(result: Any) -> str:
    """A tool result's content (a string, or a list of text blocks) as text."""
    if isinstance(result, list):
        return "\n".join(str(b.get("text", b)) if isinstance(b, dict) else str(b)
                         for b in result)
    return str(result)


def _project(user: Newcomer, name: str) -> Path:
    ws = user.mkdir(user.top / name)
    (ws / "README.md").write_text("a project\n")
    user.own(ws)
    return ws


# -- step 2: the hook installed, a Bash call confined ----------------------------------
def _wrapper(user: Newcomer) -> Path:
    return user.home / ".config" / "ztsa" / "claude-shell-user"


def test_the_hook_installed_confines_a_bash_call(newcomer: Newcomer, claude: str) -> None:
    user = newcomer
    proc = user.run([str(user.launcher), "hook", "claude", "--install", "--allow-net", "@npm"])
    assert proc.returncode == 0, proc.stderr
    settings = json.loads((user.home / ".claude" / "settings.json").read_text())
    assert settings["env"]["CLAUDE_CODE_SHELL_PREFIX"] == str(_wrapper(user))
    guard = settings["hooks"]["PreToolUse"][0]["hooks"][0]
    assert str(user.launcher) in guard["args"][1], guard  # by its absolute path
    assert str(user.launcher) in _wrapper(user).read_text()
    ws = _project(user, "ws-hook")
    outside = user.home / "written-by-the-agent"
    log = user.top / "api-hook.log"
    bash = (f'echo "HOME=$HOME"; cat {user.home}/.ssh/id_rsa; ls -a {user.home}; '
            f'touch {outside}; echo bash-ran')
    with fake_api(bash, log) as port:
        run = user.run([claude, "-p", "run it", "--allowedTools", "Bash"], cwd=ws,
                       env=claude_env(port), timeout=180)
    assert run.returncode == 0 and "FAKE-ANSWER-OK" in run.stdout, run.stdout + run.stderr
    results = [as_text(r) for r in tool_results(log)]
    assert len(results) == 1, log.read_text()
    result = results[0]
    assert "bash-ran" in result, result  # it ran, confined
    home = next(line for line in result.splitlines() if line.startswith("HOME="))
    assert home != f"HOME={user.home}" and "/ztsa-run-" in home, result  # a private one
    assert SENTINEL not in result and ".venvs" not in result, result
    assert not outside.exists()


def _permissions(user: Newcomer, **rules: list[str]) -> None:
    """The person's own permission rules, written into their settings beside ztsa's."""
    path = user.home / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    settings["permissions"] = rules
    path.write_text(json.dumps(settings, indent=2))


# -- step 2b: the person's rules judge the model's command -------------------------------
def test_a_deny_rule_still_denies_the_models_command(newcomer: Newcomer, claude: str) -> None:
    """Issue #40: when the hook rewrote the call, Claude Code matched rules against
    `ztsa exec ... -- bash -c '...'`: `Bash(rm -rf:*)` no longer matched, and the call
    was asked about instead of denied. Now the rule sees the model's command."""
    user = newcomer
    _permissions(user, deny=["Bash(rm -rf:*)"], allow=["Bash(touch:*)"])
    ws = _project(user, "ws-deny")
    victim = user.mkdir(ws / "x")
    (victim / "keep").write_text("precious\n")
    user.own(victim)
    log = user.top / "api-deny.log"
    with fake_api("rm -rf ./x", log) as port:  # no --allowedTools: the rules alone
        run = user.run([claude, "-p", "run it"], cwd=ws, env=claude_env(port), timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    assert (victim / "keep").read_text() == "precious\n"
    assert "has been denied" in results_text(log), log.read_text()


def test_an_allow_rule_runs_the_call_confined_without_a_prompt(newcomer: Newcomer,
                                                               claude: str) -> None:
    """`Bash(touch:*)` and `Bash(./probe.sh)`: the call runs with no prompt (in -p there
    is none: an unallowed call is refused), and it runs confined: the script, which
    Claude Code cannot read into, finds neither the real HOME nor the key in it."""
    user = newcomer
    _permissions(user, deny=["Bash(rm -rf:*)"], allow=["Bash(touch:*)", "Bash(./probe.sh)"])
    ws = _project(user, "ws-allow")
    (ws / "probe.sh").write_text(f'#!/bin/sh\necho "HOME=$HOME"\ncat {user.home}/.ssh/id_rsa\n'
                                 "echo probe-ran\n")
    os.chmod(ws / "probe.sh", 0o755)
    user.own(ws)
    log = user.top / "api-allow.log"
    with fake_api("touch a && ./probe.sh", log) as port:
        run = user.run([claude, "-p", "run it"], cwd=ws, env=claude_env(port), timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    result = results_text(log)
    assert (ws / "a").exists() and "probe-ran" in result, result
    assert f"HOME={user.home}\n" not in result and "/ztsa-run-" in result, result
    assert SENTINEL not in result, result


def test_what_a_prompt_would_save_is_the_models_command(newcomer: Newcomer,
                                                        claude: str) -> None:
    """Claude Code asks (its SDK's permission prompt over stdio, and a PermissionRequest
    hook) with the rule a "don't ask again" would save. With the rewrite that was
    `Bash(/path/to/ztsa exec *)`, which approves every later command; now it is the
    model's own command."""
    user = newcomer
    _permissions(user, deny=["Bash(rm -rf:*)"], allow=["Bash(touch:*)"])
    recorded = user.top / "permission-requests.jsonl"
    recorded.write_text("")
    os.chmod(recorded, 0o666)
    path = user.home / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    settings["hooks"]["PermissionRequest"] = [{"matcher": "Bash", "hooks": [{
        "type": "command", "command": "/bin/sh", "args": ["-c", f"cat >> {recorded}"]}]}]
    path.write_text(json.dumps(settings, indent=2))
    ws = _project(user, "ws-ask")
    log = user.top / "api-ask.log"
    command = 'python3 -c "print(6*7)"'
    requests = []
    with fake_api(command, log) as port:
        agent = subprocess.Popen(
            user.argv([claude, "-p", "--input-format", "stream-json", "--output-format",
                       "stream-json", "--verbose", "--permission-prompt-tool", "stdio"],
                      claude_env(port)),
            cwd=ws, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        assert agent.stdin is not None and agent.stdout is not None
        try:
            agent.stdin.write(json.dumps({"type": "user", "message": {
                "role": "user", "content": "run it"}}) + "\n")
            agent.stdin.flush()
            for line in agent.stdout:
                message = json.loads(line)
                if message.get("type") == "control_request":
                    requests.append(message["request"])
                    agent.stdin.write(json.dumps({"type": "control_response", "response": {
                        "subtype": "success", "request_id": message["request_id"],
                        "response": {"behavior": "deny", "message": "not now"}}}) + "\n")
                    agent.stdin.flush()
                if message.get("type") == "result":
                    break
        finally:
            agent.stdin.close()
            agent.wait(60)
    asked = [r for r in requests if r.get("subtype") == "can_use_tool"]
    assert len(asked) == 1, requests
    expected = [{"toolName": "Bash", "ruleContent": command}]
    assert asked[0]["input"]["command"] == command
    assert [s["rules"] for s in asked[0]["permission_suggestions"]] == [expected], asked
    hooked = [json.loads(line) for line in recorded.read_text().splitlines() if line.strip()]
    assert [s["rules"] for h in hooked for s in h["permission_suggestions"]] == [expected]
    assert "not now" in results_text(log)
    del settings["hooks"]["PermissionRequest"]
    del settings["permissions"]
    path.write_text(json.dumps(settings, indent=2))


# -- step 3: the hook's ztsa made unrunnable, the call blocked -------------------------
def test_a_hook_whose_ztsa_cannot_run_blocks_the_call(newcomer: Newcomer,
                                                      claude: str) -> None:
    user = newcomer
    settings = user.home / ".claude" / "settings.json"
    assert settings.exists(), "the previous step installs the hook"
    moved = user.launcher.with_name("ztsa.moved-away")
    ws = _project(user, "ws-blocked")
    outside = user.home / "written-unconfined"
    log = user.top / "api-blocked.log"
    os.rename(user.launcher, moved)
    try:
        with fake_api(f"touch {outside}; echo unconfined-ran", log) as port:
            run = user.run([claude, "-p", "run it", "--allowedTools", "Bash"], cwd=ws,
                           env=claude_env(port), timeout=180)
        assert run.returncode == 0, run.stdout + run.stderr
        results = [as_text(r) for r in tool_results(log)]
        assert len(results) == 1, log.read_text()
        assert not outside.exists()  # the command's effect did not happen
        assert "unconfined-ran" not in results[0], results
        assert "the call is blocked" in results[0], results  # and the agent was told
        # the prefix fails closed by itself: without the guard, the wrapper's ztsa is
        # missing and Claude Code runs nothing but the wrapper
        text = settings.read_text()
        without_guard = json.loads(text)
        del without_guard["hooks"]
        settings.write_text(json.dumps(without_guard))
        try:
            with fake_api(f"touch {outside}; echo unconfined-ran", log) as port:
                run = user.run([claude, "-p", "run it", "--allowedTools", "Bash"], cwd=ws,
                               env=claude_env(port), timeout=180)
        finally:
            settings.write_text(text)
        assert run.returncode == 0, run.stdout + run.stderr
        assert not outside.exists()
        assert "unconfined-ran" not in results_text(log), log.read_text()
    finally:
        os.rename(moved, user.launcher)


# -- step 3b: a project that sets its own prefix --------------------------------------------
@pytest.mark.parametrize("prefix", ["", "/bin/sh -c"])
def test_a_project_that_overrides_the_prefix_is_denied(newcomer: Newcomer, claude: str,
                                                       prefix: str) -> None:
    """A project's .claude/settings.json `env` wins over the user's: an empty prefix
    would run the call unconfined, another would run it through the project's program.
    The guard (in the user's settings, exec form: no prefix before it) denies it."""
    user = newcomer
    ws = _project(user, "ws-override-" + str(len(prefix)))
    user.mkdir(ws / ".claude")
    (ws / ".claude" / "settings.json").write_text(json.dumps(
        {"env": {"CLAUDE_CODE_SHELL_PREFIX": prefix}}))
    user.own(ws)
    outside = user.home / "written-by-the-project"
    log = user.top / "api-override.log"
    with fake_api(f"touch {outside}; echo unconfined-ran", log) as port:
        run = user.run([claude, "-p", "run it", "--allowedTools", "Bash"], cwd=ws,
                       env=claude_env(port), timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    result = results_text(log)
    assert not outside.exists() and "unconfined-ran" not in result, result
    assert "CLAUDE_CODE_SHELL_PREFIX is" in result, result


# -- step 4: --agent claude over a used state directory --------------------------------
def test_agent_claude_with_a_used_state_directory(newcomer: Newcomer, claude: str) -> None:
    user = newcomer
    ws = _project(user, "ws-agent")
    # the hook installed in step 2 would block every Bash call of the agent under ztsa
    # (it cannot run ztsa there): ztsa says so before the run, and the person removes it
    proc = user.run([str(user.launcher), "exec", "--profile", "dependency", "--agent",
                     "claude", "--", "true"], cwd=ws)
    assert proc.returncode == 0, proc.stderr
    assert "holds ztsa's Bash hook: under --agent claude" in proc.stderr, proc.stderr
    proc = user.run([str(user.launcher), "hook", "claude", "--uninstall"])
    assert proc.returncode == 0, proc.stderr
    log = user.top / "api-agent.log"
    state = user.home / ".claude"
    with fake_api('echo "HOME=$HOME"; echo bash-ran', log) as port:
        # an ordinary, unconfined session first: what makes a used ~/.claude
        first = user.run([claude, "-p", "run it", "--allowedTools", "Bash"], cwd=ws,
                         env=claude_env(port), timeout=180)
        assert first.returncode == 0, first.stdout + first.stderr
        assert f"HOME={user.home}" in results_text(log), log.read_text()
        used = set(os.listdir(state))
        assert {"session-env", "sessions", "shell-snapshots", "projects"} <= used, used
        sourced = {e: sorted(os.listdir(state / e)) for e in ("session-env",
                                                              "shell-snapshots")}
        log.write_text("")
        env = claude_env(port)
        # the profile docs/agents.md runs an agent with (under untrusted, a wildcard
        # listener anywhere on the machine blocks once --allow-net opens loopback)
        proc = user.run([str(user.launcher), "exec", "--profile", "dependency",
                         "--agent", "claude", "--secret",
                         "ANTHROPIC_API_KEY", "--env",
                         f"ANTHROPIC_BASE_URL={env['ANTHROPIC_BASE_URL']}",
                         "--allow-net", f"127.0.0.1:{port}", "--", claude, "-p", "run it",
                         "--allowedTools", "Bash"], cwd=ws, env=env, timeout=240)
    assert proc.returncode == 0 and "FAKE-ANSWER-OK" in proc.stdout, proc.stderr
    result = results_text(log)
    assert "bash-ran" in result and "/ztsa-run-" in result, result
    assert "EROFS" not in result and "read-only" not in result.lower(), result
    # what later unconfined sessions source gained nothing
    assert {e: sorted(os.listdir(state / e)) for e in sourced} == sourced


# -- step 5: a registry preset, against a registry stand-in reached by name ------------
def _certs(out: Path) -> tuple[Path, Path, Path]:
    """(CA certificate, server certificate, server key) for registry.npmjs.org."""
    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=out, check=True, capture_output=True)

    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
            "-subj", "/CN=ztsa walkthrough CA", "-addext",
            "basicConstraints=critical,CA:TRUE", "-addext",
            "keyUsage=critical,keyCertSign,cRLSign")
    openssl("req", *ec, "-keyout", "srv.key", "-out", "srv.csr", "-subj",
            "/CN=registry.npmjs.org")
    (out / "ext").write_text("subjectAltName=DNS:registry.npmjs.org\n"
                             "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "srv.pem", "-days", "2", "-extfile", "ext")
    for name in ("ca.pem", "srv.pem"):
        os.chmod(out / name, 0o644)
    return out / "ca.pem", out / "srv.pem", out / "srv.key"


def _package(name: str, version: str) -> bytes:
    """An npm tarball: package/package.json and package/index.js."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for rel, text in (("package.json", json.dumps({"name": name, "version": version,
                                                       "main": "index.js"})),
                          ("index.js", f"module.exports = {name + ' works'!r};\n")):
            data = text.encode()
            info = tarfile.TarInfo("package/" + rel)
            info.size, info.mode, info.mtime = len(data), 0o644, 1700000000
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _dns_answer(query: bytes, names: dict[str, str]) -> bytes | None:
    """An answer to a DNS query: A records for `names`, nothing for their other types,
    NXDOMAIN for every other name."""
    if len(query) < 17:
        return None
    labels, i = [], 12
    while i < len(query) and query[i]:
        labels.append(query[i + 1 : i + 1 + query[i]].decode("ascii", "replace"))
        i += 1 + query[i]
    question = query[12 : i + 5]
    qtype = struct.unpack_from(">H", query, i + 1)[0]
    name = ".".join(labels).lower()
    if name not in names:
        return query[:2] + struct.pack(">HHHHH", 0x8183, 1, 0, 0, 0) + question
    if qtype != 1:
        return query[:2] + struct.pack(">HHHHH", 0x8180, 1, 0, 0, 0) + question
    return (query[:2] + struct.pack(">HHHHH", 0x8180, 1, 1, 0, 0) + question + b"\xc0\x0c"
            + struct.pack(">HHIH", 1, 1, 60, 4) + socket.inet_aton(names[name]))


class Registry:
    """Two network namespaces of the test's own: the world, where ztsa runs, with a
    resolver on 127.0.0.1:53 (its resolv.conf's) answering registry.npmjs.org with
    REGISTRY_ADDR; and behind a veth pair (a router between them) that address, where
    an HTTPS registry serves one package. Nothing leaves the two namespaces."""

    def __init__(self, top: Path, ca_dir: Path) -> None:
        self.name = f"ztsa-walk-{os.urandom(4).hex()}"
        self.far = self.name + "-far"
        self.top = top
        self.ca_dir = ca_dir
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.requests: list[tuple[str, str]] = []  # (Host, path)
        self.queries: list[bytes] = []
        self.sockets: list[socket.socket] = []
        self.threads: list[threading.Thread] = []
        self.server: http.server.ThreadingHTTPServer | None = None
        self.tarball = _package("walk-pkg", "1.0.0")

    def in_ns(self, ns: str, fn: Callable[[], Any]) -> Any:
        """fn() in a thread that joined namespace ns (a socket made there stays there)."""
        out: dict[str, Any] = {}

        def target() -> None:
            try:
                libc = ctypes.CDLL(None, use_errno=True)
                fd = os.open(f"/run/netns/{ns}", os.O_RDONLY)
                try:
                    if libc.setns(fd, CLONE_NEWNET) != 0:
                        raise OSError(ctypes.get_errno(), "setns")
                finally:
                    os.close(fd)
                out["value"] = fn()
            except BaseException as exc:  # handed to the caller
                out["error"] = exc

        t = threading.Thread(target=target)
        t.start()
        t.join()
        if "error" in out:
            raise out["error"]
        return out.get("value")

    def _thread(self, fn: Callable[..., None], *args: Any) -> None:
        t = threading.Thread(target=fn, args=args, daemon=True)
        t.start()
        self.threads.append(t)

    def start(self) -> None:
        ip = functools.partial(subprocess.run, check=True, capture_output=True)
        ip(["ip", "netns", "add", self.name])
        ip(["ip", "netns", "add", self.far])
        w, f = ["ip", "-n", self.name], ["ip", "-n", self.far]
        for cmd in ([*w, "link", "set", "lo", "up"], [*f, "link", "set", "lo", "up"],
                    [*w, "link", "add", "zw0", "type", "veth", "peer", "name", "zf0",
                     "netns", self.far],
                    [*w, "addr", "add", "192.0.2.1/30", "dev", "zw0"],
                    [*f, "addr", "add", "192.0.2.2/30", "dev", "zf0"],
                    [*w, "link", "set", "zw0", "up"], [*f, "link", "set", "zf0", "up"],
                    [*f, "addr", "add", f"{REGISTRY_ADDR}/32", "dev", "lo"],
                    [*w, "route", "add", f"{REGISTRY_ADDR}/32", "via", "192.0.2.2"],
                    [*f, "route", "add", "default", "via", "192.0.2.1"]):
            ip(cmd)
        etc = Path("/etc/netns") / self.name
        etc.mkdir(parents=True)
        (etc / "resolv.conf").write_text("nameserver 127.0.0.1\n"
                                         "options timeout:2 attempts:2\n")
        os.chmod(etc / "resolv.conf", 0o644)

        def resolver() -> socket.socket:
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("127.0.0.1", 53))
            return s

        udp = self.in_ns(self.name, resolver)
        udp.settimeout(0.2)
        self.sockets.append(udp)
        self._thread(self._serve_dns, udp)
        self._https()

    def _serve_dns(self, s: socket.socket) -> None:
        while not self.stop.is_set():
            try:
                query, peer = s.recvfrom(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            with self.lock:
                self.queries.append(query)
            answer = _dns_answer(query, {"registry.npmjs.org": REGISTRY_ADDR})
            if answer is not None:
                with contextlib.suppress(OSError):
                    s.sendto(answer, peer)

    def _https(self) -> None:
        ca, cert, key = _certs(self.ca_dir)
        registry = self
        tgz = self.tarball
        self.integrity = "sha512-" + base64.b64encode(hashlib.sha512(tgz).digest()).decode()
        packument = json.dumps({
            "name": "walk-pkg", "dist-tags": {"latest": "1.0.0"},
            "versions": {"1.0.0": {
                "name": "walk-pkg", "version": "1.0.0", "main": "index.js",
                "dist": {"tarball": TARBALL, "shasum": hashlib.sha1(tgz).hexdigest(),
                         "integrity": self.integrity}}}}).encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def _reply(self, code: int, body: bytes, kind: str) -> None:
                self.send_response(code)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                with registry.lock:
                    registry.requests.append((self.headers.get("host", ""), self.path))
                if self.path == "/walk-pkg":
                    self._reply(200, packument, "application/json")
                elif self.path == "/walk-pkg/-/walk-pkg-1.0.0.tgz":
                    self._reply(200, tgz, "application/octet-stream")
                else:
                    self._reply(404, b'{"error":"not found"}', "application/json")

            do_POST = do_GET  # npm's audit: not found

        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(cert, key)

        def make() -> http.server.ThreadingHTTPServer:
            server = http.server.ThreadingHTTPServer((REGISTRY_ADDR, 443), Handler)
            server.socket = ctx.wrap_socket(server.socket, server_side=True)
            return server

        self.server = self.in_ns(self.far, make)
        self._thread(self.server.serve_forever, 0.05)  # shutdown() waits one poll
        self.ca = ca

    def close(self) -> None:
        self.stop.set()
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
        for s in self.sockets:
            s.close()
        for t in self.threads:
            t.join(2)
        shutil.rmtree(Path("/etc/netns") / self.name, ignore_errors=True)
        with contextlib.suppress(OSError):
            os.rmdir("/etc/netns")  # only when empty: another test's may be there
        for ns in (self.name, self.far):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


@pytest.fixture
def registry(newcomer: Newcomer) -> Iterator[Registry]:
    if os.geteuid() != 0:
        pytest.skip("the registry stand-in is a network namespace: making one needs root")
    for tool in ("ip", "openssl", "npm"):
        if shutil.which(tool) is None:
            pytest.skip(f"the registry step needs `{tool}` (iproute2, openssl, npm)")
    reg = Registry(newcomer.top, newcomer.mkdir(newcomer.top / "ca"))
    try:
        reg.start()
        yield reg
    finally:
        reg.close()


# the tree's last step: one lookup of a name outside the preset, its time written down
# first, then the tree waits, so that a line said only at the end would come too late
REFUSED = "registry.yarnpkg.com"
LOOKUP = (f"require('fs').writeFileSync('t0', String(Date.now() / 1000));"
          f"require('dns').lookup('{REFUSED}', e => {{ console.log('lookup', e && e.code);"
          f" setTimeout(() => console.log('waited'), 3000); }});")


def test_npm_ci_through_the_preset_and_a_refusal_said_at_once(
        newcomer: Newcomer, registry: Registry) -> None:
    user = newcomer
    ws = user.mkdir(user.top / "ws-npm")
    deps = {"walk-pkg": "^1.0.0"}
    (ws / "package.json").write_text(json.dumps({
        "name": "walk-app", "version": "1.0.0", "private": True, "dependencies": deps},
        indent=2) + "\n")
    # with its lockfile, as a project is cloned (without one, the gate's SUP001 blocks
    # under the default profile)
    (ws / "package-lock.json").write_text(json.dumps({
        "name": "walk-app", "version": "1.0.0", "lockfileVersion": 3, "requires": True,
        "packages": {"": {"name": "walk-app", "version": "1.0.0", "dependencies": deps},
                     "node_modules/walk-pkg": {"version": "1.0.0", "resolved": TARBALL,
                                               "integrity": registry.integrity}}},
        indent=2) + "\n")
    # a private CA, as behind a company's proxy: the person's ~/.npmrc names it, and
    # ztsa shows that key to the tree
    (user.home / ".npmrc").write_text(f"cafile={registry.ca}\n")
    user.own(ws, user.home / ".npmrc")
    script = ("npm ci && node -e \"console.log(require('walk-pkg'))\" && "
              f"node -e \"{LOOKUP}\"")
    argv = user.argv([str(user.launcher), "exec", "--allow-net", "@npm", "--", "sh", "-c",
                      script], netns=registry.name)
    lines: list[tuple[float, str]] = []
    proc = subprocess.Popen(argv, cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True)
    assert proc.stderr is not None and proc.stdout is not None

    def read_stderr() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append((time.time(), line))

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        out = proc.stdout.read()
        proc.wait(180)
    finally:
        if proc.poll() is None:
            proc.kill()
        reader.join(10)
    ended = time.time()
    err = "".join(line for _, line in lines)
    assert proc.returncode == 0, out + err
    assert "walk-pkg works" in out, out + err  # installed, and it loads
    assert (ws / "node_modules" / "walk-pkg" / "index.js").exists()
    got = {path for _, path in registry.requests}
    assert "/walk-pkg/-/walk-pkg-1.0.0.tgz" in got, registry.requests
    assert {h for h, _ in registry.requests} == {"registry.npmjs.org"}, registry.requests
    # the name outside the preset: never asked upstream, refused, and said on stderr
    # within a second of the tree's lookup, while the tree still ran
    assert "lookup ENOTFOUND" in out, out
    asked = b"".join(registry.queries)
    assert REFUSED.split(".")[1].encode() not in asked, registry.queries
    said = [t for t, line in lines if REFUSED in line and "refused" in line]
    assert said, err
    t0 = float((ws / "t0").read_text())
    print(f"the refusal of {REFUSED} was said {said[0] - t0:.3f} s after the lookup")
    assert said[0] - t0 < 1.0, (said[0] - t0, err)
    assert said[0] < ended - 2, (ended - said[0], err)
