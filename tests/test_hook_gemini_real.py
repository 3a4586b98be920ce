"""`ztsa hook gemini` under a real Gemini CLI (issue #40), against a fake Gemini API on
loopback that answers one run_shell_command call, then a text. Needs the CLI:
ZTSA_TEST_GEMINI=/path/to/gemini (measured with 0.61.0, `npm install @google/gemini-cli`)."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_hook_install import checkout_launcher

GEMINI = os.environ.get("ZTSA_TEST_GEMINI", "")
pytestmark = pytest.mark.skipif(not os.access(GEMINI, os.X_OK),
                                reason="set ZTSA_TEST_GEMINI to a Gemini CLI's `gemini`")


class FakeGemini(http.server.ThreadingHTTPServer):
    command = ""
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
        if "run_shell_command" in tools and not answered:
            part = {"functionCall": {"name": "run_shell_command",
                                     "args": {"command": self.server.command}}}
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

    def __init__(self, base: Path, api: FakeGemini) -> None:
        self.home, self.ws, self.api = base / "home", base / "project", api
        self.ws.mkdir(parents=True)
        os.chmod(base, 0o755)
        self.launcher = checkout_launcher(base / "bin")
        env = {**os.environ, "HOME": str(self.home)}
        subprocess.run([str(self.launcher), "hook", "gemini", "--install", "--profile",
                        "repo"], env=env, check=True, capture_output=True, timeout=60)
        settings = self.home / ".gemini" / "settings.json"
        data = json.loads(settings.read_text())
        data["security"] = {"auth": {"selectedType": "gemini-api-key"}}
        settings.write_text(json.dumps(data))
        (self.home / ".gemini" / "trustedFolders.json").write_text(
            json.dumps({str(self.ws): "TRUST_FOLDER"}))

    def policy(self, text: str) -> None:
        folder = self.home / ".gemini" / "policies"
        folder.mkdir(exist_ok=True)
        (folder / "auto-saved.toml").write_text(text)

    def run(self, command: str, *flags: str) -> str:
        self.api.command = command
        port = self.api.server_address[1]
        env = {"PATH": os.environ["PATH"], "HOME": str(self.home),
               "GEMINI_API_KEY": "fake-key", "TERM": "dumb",
               "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{port}"}
        done = subprocess.run([GEMINI, "-p", "go", "-m", "gemini-2.5-flash", *flags],
                              cwd=self.ws, env=env, capture_output=True, timeout=180)
        assert b"FAKE-ANSWER-OK" in done.stdout, done.stderr.decode()[-2000:]
        return "\n".join(self.api.responses)


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


def test_a_saved_approval_of_ztsa_approves_nothing(tmp_path: Path, api: FakeGemini):
    g = Gemini(tmp_path, api)
    # what "Allow for all future sessions" saves for a rewritten call (0.61.0): its root
    g.policy(f'[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = ["{g.launcher}"]\n'
             'decision = "allow"\npriority = 100\nmodes = ["default", "autoEdit", "yolo"]\n')
    answer = g.run("echo x > widened")  # before: it ran with no prompt
    assert not (g.ws / "widened").exists()
    assert "approves every command" in answer
