"""Connects without an audit log are answered in C, from C's own copy of the sockaddr:
by the file helper, or by the tracer's C loop where there is no helper. (Every connect
test of test_network_escapes.py also runs without a log.) Checked on the listeners
only."""

from __future__ import annotations


def test_ipv4_mapped_and_denials_without_a_log(run, listeners):
    allowed, denied = listeners.add_tcp("allowed"), listeners.add_tcp("denied")
    code = ("import socket\n"
            f"for family, host in ((socket.AF_INET6, '::ffff:127.0.0.1'),"
            " (socket.AF_INET, '127.0.0.1')):\n"
            f"    for port in ({allowed}, {denied}):\n"
            "        s = socket.socket(family)\n"
            "        try: s.connect((host, port)); print('ok', port)\n"
            "        except OSError as e: print('no', port, e.errno)\n")
    proc, _ = run(run.python, "-c", code, allow=[f"127.0.0.1:{allowed}"], log=False)
    assert proc.stdout.split("\n").count(f"ok {allowed}") == 2, proc.stdout
    assert proc.stdout.split("\n").count(f"no {denied} 1") == 2, proc.stdout
    assert listeners.settle() == {"allowed": 2, "denied": 0}
    assert "2 denied" in proc.stderr


def test_64_threads_and_nonblocking_connects_without_a_log(run, listeners):
    allowed, denied = listeners.add_tcp("allowed"), listeners.add_tcp("denied")
    code = ("import socket, threading, select\n"
            "def go(port):\n"
            "    s = socket.socket()\n"
            "    try: s.connect(('127.0.0.1', port))\n"
            "    except OSError: pass\n"
            f"ts = [threading.Thread(target=go, args=({allowed} if i % 2 else {denied},))"
            " for i in range(64)]\n"
            "[t.start() for t in ts]; [t.join() for t in ts]\n"
            "s = socket.socket(); s.setblocking(False)\n"
            f"print(s.connect_ex(('127.0.0.1', {allowed})))\n"
            "select.select([], [s], [], 5)\n"
            "print(s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR))\n")
    proc, _ = run(run.python, "-c", code, allow=[f"127.0.0.1:{allowed}"], log=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[0] in ("0", "115") and proc.stdout.split()[1] == "0"
    assert listeners.settle() == {"allowed": 33, "denied": 0}
