"""Fake model APIs on loopback for bench/agents/run: `fake_api.py KIND PORT LOG [CMD]`.

KIND `messages` is Anthropic's Messages API (Claude Code), `responses` OpenAI's
Responses API (Codex). Every answer is streamed. The first, when CMD is given and the
request offers tools, calls the agent's shell tool with CMD; every other is a text
(FAKE-ANSWER-OK). LOG gets one line per request (path and key) and each tool result."""

from __future__ import annotations

import http.server
import json
import sys
from typing import Any

KIND, PORT, LOG_PATH = sys.argv[1], int(sys.argv[2]), sys.argv[3]
CMD = sys.argv[4] if len(sys.argv) > 4 else None


def log(line: str) -> None:
    with open(LOG_PATH, "a", encoding="utf-8") as f:
        f.write(line + "\n")


def event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def messages(req: dict[str, Any]) -> list[bytes]:
    content = (req.get("messages") or [{}])[-1].get("content")
    results = [c for c in content or [] if isinstance(c, dict)
               and c.get("type") == "tool_result"]
    for r in results:
        log("TOOL_RESULT " + json.dumps(r.get("content"))[:2000])
    start = {"id": "msg_1", "type": "message", "role": "assistant", "content": [],
             "model": req.get("model", "x"), "stop_reason": None, "stop_sequence": None,
             "usage": {"input_tokens": 5, "output_tokens": 1}}
    out = [event("message_start", {"type": "message_start", "message": start})]
    if CMD and not results and req.get("tools"):
        call = {"command": CMD, "description": "probe"}
        block: dict[str, Any] = {"type": "tool_use", "id": "toolu_1", "name": "Bash",
                                 "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(call)}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": "FAKE-ANSWER-OK"}
        stop = "end_turn"
    out += [
        event("content_block_start", {"type": "content_block_start", "index": 0,
                                      "content_block": block}),
        event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                      "delta": delta}),
        event("content_block_stop", {"type": "content_block_stop", "index": 0}),
        event("message_delta", {"type": "message_delta", "usage": {"output_tokens": 5},
                                "delta": {"stop_reason": stop, "stop_sequence": None}}),
        event("message_stop", {"type": "message_stop"}),
    ]
    return out


def responses(req: dict[str, Any]) -> list[bytes]:
    outputs = [i for i in req.get("input", []) if isinstance(i, dict)
               and i.get("type") == "function_call_output"]
    for o in outputs:
        log("TOOL_OUTPUT " + json.dumps(o.get("output"))[:2000])
    tools = [t.get("name") for t in req.get("tools", [])]
    if CMD and not outputs and tools:
        if "exec_command" in tools:
            name, args = "exec_command", {"cmd": CMD}
        else:
            name, args = "shell", {"command": ["bash", "-lc", CMD]}
        item = {"type": "function_call", "name": name, "arguments": json.dumps(args),
                "call_id": "call_1"}
    else:
        item = {"type": "message", "role": "assistant", "id": "m1",
                "content": [{"type": "output_text", "text": "FAKE-ANSWER-OK"}]}
    usage = {"input_tokens": 1, "input_tokens_details": None, "output_tokens": 1,
             "output_tokens_details": None, "total_tokens": 2}
    return [event(n, {"type": n, **d}) for n, d in (
        ("response.created", {"response": {"id": "resp_1"}}),
        ("response.output_item.done", {"item": item}),
        ("response.completed", {"response": {"id": "resp_1", "usage": usage}}))]


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        log(f"GET {self.path}")
        self.send_response(404)
        self.end_headers()

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        key = self.headers.get("x-api-key") or self.headers.get("authorization")
        log(f"POST {self.path} key={key}")
        streamed = self.path.startswith(("/v1/messages", "/v1/responses"))
        if not streamed or "count_tokens" in self.path:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"input_tokens": 10}')
            return
        req = json.loads(body)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for chunk in (messages if KIND == "messages" else responses)(req):
            self.wfile.write(chunk)
        self.wfile.flush()


http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
