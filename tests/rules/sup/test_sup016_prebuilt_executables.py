import json

from ztsa.model import Status

ELF = b"\x7fELF\x02\x01\x01" + bytes(57)


def test_pass_hooked_package_without_binaries(machine):
    machine.fixture("yarn-v1-installed-hook")
    machine.ws("node_modules/plain/bin/tool", ELF)  # not a hooked package
    machine.ws("node_modules/plain/package.json", json.dumps({"name": "plain"}))
    assert machine.run("SUP016").status is Status.PASS


def test_fail_elf_in_hooked_npm_package_and_pe_in_crate(machine):
    machine.fixture("yarn-v1-installed-hook")
    machine.ws("node_modules/evil/bin/helper", ELF)
    machine.fixture("cargo-build-rs-ssh")
    machine.ws("prebuilt/win.dll", b"MZ\x90\x00" + bytes(60))
    out = machine.run("SUP016")
    assert out.status is Status.FAIL
    assert {e.path for e in out.evidence} == {"node_modules/evil/bin/helper",
                                              "prebuilt/win.dll"}


def test_unknown_when_scripts_cannot_be_decided(machine):
    machine.ws("package-lock.json", json.dumps({"lockfileVersion": 1, "dependencies": {}}))
    assert machine.run("SUP016").status is Status.UNKNOWN


def test_unknown_when_a_hooked_package_is_too_big_to_read_whole(machine, monkeypatch):
    # a package past the file limit is not audited in part (its binary could lie beyond
    # the limit): the rule cannot decide
    machine.fixture("yarn-v1-installed-hook")
    for i in range(5):
        machine.ws(f"node_modules/evil/lib/f{i}.js", b"x")
    monkeypatch.setattr("ztsa.rules.sup.sup016_prebuilt_executables.MAX_FILES", 3)
    out = machine.run("SUP016")
    assert out.status is Status.UNKNOWN
    assert "more than 3 files" in out.message


def test_a_symlinked_directory_in_a_hooked_package_is_not_entered(machine, tmp_path):
    machine.fixture("yarn-v1-installed-hook")
    outside = tmp_path / "outside-pkg"
    outside.mkdir()
    (outside / "payload").write_bytes(ELF)
    machine.ws("node_modules/evil/index.js", b"x")
    (machine.workspace / "node_modules/evil/vendor").symlink_to(outside)
    assert machine.run("SUP016").status is Status.PASS
