import os

from ztsa.model import Status


def layout(machine):
    machine.ws("CLAUDE.md", "# x\n")
    machine.ws(".claude/settings.json", "{}")
    machine.ws(".git/config", "[core]\n")
    for p in ("CLAUDE.md", ".claude/settings.json", ".git/config"):
        os.chmod(machine.workspace / p, 0o444)
    for d in (".claude", ".git"):
        os.chmod(machine.workspace / d, 0o555)
    os.chmod(machine.workspace, 0o755)


def test_pass_read_only_for_the_agent(machine):
    layout(machine)
    assert machine.run_unprivileged("AGT007").status is Status.PASS


def test_fail_writable(machine):
    layout(machine)
    os.chmod(machine.workspace / "CLAUDE.md", 0o666)
    machine.write("/home/agent/.claude/settings.json", "{}", mode=0o666)
    out = machine.run_unprivileged("AGT007")
    assert out.status is Status.FAIL
    assert {e.path for e in out.evidence} == {"CLAUDE.md", "/home/agent/.claude/settings.json"}


def test_unknown(machine, unreadable):
    layout(machine)
    unreadable(machine, "/home/agent/.claude.json")
    assert machine.run_unprivileged("AGT007").status is Status.UNKNOWN
