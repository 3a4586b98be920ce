"""FS, NET and AGT verdicts of the installed ztsa in real sandboxes and processes."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from realenv import bwrap_base, by_id, run_json

AGENT_HOME = "/run/agent-home"


def in_bwrap(ztsa_bin: str, workspace: Path, *extra: str, env: dict[str, str] | None = None,
             home: Path | None = None) -> dict:
    argv = [*bwrap_base(), "--uid", "1000", "--gid", "1000", "--cap-drop", "ALL",
            "--tmpfs", "/run", "--bind", str(workspace), "/work"]
    if home is not None:  # on ztsa's own tmpfs: the suite's interpreter may live in /home
        argv += ["--bind", str(home), AGENT_HOME]
    argv += [*extra, "--setenv", "HOME", AGENT_HOME, "--chdir", "/work", "--",
             ztsa_bin, "check", "--profile", "untrusted", "--format", "json", "/work"]
    base_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **(env or {})}
    _, doc = run_json(argv, env=base_env)
    return by_id(doc)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def test_fake_docker_socket_fails_fs001(ztsa_bin, workspace, tmp_path):
    sock_path = tmp_path / "fake-docker.sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(sock_path))
        s.listen(1)
        with_sock = in_bwrap(ztsa_bin, workspace, "--bind", str(sock_path), "/run/docker.sock")
    without = in_bwrap(ztsa_bin, workspace)
    assert with_sock["FS001"]["status"] == "fail"
    # /var/run is /run on Debian: one socket, reported once
    assert len(with_sock["FS001"]["evidence"]) == 1
    assert with_sock["FS001"]["evidence"][0]["path"] in ("/var/run/docker.sock",
                                                         "/run/docker.sock")
    assert without["FS001"]["status"] == "pass"


def test_home_with_keys_fails_fs002_and_clean_home_passes(ztsa_bin, workspace, tmp_path):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "known_hosts").write_text("example ssh-ed25519 AAAA\n")
    clean = in_bwrap(ztsa_bin, workspace, home=home)
    (home / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("[default]\naws_access_key_id = x\n")
    dirty = in_bwrap(ztsa_bin, workspace, home=home)
    assert clean["FS002"]["status"] == "pass", clean["FS002"]
    assert dirty["FS002"]["status"] == "fail"
    assert {e["path"] for e in dirty["FS002"]["evidence"]} == {
        f"{AGENT_HOME}/.ssh/id_ed25519", f"{AGENT_HOME}/.aws/credentials"}


def test_remote_docker_host_fails_net002_without_contacting_it(ztsa_bin, workspace):
    results = in_bwrap(ztsa_bin, workspace, "--unshare-net",
                       env={"DOCKER_HOST": "tcp://10.1.2.3:2375"})
    assert results["NET002"]["status"] == "fail"
    assert "tcp://10.1.2.3" in results["NET002"]["evidence"][0]["detail"]


def test_claude_bypass_settings_fail_agt001_and_benign_pass(ztsa_bin, workspace):
    settings = workspace / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"allow": ["Read"], "defaultMode": "default"}}))
    benign = in_bwrap(ztsa_bin, workspace)
    settings.write_text(json.dumps({"permissions": {"defaultMode": "bypassPermissions"}}))
    hostile = in_bwrap(ztsa_bin, workspace)
    assert benign["AGT001"]["status"] == "pass"
    assert hostile["AGT001"]["status"] == "fail"
    assert hostile["AGT001"]["evidence"][0]["path"] == ".claude/settings.json"


def test_wildcard_listener_in_own_network_namespace_fails_net001(ztsa_bin, tmp_path):
    unshare = shutil.which("unshare")
    assert unshare, "unshare (util-linux) is required"
    script = (
        "import socket, subprocess, sys\n"
        "s = socket.socket(); s.bind(('0.0.0.0', 18765)); s.listen(1)\n"
        "sys.exit(subprocess.call(sys.argv[1:]))\n"
    )
    proc = subprocess.run(
        [unshare, "-n", sys.executable, "-c", script, ztsa_bin, "check", "--format", "json",
         str(tmp_path)], capture_output=True, text=True, timeout=120)
    if "unshare failed" in proc.stderr and "Operation not permitted" in proc.stderr:
        pytest.skip("network namespaces are not available to this user")
    results = by_id(json.loads(proc.stdout))
    net001 = results["NET001"]
    assert net001["status"] == "fail"
    assert net001["message"] == "wildcard TCP listener(s) on port(s) 18765"
    assert "python" in net001["evidence"][0]["detail"]


def test_bypass_flag_in_a_real_parent_process(ztsa_bin, tmp_path):
    parent = "import subprocess, sys; sys.exit(subprocess.call(sys.argv[2:]))"
    proc = subprocess.run(
        [sys.executable, "-c", parent, "--dangerously-skip-permissions", ztsa_bin, "check",
         "--format", "json", str(tmp_path)], capture_output=True, text=True, timeout=120)
    results = by_id(json.loads(proc.stdout))
    agt008 = results["AGT008"]
    assert "--dangerously-skip-permissions" in agt008["evidence"][0]["detail"]
    # blocks unless ENV003 confirmed isolation
    expected = "pass" if results["ENV003"]["status"] == "pass" else "fail"
    assert agt008["status"] == expected
    plain = by_id(run_json([ztsa_bin, "check", "--format", "json", str(tmp_path)])[1])
    assert plain["AGT008"]["evidence"] == []


def test_listeners_from_the_kernel_match_the_proc_tables(tmp_path):
    """NET001/NET003 ask the kernel for listening sockets by state (sock_diag); the
    answer must be what /proc/net/tcp{,6} say, with listeners of our own on both
    families among them, while a crowd of connected sockets is left out."""
    from ztsa import netinfo
    from ztsa.host import Host

    with socket.socket() as v4, socket.socket(socket.AF_INET6) as v6:
        v4.bind(("127.0.0.1", 0))
        v4.listen()
        v6.bind(("::1", 0))
        v6.listen()
        clients = [socket.create_connection(v4.getsockname()[:2]) for _ in range(50)]
        ours = {(bytes([127, 0, 0, 1]), v4.getsockname()[1]),
                (bytes(15) + b"\x01", v6.getsockname()[1])}
        try:
            asked = Host().tcp_listeners()
            from_kernel = netinfo.listeners(Host())
            files = Host()
            files.tcp_listeners = lambda: None  # type: ignore[method-assign]
            from_files = netinfo.listeners(files)
        finally:
            for c in clients:
                c.close()
    if asked is None:
        pytest.skip("this kernel answers no sock_diag dump for TCP (CONFIG_INET_DIAG): "
                    "the files are used, as they were before")
    assert ours <= {(x.address, x.port) for x in from_kernel}
    assert sorted(from_kernel) == sorted(from_files)
    assert Host(proc=str(tmp_path)).tcp_listeners() is None  # a test's /proc: the files
