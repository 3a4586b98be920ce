"""`ztsa hook gemini` under a real Gemini CLI (issue #40), against a fake Gemini API on
loopback that answers with run_shell_command calls, then a text: `gemini -p`, and its
interactive mode in a pseudo-terminal (bench/agents/tui.py), whose prompts the tests
answer. Needs the CLI: ZTSA_TEST_GEMINI=/path/to/gemini (measured with 0.61.0, `npm
install @google/gemini-cli`)."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_hook_install import checkout_launcher

GEMINI = os.environ.get("ZTSA_TEST_GEMINI", "")
pytestmark = pytest.mark.skipif(not os.access(GEMINI, os.X_OK),
                                reason="set ZTSA_TEST_GEMINI to a Gemini CLI's `gemini`")


sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench" / "agents"))
from tui import Terminal  # noqa: E402


class FakeGemini(http.server.ThreadingHTTPServer):
    commands: list[str]  # the shell calls, one per turn of the model, then a text
    responses: list[str]


class Handler(http.server.BaseHTTPRequestHandler):
    server: FakeGemini

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        answered = [json.dumps(p["functionResponse"]) for c in body.get("contents", [])
                    for p in c.get("parts", []) if "functionResponse" in p]
        self.server.responses += answered
        tools = [d.get("name") for t in body.get("tools") or []
                 for d in t.get("functionDeclarations") or []]
        part: dict[str, Any] = {"text": "FAKE-ANSWER-OK"}
        if "run_shell_command" in tools and len(answered) < len(self.server.commands):
            part = {"functionCall": {"name": "run_shell_command",
                                     "args": {"command": self.server.commands[len(answered)]}}}
        out = json.dumps({"candidates": [{"content": {"role": "model", "parts": [part]},
                                          "finishReason": "STOP", "index": 0}]})
        self.send_response(200)
        streamed = "stream" in self.path
        self.send_header("content-type", "text/event-stream" if streamed
                         else "application/json")
        self.end_headers()
        self.wfile.write(f"data: {out}\r\n\r\n".encode() if streamed else out.encode())


@pytest.fixture
def api() -> Iterator[FakeGemini]:
    server = FakeGemini(("127.0.0.1", 0), Handler)
    server.responses = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


class Gemini:
    """A HOME with ztsa's hook installed, a trusted project, and `gemini -p` in it."""

    def __init__(self, base: Path, api: FakeGemini, permanent: bool = False) -> None:
        self.home, self.ws, self.api = base / "home", base / "project", api
        self.ws.mkdir(parents=True)
        os.chmod(base, 0o755)
        self.launcher = checkout_launcher(base / "bin")
        env = {**os.environ, "HOME": str(self.home)}
        subprocess.run([str(self.launcher), "hook", "gemini", "--install", "--profile",
                        "repo"], env=env, check=True, capture_output=True, timeout=60)
        settings = self.home / ".gemini" / "settings.json"
        data = json.loads(settings.read_text())
        # permanent: the prompt offers "Allow for all future sessions" too
        data["security"] = {"auth": {"selectedType": "gemini-api-key"},
                            "enablePermanentToolApproval": permanent}
        settings.write_text(json.dumps(data))
        (self.home / ".gemini" / "trustedFolders.json").write_text(
            json.dumps({str(self.ws): "TRUST_FOLDER"}))

    def policy(self, text: str) -> None:
        folder = self.home / ".gemini" / "policies"
        folder.mkdir(exist_ok=True)
        (folder / "auto-saved.toml").write_text(text)

    def env(self, term: str = "dumb") -> dict[str, str]:
        port = self.api.server_address[1]
        return {"PATH": os.environ["PATH"], "HOME": str(self.home),
                "GEMINI_API_KEY": "fake-key", "TERM": term,
                "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{port}"}

    def run(self, command: str, *flags: str) -> str:
        self.api.commands = [command]
        done = subprocess.run([GEMINI, "-p", "go", "-m", "gemini-2.5-flash", *flags],
                              cwd=self.ws, env=self.env(), capture_output=True, timeout=180)
        assert b"FAKE-ANSWER-OK" in done.stdout, done.stderr.decode()[-2000:]
        return "\n".join(self.api.responses)

    def interactive(self, log: Path, *commands: str) -> Terminal:
        """Gemini CLI's interactive mode, the prompt typed in: the model's turns call
        `commands`, one by one."""
        self.api.commands = list(commands)
        term = Terminal([GEMINI, "-m", "gemini-2.5-flash"], str(log),
                        self.env("xterm-256color"), str(self.ws))
        assert term.pump(90, (b"Type your message",)), term.screen()[-2000:]
        term.pump(3)  # past its loading
        term.type(b"go")
        term.pump(1)
        for _ in range(12):  # an Enter while it still starts is taken for nothing
            mark = len(term.seen)
            term.type(b"\r")
            if term.pump(5, (b"Shell",), since=mark):
                break
        return term

    def saved(self) -> list[dict[str, Any]]:
        """The rules of the auto-saved.toml files (the user's, the project's)."""
        import tomllib

        return [r for folder in (self.home, self.ws)
                for f in (folder / ".gemini" / "policies").glob("auto-saved.toml")
                for r in tomllib.loads(f.read_text())["rule"]]


def test_the_rewritten_call_runs_confined(tmp_path: Path, api: FakeGemini):
    g = Gemini(tmp_path, api)
    (g.home / "canary").write_text("CANARY-SECRET")
    answer = g.run(f"touch marker; cat {g.home}/canary; echo HOME=$HOME", "--yolo")
    assert (g.ws / "marker").exists()
    assert "CANARY-SECRET" not in answer and f"HOME={g.home}" not in answer


def test_a_deny_rule_keeps_its_meaning_on_the_models_command(tmp_path: Path, api: FakeGemini):
    g = Gemini(tmp_path, api)
    (g.ws / "victim").write_text("kept")
    g.policy('[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "rm"\n'
             'decision = "deny"\npriority = 100\n')
    answer = g.run("rm -f victim", "--yolo")  # before: it ran, confined, and victim went
    assert (g.ws / "victim").read_text() == "kept"
    assert "matches the model's command" in answer


@pytest.mark.parametrize("what", ["launcher", "names"])
def test_a_saved_approval_of_ztsa_approves_nothing(tmp_path: Path, api: FakeGemini,
                                                   what: str):
    g = Gemini(tmp_path, api)
    # what "Allow for all future sessions" saved for a rewritten call before each
    # command had a name of its own (0.61.0): its root, ztsa's launcher; or the
    # directory of the names
    prefix = g.launcher if what == "launcher" else g.home / ".cache" / "ztsa" / "gemini"
    g.policy(f'[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = ["{prefix}"]\n'
             'decision = "allow"\npriority = 100\nmodes = ["default", "autoEdit", "yolo"]\n')
    answer = g.run("echo x > widened")  # before: it ran with no prompt
    assert not (g.ws / "widened").exists()
    assert "approves every command" in answer


def gemini_roots(command: str) -> list[str]:
    """The roots Gemini CLI's own getCommandRoots finds in `command` (what its prompt
    approves), from the bundle chunk of this `gemini` that exports it."""
    bundle = Path(os.path.realpath(GEMINI)).parent
    chunks = [c for c in sorted(bundle.glob("chunk-*.js"))
              if f'import "./{c.name}"' in (bundle / "gemini.js").read_text()
              and "function getCommandRoots(" in c.read_text()]
    assert len(chunks) == 1, chunks
    code = (f"const m = await import({json.dumps(str(chunks[0]))}); "
            "await m.initializeShellParsers(); "
            "console.log(JSON.stringify(m.getCommandRoots(m.stripShellWrapper("
            "process.argv[1]))));")
    done = subprocess.run(["node", "--input-type=module", "-e", code, command],
                          capture_output=True, text=True, timeout=120, check=True)
    roots: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return roots


def rewritten(g: Gemini, command: str) -> str:
    """The command the installed hook gives Gemini CLI for `command`: its entry run as
    Gemini CLI runs it (`bash -c` in the project, the event on stdin)."""
    settings = json.loads((g.home / ".gemini" / "settings.json").read_text())
    entry = settings["hooks"]["BeforeTool"][0]["hooks"][0]["command"]
    event = {"hook_event_name": "BeforeTool", "tool_name": "run_shell_command",
             "cwd": str(g.ws), "session_id": "s", "tool_input": {"command": command}}
    done = subprocess.run(["bash", "-c", entry], input=json.dumps(event), text=True,
                          capture_output=True, timeout=60, cwd=g.ws,
                          env={"PATH": os.environ["PATH"], "HOME": str(g.home),
                               "GEMINI_PROJECT_DIR": str(g.ws), "GEMINI_CWD": str(g.ws)})
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["hookSpecificOutput"]["tool_input"]["command"])


def write_command(path: Path) -> str:
    """A command no rule allows, which writes a file: what a wider approval would let
    run unasked."""
    return f"python3 -c \"open('{path}', 'w').write('x')\""


def test_a_saved_approval_approves_that_command_alone(tmp_path: Path, api: FakeGemini):
    """The rule "Allow for all future sessions" writes for one rewritten call (its roots,
    by Gemini CLI's own getCommandRoots; as createTomlRule writes it) approves that
    command again, in a later session, and no other."""
    g = Gemini(tmp_path, api)
    again = f"echo again >> {g.ws}/approved"
    roots = gemini_roots(rewritten(g, again))
    assert roots == [rewritten(g, again).split()[0]]  # one name, the command's own
    g.policy(f'[[rule]]\ndecision = "allow"\npriority = 950\n'
             f'toolName = "run_shell_command"\ncommandPrefix = {json.dumps(roots)}\n'
             'modes = ["default", "autoEdit", "yolo"]\n')
    g.run(again)  # -p: what is not approved is denied (no prompt); before: refused
    assert (g.ws / "approved").read_text() == "again\n"
    answer = g.run(write_command(g.ws / "widened"))  # before: refused, nothing written
    assert not (g.ws / "widened").exists()
    assert "approves every command" not in answer  # Gemini CLI's policy said no
    g.run(again)
    assert (g.ws / "approved").read_text() == "again\n" * 2


def test_allow_for_this_session_approves_that_command_alone(tmp_path: Path, api: FakeGemini):
    """At the prompt, "Allow for this session" for one call: the same command again runs
    unasked, a different one is asked. Before, that approval named ztsa (the rewritten
    command's root) and the different command ran unasked, confined."""
    g = Gemini(tmp_path, api)
    again = f"echo again >> {g.ws}/approved"
    term = g.interactive(tmp_path / "tty.log", again, again, write_command(g.ws / "widened"))
    try:
        assert term.pump(120, (b"Allow for this session",)), term.screen()[-3000:]
        term.type(b"2")  # 2. Allow for this session (taken after a moment)
        for _ in range(240):  # until the first call has run
            if (g.ws / "approved").exists():
                break
            term.pump(0.5)
        mark = len(term.seen)
        asked = term.pump(180, (b"Allow execution", b"FAKE-ANSWER-OK"), since=mark)
        shown = term.screen(mark)
        assert asked and "Allow execution" in shown, shown[-3000:]
        # asked for the third call: the second ran unasked, the third has not run
        assert (g.ws / "approved").read_text() == "again\n" * 2
        assert not (g.ws / "widened").exists()
        term.type(b"\x1b")  # No
        term.pump(10)
    finally:
        term.close()
    assert not (g.ws / "widened").exists()


def test_allow_for_all_future_sessions_approves_that_command_alone(
        tmp_path: Path, api: FakeGemini):
    """At the prompt, "Allow for all future sessions" for one call: Gemini CLI saves a
    rule that approves that command in the next session, and no other."""
    g = Gemini(tmp_path, api, permanent=True)
    again = f"echo again >> {g.ws}/approved"
    term = g.interactive(tmp_path / "tty.log", again)
    try:
        assert term.pump(120, (b"for all future sessions",)), term.screen()[-3000:]
        mark = len(term.seen)
        term.type(b"3")  # 3. Allow this command for all future sessions
        assert term.pump(120, (b"FAKE-ANSWER-OK",), since=mark), term.screen(mark)[-3000:]
    finally:
        term.close()
    assert (g.ws / "approved").read_text() == "again\n"
    rules = g.saved()
    assert [r["commandPrefix"] for r in rules] == [[rewritten(g, again).split()[0]]]
    g.run(again)  # -p: the saved rule approves it (before: the hook refused it)
    assert (g.ws / "approved").read_text() == "again\n" * 2
    g.run(write_command(g.ws / "widened"))
    assert not (g.ws / "widened").exists()
