from ztsa.model import Status


def test_pass(machine):
    machine.environ.update({"NODE_OPTIONS": "--max-old-space-size=4096", "LANG": "C.UTF-8"})
    assert machine.run("ENV009").status is Status.PASS


def test_fail_names_variables_not_values(machine):
    machine.environ.update({
        "LD_PRELOAD": "/tmp/evil.so", "BASH_FUNC_ls%%": "() { evil; }",
        "NODE_OPTIONS": "--require /tmp/hook.js",
        "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER": "x",
    })
    out = machine.run("ENV009")
    assert out.status is Status.FAIL
    for name in ("LD_PRELOAD", "BASH_FUNC_ls%%", "NODE_OPTIONS",
                 "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER"):
        assert name in out.message
    text = out.message + " ".join(e.detail for e in out.evidence)
    assert "/tmp/evil.so" not in text and "hook.js" not in text


def test_fail_ld_so_preload(machine):
    machine.write("/etc/ld.so.preload", "/lib/evil.so\n")
    out = machine.run("ENV009")
    assert out.status is Status.FAIL and "/etc/ld.so.preload" in out.message


def test_empty_ld_so_preload_passes(machine):
    machine.write("/etc/ld.so.preload", "# nothing\n\n")
    assert machine.run("ENV009").status is Status.PASS


def test_unknown_preload_unreadable(machine, unreadable):
    unreadable(machine, "/etc/ld.so.preload")
    assert machine.run("ENV009").status is Status.UNKNOWN
