"""`ztsa exec --audit-format ocsf`: a real run's audit log as OCSF events, each checked
against the required attributes of its class (OCSF 1.x, from the schema's
events/base_event.json, system/system.json, system/process_activity.json,
system/file_activity.json, network/network_activity.json, network/dns_activity.json and
the objects they name), and nothing of ztsa's own log lost."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from realenv import host_port_53

# class_uid -> (name, its activity_ids, required attributes beyond the base event's)
CLASSES: dict[int, tuple[str, set[int], list[str]]] = {
    0: ("Base Event", {0, 99}, []),
    1001: ("File System Activity", {*range(15), 99}, ["actor", "device", "file"]),
    1003: ("Kernel Activity", {0, 1, 2, 3, 4, 99}, ["actor", "device", "kernel"]),
    1007: ("Process Activity", {*range(6), 99}, ["actor", "device", "process"]),
    4001: ("Network Activity", {*range(8), 99}, []),
    4003: ("DNS Activity", {0, 1, 2, 6, 99}, []),
}
BASE = ["activity_id", "category_uid", "class_uid", "metadata", "severity_id", "time",
        "type_uid"]
SEVERITIES = {0, 1, 2, 3, 4, 5, 6, 99}
ACTOR_ANY = ("process", "user", "iam_role", "invoked_by", "session", "app_name", "app_uid")
ENDPOINT_ANY = ("ip", "uid", "name", "hostname", "svc_name", "instance_uid",
                "interface_uid", "interface_name", "domain")


def check(event: dict[str, Any]) -> None:
    """Raise AssertionError naming what an OCSF event lacks."""
    for key in BASE:
        assert key in event, f"no {key}: {event}"
    name, activities, required = CLASSES[event["class_uid"]]
    assert event["category_uid"] == event["class_uid"] // 1000, name
    assert event["activity_id"] in activities, (name, event["activity_id"])
    assert event["type_uid"] == event["class_uid"] * 100 + event["activity_id"]
    assert event["severity_id"] in SEVERITIES
    assert isinstance(event["time"], int) and event["time"] > 1_600_000_000_000
    meta = event["metadata"]
    assert isinstance(meta.get("product"), dict) and isinstance(meta.get("version"), str)
    for key in required:
        assert key in event, f"{name} without {key}: {event}"
    if "actor" in event:
        assert any(k in event["actor"] for k in ACTOR_ANY), event["actor"]
        if "process" in event["actor"]:
            assert any(k in event["actor"]["process"] for k in ("pid", "uid", "cpid"))
    if "device" in event:
        assert isinstance(event["device"].get("type_id"), int)
    if "process" in event:
        assert any(k in event["process"] for k in ("pid", "uid", "cpid")), event["process"]
    if "file" in event:
        assert event["file"].get("name") and isinstance(event["file"].get("type_id"), int)
    for end in ("src_endpoint", "dst_endpoint"):
        if end in event:
            assert any(k in event[end] for k in ENDPOINT_ANY), event[end]
    if "kernel" in event:
        assert event["kernel"].get("name") and isinstance(event["kernel"].get("type_id"), int)
    if "query" in event:
        assert event["query"].get("hostname"), event["query"]
    for key in ("action_id", "disposition_id"):
        if key in event:
            assert isinstance(event[key], int)


@contextlib.contextmanager
def _nxdomain_resolver() -> Iterator[None]:
    """A resolver on 127.0.0.1:53 that answers every query NXDOMAIN, where that port is
    free to bind (root), else none (the query then times out). It stops, and frees the
    port, on leaving: a thread still blocked in recvfrom() would keep a closed socket
    bound, and the next test's resolver could not bind."""
    with host_port_53():
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            s.bind(("127.0.0.1", 53))
        except OSError:
            s.close()
            yield
            return
        yield from _serve_nxdomain(s)


def _serve_nxdomain(s: socket.socket) -> Iterator[None]:
    s.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                q, peer = s.recvfrom(512)
            except TimeoutError:
                continue
            except OSError:
                return
            if len(q) >= 12:
                s.sendto(q[:2] + bytes([0x81, 0x83]) + q[4:6] + b"\0" * 6 + q[12:], peer)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join(5)
        s.close()


@pytest.mark.parametrize("audit_only", [False, True], ids=["enforced", "audit-only"])
def test_a_real_runs_log_as_ocsf_events(tmp_path, audit_only):
    if audit_only and os.geteuid() != 0:
        from ztsa.sandbox import native

        if not native.userns_available():
            pytest.skip("--audit-only needs user namespaces, which this kernel refuses")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    refused = socket.socket()
    refused.bind(("127.0.0.1", 0))
    refused.listen(8)
    outside = tmp_path / "outside"
    outside.mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    code = ("import socket, subprocess\n"
            f"socket.create_connection(('127.0.0.1', {port}), 3).close()\n"
            "try: socket.create_connection(('127.0.0.1', "
            f"{refused.getsockname()[1]}), 3).close()\n"
            "except OSError: pass\n"
            f"try: open({str(outside / 'x')!r}, 'w').close()\n"
            "except OSError: pass\n"
            "try: socket.getaddrinfo('refused.invalid', 80)\n"
            "except OSError: pass\n"
            "subprocess.run(['true'])\n")
    log = tmp_path / "audit.jsonl"
    native_log = tmp_path / "native.jsonl"
    base = [sys.executable, "-m", "ztsa", "exec", "--profile", "repo", "--workspace",
            str(ws), f"--allow-net=127.0.0.1:{port}",
            *(["--audit-only"] if audit_only else ["--trace-syscalls"])]
    # resolving names would need a resolver: none is asked (the name is refused, or
    # under --audit-only asked of a loopback address where nothing listens)
    dns = ["--dns", "127.0.0.1"]
    # under --audit-only the name is asked: answered at once
    with _nxdomain_resolver():
        for path, fmt in ((log, "ocsf"), (native_log, "ztsa")):
            done = subprocess.run([*base, *dns, "--audit-log", str(path), "--audit-format",
                                   fmt, "--", sys.executable, "-c", code],
                                  capture_output=True, text=True, timeout=120, cwd=tmp_path)
            assert done.returncode == 0, done.stderr
    listener.close()
    refused.close()
    events = [json.loads(line) for line in log.read_text().splitlines()]
    for e in events:
        check(e)
    kinds = [e["unmapped"]["ztsa"]["event"] for e in events]
    # the same events as the run in ztsa's own format: nothing lost (the number of
    # system calls differs between two runs)
    own = [json.loads(line)["event"] for line in native_log.read_text().splitlines()]
    assert sorted(k for k in kinds if k != "syscall") == sorted(
        k for k in own if k != "syscall"), (kinds, own)
    assert ("syscall" in kinds) == ("syscall" in own) == (not audit_only)
    classes = {(e["class_uid"], e["activity_id"]) for e in events}
    assert {(1007, 1), (1007, 2), (1001, 3), (4001, 1), (4001, 5), (4003, 1)} <= classes, classes
    assert ((1003, 4) in classes) == (not audit_only)  # the traced system calls
    refusals = [e for e in events if e["class_uid"] in (1001, 4001, 4003)
                and e["unmapped"]["ztsa"]["event"] == "deny"]
    assert refusals and {e["action_id"] for e in refusals} == ({1} if audit_only else {2})
    assert {e["metadata"]["correlation_uid"] for e in events} == {
        events[0]["unmapped"]["ztsa"]["run"]}
    opened = [e for e in events if (e["class_uid"], e["activity_id"]) == (4001, 1)]
    assert opened[0]["dst_endpoint"] == {"ip": "127.0.0.1", "port": port}


def test_audit_format_needs_a_log(tmp_path):
    done = subprocess.run([sys.executable, "-m", "ztsa", "exec", "--profile", "repo",
                           "--workspace", str(tmp_path), "--audit-format", "ocsf", "--",
                           "true"], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2 and "--audit-format needs --audit-log" in done.stderr


def test_a_refused_change_of_another_process_is_process_activity():
    """Without a PID namespace, a deny line names the outside pid a call would have
    changed (tracer.py): Process Activity about that process, denied."""
    from ztsa.output.ocsf import convert_lines

    record = {"schema": "ztsa.audit/v1", "time": 1_765_000_000.5, "run": "0" * 16,
              "event": "deny", "pid": 41, "tid": 42, "syscall": "setpriority",
              "target": 7, "decision": "deny", "rule": "a process outside the tree"}
    (line,) = convert_lines([json.dumps(record)], "ztsa", "host")
    event = json.loads(line)
    check(event)
    assert event["class_uid"] == 1007 and event["process"] == {"pid": 7}
    assert event["action_id"] == 2 and event["actor"]["process"]["pid"] == 41
