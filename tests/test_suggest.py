"""`ztsa policy suggest` (ztsa/suggest.py) never widens: real audit logs in temporary
trees, read through the CLI where the person would. A write is suggested as the path
itself, never a directory above it; a call that failed anyway, `/`, a home, a
credential path, a shell start-up file and a system directory are left out, each with
a comment saying why."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import tomllib

from ztsa.suggest import suggest

RUN = "a" * 16
OUTSIDE = "read-only outside the writable places"


def ztsa(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ztsa", *args], capture_output=True,
                          text=True, timeout=60, env=dict(os.environ))


def deny(path: str, call: str = "openat", access: str = "write", audit: bool = True,
         when: float | None = None, **more: Any) -> dict[str, Any]:
    """A file-system deny line as the file helper writes it: under --audit-only with
    "access" and "enforced": false (native/audit.c), else the enforced run's."""
    e: dict[str, Any] = {"schema": "ztsa.audit/v1", "time": time.time() if when is None
                         else when, "run": RUN, "event": "deny", "pid": 7,
                         "syscall": call, "path": path}
    if audit:
        e.update(access=access, decision="deny", enforced=False,
                 rule=OUTSIDE if access == "write" else "the real home is hidden (not "
                 "shown to the tree)")
    else:
        e["rule"] = OUTSIDE
    return {**e, **more}


def write_log(where: Path, *events: dict[str, Any]) -> Path:
    log = where / "audit.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    return log


def suggested(log: Path) -> tuple[dict[str, Any], list[str]]:
    """(the policy as TOML reads it, its "# left out:" lines)"""
    text = suggest(str(log))
    return tomllib.loads(text), [line for line in text.splitlines()
                                 if line.startswith("# left out: ")]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's home for the run and for suggest: a fake one, with a key in .ssh."""
    h = tmp_path / "home"
    (h / ".ssh").mkdir(parents=True)
    (h / ".ssh" / "id_ed25519").write_text("key\n")
    (h / ".bashrc").write_text("# mine\n")
    monkeypatch.setenv("HOME", str(h))
    return h


def test_creates_that_fail_anyway_under_a_home_get_no_root_home_or_ssh(tmp_path, home):
    """The attack (issue #45): under --audit-only, creates whose directories do not exist
    (they fail with ENOENT anyway) were suggested as the nearest existing directory:
    `allow_write = ["/", HOME, HOME/.ssh]`, and the next run wrote ~/.bashrc and /tmp."""
    log = write_log(tmp_path, *(deny(p) for p in (
        "/nonexistent-ztsa/x", f"{home}/nonexistent/x", f"{home}/.ssh/nonexistent/x",
        f"{home}/nonexistent/deeper/y")))
    done = ztsa("policy", "suggest", str(log))
    assert done.returncode == 0, done.stderr
    policy = tomllib.loads(done.stdout)
    assert "fs" not in policy, done.stdout
    for wide in ("/", str(home), f"{home}/.ssh"):
        assert f'"{wide}"' not in done.stdout, done.stdout
    assert ("# left out: /nonexistent-ztsa/x (the call failed anyway: ENOENT, its "
            "directory does not exist)") in done.stdout
    assert f"# left out: {home}/nonexistent/x (the call failed anyway: ENOENT" in done.stdout
    assert f"# left out: {home}/.ssh/nonexistent/x (a credential path)" in done.stdout
    out = tmp_path / "policy.toml"
    out.write_text(done.stdout)
    assert ztsa("policy", "check", str(out)).returncode == 0


def test_a_refused_create_of_a_plain_file_gets_exactly_its_directory(tmp_path, home):
    """In an ordinary directory, the directory of the file a create names (fs.allow_write
    takes directories), as an audit-only line or an enforced one; a refused rename is
    both its names' directories, a refused link its new one's."""
    out = tmp_path / "out"
    out.mkdir()
    log = write_log(tmp_path, deny(str(out / "made")),
                    deny(str(out / "enforced.txt"), call="creat", audit=False),
                    deny(f"{out}/a -> {out}/b", call="renameat2", audit=False),
                    deny(f"{out}/c -> {out}/d", call="linkat", audit=False))
    done = ztsa("policy", "suggest", str(log))
    assert done.returncode == 0, done.stderr
    policy = tomllib.loads(done.stdout)
    assert policy == {"fs": {"allow_write": [str(out)]}}, done.stdout
    assert "# left out" not in done.stdout
    saved = tmp_path / "policy.toml"
    saved.write_text(done.stdout)
    assert ztsa("policy", "check", str(saved)).returncode == 0


def test_the_root_and_system_directories_are_left_out(tmp_path, home):
    paths = ["/", "/etc", "/etc/passwd", "/etc/cron.d/job", "/usr/local/bin/tool",
             "/usr/lib/x.so", "/boot/vmlinuz", "/proc/1/environ", "/sys/kernel/x",
             "/dev/sda", "/bin/sh", "/lib64/ld.so", "/var", "/var/tmp", "/tmp", "/run",
             "/root", "/home", "/opt"]
    policy, left = suggested(write_log(tmp_path, *(deny(p, call="chmod") for p in paths)))
    assert "fs" not in policy, policy
    assert "# left out: / (the root directory)" in left
    assert "# left out: /etc (a system directory)" in left
    assert "# left out: /etc/passwd (under /etc, a system directory)" in left
    assert "# left out: /usr/local/bin/tool (under /usr, a system directory)" in left
    assert "# left out: /tmp (a system directory)" in left
    assert "# left out: /root (a system directory)" in left
    assert len(left) == len(paths), left


def test_homes_and_what_holds_them_are_left_out(tmp_path, home):
    """The user's home, the tree's (the env line's HOME), another user's under /home,
    and a directory holding a home."""
    private = tmp_path / "ztsa-private" / "home"
    private.mkdir(parents=True)
    env = {"schema": "ztsa.audit/v1", "time": time.time(), "run": RUN, "event": "env",
           "pid": 1, "names": ["HOME"], "home": str(private), "tmpdir": str(tmp_path)}
    policy, left = suggested(write_log(tmp_path, env, *(
        deny(p, call="utimensat") for p in (str(home), str(private), "/home/someone",
                                            str(tmp_path)))))
    assert "fs" not in policy, policy
    assert left == [f"# left out: {home} (a home directory)",
                    f"# left out: {private} (a home directory)",
                    "# left out: /home/someone (a home directory)",
                    f"# left out: {tmp_path} (a directory holding the home {home})"], left


CREDENTIALS = (".ssh", ".ssh/id_ed25519", ".ssh/authorized_keys", ".aws/credentials",
               ".gnupg", ".config/gcloud/credentials.db", ".kube/config",
               ".docker/config.json", ".netrc", ".npmrc", ".pypirc", ".git-credentials",
               ".claude", ".claude/settings.json", ".claude.json", ".codex/config.toml")


def test_credential_paths_and_what_holds_them_are_left_out(tmp_path, home):
    """Written or read: every credential path and what is under it, and a directory
    above one (~/.config holds ~/.config/gcloud)."""
    lines = [deny(f"{home}/{c}") for c in CREDENTIALS]
    lines += [deny(f"{home}/.aws/config", access="read"), deny(f"{home}/.config", "mkdir")]
    policy, left = suggested(write_log(tmp_path, *lines))
    assert "fs" not in policy, policy
    assert [f"# left out: {home}/{c} (a credential path)" for c in CREDENTIALS] == left[:-2]
    assert left[-2:] == [
        f"# left out: {home}/.aws/config (a credential path)",
        f"# left out: {home}/.config (a directory holding {home}/.config/gcloud)"]


def test_shell_start_up_and_persistence_files_are_left_out(tmp_path, home):
    names = (".bashrc", ".profile", ".zshrc", ".bash_profile", ".zshenv",
             ".config/fish/config.fish")
    lines = [deny(f"{home}/{n}") for n in names]
    lines += [deny(f"{home}/.gitconfig"), deny(f"{home}/.bashrc", access="read")]
    policy, left = suggested(write_log(tmp_path, *lines))
    assert "fs" not in policy, policy
    assert left == [*(f"# left out: {home}/{n} (a shell start-up file)" for n in names),
                    f"# left out: {home}/.gitconfig (a file that runs code later (FS007))"]


def test_a_path_whose_links_lead_to_a_credential_is_left_out(tmp_path, home):
    """An enforced line's path is the one the tree gave: a link elsewhere may lead into
    the home."""
    link = tmp_path / "cache"
    link.symlink_to(home / ".ssh")
    policy, left = suggested(write_log(tmp_path, deny(f"{link}/authorized_keys",
                                                      call="creat", audit=False)))
    assert "fs" not in policy, policy
    assert left == [f"# left out: {link}/authorized_keys (it leads to "
                    f"{home}/.ssh/authorized_keys, a credential path)"], left


def test_a_call_the_trace_shows_failed_is_left_out(tmp_path, home):
    """With --trace-syscalls the log holds each call's result: a refused call that
    failed anyway (EEXIST, ENOSPC, ...) is no need of the run's; one that succeeded is,
    though its directory is gone by now."""
    out = tmp_path / "out"
    out.mkdir()

    def traced(name: str, path: str, result: object) -> dict[str, Any]:
        return {"schema": "ztsa.audit/v1", "time": time.time(), "run": RUN,
                "event": "syscall", "pid": 7, "tid": 7, "nr": 257, "name": name,
                "args": ["AT_FDCWD", repr(path), "O_WRONLY|O_CREAT|O_TRUNC", "0o666"],
                "result": result}

    gone = tmp_path / "gone" / "file"
    log = write_log(tmp_path,
                    deny(str(out / "full")), traced("openat", str(out / "full"), "-ENOSPC"),
                    deny(str(out / "rel")), traced("openat", "rel", "-EISDIR"),
                    deny(str(gone)), traced("openat", str(gone), 3))
    policy, left = suggested(log)
    assert policy == {"fs": {"allow_write": [str(gone.parent)]}}, policy
    assert left == [f"# left out: {out}/full (the call failed anyway: ENOSPC)",
                    f"# left out: {out}/rel (the call failed anyway: EISDIR)"], left


def test_a_name_that_was_there_before_the_call_is_left_out(tmp_path, home):
    """Without a trace: a mkdir of a directory that was there before it (with files)
    failed with EEXIST (mkdir -p asks for every ancestor), and a change to such a
    directory is no grant of all it holds. A directory the run made is the path."""
    old = tmp_path / "cache"
    (old / "others").mkdir(parents=True)
    later = time.time() + 60  # the call came well after the directory and its files
    made = tmp_path / "made-by-the-run"
    when = time.time() - 0.1
    made.mkdir()
    (made / "its-file").write_text("x")
    policy, left = suggested(write_log(
        tmp_path, deny(str(old), "mkdir", when=later), deny(str(old), "chmod", when=later),
        deny(str(made), "mkdir", when=when), deny(str(made / "its-file"), when=when)))
    assert policy == {"fs": {"allow_write": [str(made)]}}, policy
    assert left == [f"# left out: {old} (the call failed anyway: EEXIST, the name was "
                    "there before it)"], left
    policy, left = suggested(write_log(tmp_path, deny(str(old), "chmod", when=later)))
    assert "fs" not in policy and left == [
        f"# left out: {old} (a directory there before the run: an entry would open all "
        "it holds; name what the run needs in it)"], left


def test_a_file_under_a_directory_the_run_made_is_suggested(tmp_path, home):
    """A create under a directory a refused mkdir of the run made, gone by now (its
    parent exists): both paths, not ENOENT."""
    policy, left = suggested(write_log(tmp_path, deny(str(tmp_path / "d"), "mkdir"),
                                       deny(str(tmp_path / "d" / "f"))))
    assert policy == {"fs": {"allow_write": [str(tmp_path / "d")]}}, policy
    assert left == []


def test_a_relative_path_is_left_out(tmp_path, home):
    policy, left = suggested(write_log(tmp_path, deny("build/out.o", "creat", audit=False)))
    assert "fs" not in policy
    assert left == ["# left out: build/out.o (a relative path: the log does not say "
                    "where it was)"], left


def dns_deny(name: str, qtype: str = "A", pid: int = 7, **more: Any) -> dict[str, Any]:
    """A refused query as the DNS service logs it (native/dns.c)."""
    return {"schema": "ztsa.audit/v1", "time": time.time(), "run": RUN, "event": "deny",
            "pid": pid, "syscall": "dns", "name": name, "type": qtype, "decision": "deny",
            "rule": "not in --allow-net", "rcode": "NXDOMAIN", **more}


def test_refused_hosts_of_a_preset_are_suggested_as_the_preset(tmp_path, home):
    """pip refused pypi.org never asks for files.pythonhosted.org: the suggestion is
    @pypi, which opens both (issue #40: two failed runs to learn the second host). Names
    of no preset stay names; an address stays an address; what a policy denies stays
    unsuggested."""
    pip = {"schema": "ztsa.audit/v1", "time": time.time(), "run": RUN, "event": "exec",
           "pid": 7, "executable": "/usr/bin/python3"}
    log = write_log(tmp_path, pip, dns_deny("pypi.org"), dns_deny("pypi.org", "AAAA"),
                    dns_deny("internal.example.test"),
                    dns_deny("api.github.com", rule="denied by /etc/ztsa/policy.toml:2 "
                                                    "(enterprise)"),
                    {**deny("203.0.113.7:443", call="connect", audit=False),
                     "family": "inet", "address": "203.0.113.7:443",
                     "rule": "not in --allow-net"})
    done = ztsa("policy", "suggest", str(log))
    assert done.returncode == 0, done.stderr
    policy = tomllib.loads(done.stdout)
    assert policy["net"]["allow"] == [
        "@pypi", {"to": "203.0.113.7:443", "binaries": [os.path.realpath("/usr/bin/python3")]},
        "internal.example.test"], done.stdout
    line = next(x for x in done.stdout.splitlines() if x.startswith('  "@pypi",'))
    assert line == ('  "@pypi",  # pypi.org, files.pythonhosted.org (port 443 only): '
                    "pypi.org: dns by pid 7 (/usr/bin/python3), A; pypi.org: dns by pid 7 "
                    "(/usr/bin/python3), AAAA"), line
    assert "# not suggested: api.github.com: denied by" in done.stdout
    saved = tmp_path / "policy.toml"
    saved.write_text(done.stdout)
    checked = ztsa("policy", "check", str(saved))
    assert checked.returncode == 0, checked.stderr
    # both hosts refused (a run with pypi.org alone allowed): still the preset, once
    policy, _ = suggested(write_log(tmp_path, dns_deny("files.pythonhosted.org"),
                                    dns_deny("pypi.org"), dns_deny("index.crates.io"),
                                    dns_deny("static.crates.io")))
    assert policy == {"net": {"allow": ["@crates", "@pypi"]}}, policy


def test_a_connection_refused_at_its_first_bytes_gets_no_address_rule(tmp_path):
    """A connection to a name's address (a CDN's) refused because its TLS server name
    was another site's (issue #45): an address rule would open that address to every
    name, so it is a comment, never a net.allow entry."""
    fronted = {**deny("203.0.113.10:443", call="send", audit=False), "family": "inet",
               "address": "203.0.113.10:443", "port": 443, "first_flight": "tls",
               "server_name": "other.example",
               "rule": "the first bytes name other.example (TLS server name), not a name "
                       "the rules allow at this address (--allow-net api.example:443)"}
    text = suggest(str(write_log(tmp_path, fronted)))
    assert "net" not in tomllib.loads(text), text
    assert ("# not suggested: 203.0.113.10:443: its first bytes named other.example"
            in text), text
