"""Without user namespaces (the nouserns mode) there is no network namespace, so nothing
can take a connection before it leaves: a name rule is its addresses, resolved once,
and a connection there carries any server name. ztsa names that as a missing control
(EXEC001), and the bytes of another name do arrive (what the docs say holds here)."""

from __future__ import annotations

import socket
import threading

RUN_MODES = ("nouserns",)

CODE = ("import socket, sys\n"
        "s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))\n"
        "s.sendall(b'GET / HTTP/1.1\\r\\nHost: another.example\\r\\n\\r\\n'); s.close()\n")


def test_the_missing_control_is_named_and_the_limit_is_what_the_docs_say(run):
    srv = socket.create_server(("127.0.0.1", 0))
    port = srv.getsockname()[1]
    got: list[bytes] = []

    def take() -> None:
        c, _ = srv.accept()
        c.settimeout(5)
        got.append(c.recv(4096))
        c.close()

    t = threading.Thread(target=take, daemon=True)
    t.start()
    proc, _ = run(run.python, "-c", CODE, str(port), allow=[f"127.0.0.1:{port}"])
    t.join(10)
    srv.close()
    assert proc.returncode == 0, proc.stderr
    assert "nor is the name checked at the connection" in proc.stderr, proc.stderr
    assert got and b"Host: another.example" in got[0]
