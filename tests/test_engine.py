"""The engine's order of work: with warnings_if_blocked (`ztsa exec`, whose report is
shown only when the gate fails), the rules that cannot block run only if the gate fails,
and a report that is shown is the same as the one the plain run gives."""

from __future__ import annotations

from ztsa.engine import run
from ztsa.model import Action, Profile, Status
from ztsa.registry import load_rules

NPM_TOKEN = "npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def _no_agent_above(machine):
    """AGT008 (gating in every profile) needs the process chain to decide."""
    machine.write("/proc/self/stat", "500 (python3) S 1 500 1 0")
    machine.write("/proc/1/stat", "1 (init) S 0 1 1 0")


def _view(report):
    return [(r.id, r.status, r.gating, r.message) for r in report.results], report.not_run


def test_passing_gate_runs_only_the_gating_rules(machine):
    _no_agent_above(machine)
    machine.ws("package.json", '{"name": "app", "dependencies": {"x": "1"}}\n')  # SUP001 warns
    lazy = run(machine.context(Profile.REPO), warnings_if_blocked=True)
    full = run(machine.context(Profile.REPO))
    gating = sorted(r.id for r in load_rules().values()
                    if r.action(Profile.REPO) is Action.BLOCK)
    assert lazy.passed and full.passed
    assert [r.id for r in lazy.results] == gating
    # the plain run has the warning that the lazy one never computed
    assert any(r.id == "SUP001" and r.status is Status.FAIL for r in full.results)
    assert {r.id for r in full.results} > set(gating)


def test_failing_gate_gives_the_whole_report(machine):
    machine.ws("package.json", '{"name": "app", "dependencies": {"x": "1"}}\n')
    machine.ws(".npmrc", f"//registry.npmjs.org/:_authToken={NPM_TOKEN}\n")  # FS005 blocks
    _no_agent_above(machine)
    for profile in Profile:
        lazy = run(machine.context(profile), warnings_if_blocked=True)
        full = run(machine.context(profile))
        assert not lazy.passed, profile
        assert _view(lazy) == _view(full), profile
        assert any(r.id == "SUP001" and not r.gating for r in lazy.results) or \
            profile is not Profile.REPO


def test_unknown_gating_rule_also_gives_the_whole_report(machine):
    import os

    os.symlink("/etc/hostname", machine.workspace / ".npmrc")  # FS005 cannot decide
    _no_agent_above(machine)
    machine.ws("package.json", '{"name": "app", "dependencies": {"x": "1"}}\n')
    lazy = run(machine.context(Profile.REPO), warnings_if_blocked=True)
    full = run(machine.context(Profile.REPO))
    fs005 = next(r for r in lazy.results if r.id == "FS005")
    assert fs005.status is Status.UNKNOWN and not lazy.passed
    assert _view(lazy) == _view(full)


def test_a_block_the_verdict_clears_runs_no_warnings(machine):
    """`ztsa exec` as root under untrusted: ENV001 fails and the confinement handles it.
    The verdict (waivers, handled findings) decides whether the rest must run."""
    machine.ws(".npmrc", f"//registry.npmjs.org/:_authToken={NPM_TOKEN}\n")  # FS005 blocks
    machine.ws("package.json", '{"name": "app", "dependencies": {"x": "1"}}\n')
    _no_agent_above(machine)

    def clear_fs005(results):
        return tuple(r._replace(status=Status.HANDLED) if r.id == "FS005" else r
                     for r in results)

    lazy = run(machine.context(Profile.REPO), warnings_if_blocked=True, verdict=clear_fs005)
    gating = sorted(r.id for r in load_rules().values()
                    if r.action(Profile.REPO) is Action.BLOCK)
    # nothing of SUP001's warning: only the gating phase ran, its results not rewritten
    assert [r.id for r in lazy.results] == gating
    assert next(r for r in lazy.results if r.id == "FS005").status is Status.FAIL
    # a verdict that leaves the block gives the whole report, as before
    whole = run(machine.context(Profile.REPO), warnings_if_blocked=True, verdict=lambda r: r)
    assert any(r.id == "SUP001" for r in whole.results) and not whole.passed
