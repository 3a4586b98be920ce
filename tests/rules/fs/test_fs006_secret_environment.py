from ztsa.model import Status


def test_pass(machine):
    machine.environ.update(LANG="C.UTF-8", GITHUB_TOKEN="", GPG_TTY="/dev/pts/1")
    assert machine.run("FS006").status is Status.PASS


def test_fail_by_name_and_by_value(machine):
    machine.environ.update(GITHUB_TOKEN="x" * 20, DEPLOY="ghp_" + "A" * 36,
                           MY_API_KEY="k" * 10)
    out = machine.run("FS006")
    assert out.status is Status.FAIL
    assert "GITHUB_TOKEN" in out.message and "DEPLOY" in out.message
    assert "MY_API_KEY" in out.message
    assert "ghp_" not in str(out) and "xxxxxxxx" not in str(out)


def test_never_unknown_the_environment_is_always_readable(machine):
    # The environment is handed to ztsa whole: there is no undecidable input, so the
    # rule must never answer Status.UNKNOWN, even for odd names and binary-ish values.
    machine.environ.update({"": "x", "WEIRD\u00e9": "\udcff", "A=B": "1"})
    assert machine.run("FS006").status is not Status.UNKNOWN
