from ztsa.model import Status


def test_pass(machine):
    machine.ws(".codex/config.toml", 'sandbox_mode = "workspace-write"\n'
               'approval_policy = "on-request"\n'
               '[sandbox_workspace_write]\nnetwork_access = false\n')
    machine.ws(".gemini/settings.json", '{"sandbox": true}')
    assert machine.run("AGT004").status is Status.PASS


def test_fail(machine):
    machine.ws(".codex/config.toml", 'approval_policy = "never"\n'
               '[sandbox_workspace_write]\nnetwork_access = true\n'
               '[profiles.ci]\nsandbox_mode = "danger-full-access"\n')
    machine.ws(".gemini/settings.json", '{"tools": {"sandbox": false}}')
    out = machine.run("AGT004")
    assert out.status is Status.FAIL
    assert [(e.detail, e.line) for e in out.evidence] == [
        ("approval_policy is never", 1),
        ("sandbox_workspace_write.network_access is true", 3),
        ("profiles.ci.sandbox_mode is danger-full-access", 5),
        ("Gemini sandbox is disabled", 1),
    ]


def test_unknown(machine):
    machine.ws(".codex/config.toml", 'sandbox_mode = \n')
    assert machine.run("AGT004").status is Status.UNKNOWN


def test_fail_writable_roots_outside_the_workspace(machine):
    """Codex's workspace-write sandbox lets the agent write its `writable_roots` too:
    `["~"]` or `["/"]` hands it the home's start-up files and credentials, a sandbox in
    name only. The old rule's strings (sandbox_mode, approval_policy, network_access)
    passed it; the catalogue's codex-writable-roots judges each root."""
    machine.ws(".codex/config.toml", 'sandbox_mode = "workspace-write"\n'
               '[sandbox_workspace_write]\nwritable_roots = ["./build", "tmp/cache"]\n')
    assert machine.run("AGT004").status is Status.PASS
    machine.ws(".codex/config.toml", 'sandbox_mode = "workspace-write"\n'
               '[sandbox_workspace_write]\nwritable_roots = ["./build", "~"]\n'
               '[profiles.ci.sandbox_workspace_write]\nwritable_roots = ["/"]\n')
    out = machine.run("AGT004")
    assert out.status is Status.FAIL, out
    assert [(e.detail.split(" is ")[0], e.line) for e in out.evidence] == [
        ("sandbox_workspace_write.writable_roots", 3),
        ("profiles.ci.sandbox_workspace_write.writable_roots", 5)], out.evidence
