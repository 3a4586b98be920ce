"""The supply-chain corpus: malicious fixtures written the way real attacks look, and
benign twins. Exactly these SUP rules fail (or are unknown) for each, under the
`dependency` profile; every other SUP rule passes."""

from __future__ import annotations

import os

import pytest
from support import FIXTURES

from ztsa.context import Context
from ztsa.engine import run
from ztsa.host import Host
from ztsa.model import Profile, Status

SUP = {f"SUP{i:03d}" for i in range(1, 17)}

EXPECTED: dict[str, tuple[set[str], set[str]]] = {
    # fixture: (failing rules, unknown rules)
    "npm-postinstall-node-e": ({"SUP003", "SUP004", "SUP005"}, set()),
    "npm-postinstall-benign": (set(), set()),
    "npm-helper-curl-bash": ({"SUP005"}, set()),
    "npm-helper-verified-download": (set(), set()),
    "npm-git-main": ({"SUP006"}, set()),
    "npm-git-pinned": (set(), set()),
    "npm-lock-http": ({"SUP002", "SUP007", "SUP008"}, set()),
    "npm-lock-https": (set(), set()),
    "npm-no-lock": ({"SUP001"}, set()),
    "yarn-v1-installed-hook": ({"SUP003"}, set()),
    "yarn-v1-installed-clean": (set(), set()),
    "yarn-berry-yarnpath": ({"SUP007", "SUP008"}, set()),  # its lockfile is empty
    "yarn-berry-plain": (set(), set()),
    "pnpm-requires-build": ({"SUP003", "SUP008"}, set()),
    "pnpm-only-built": (set(), set()),
    "bun-trusted": (set(), set()),
    "cargo-build-rs-ssh": ({"SUP006", "SUP009", "SUP010", "SUP011"}, set()),
    "cargo-build-rs-cc": (set(), set()),
    "cargo-config-wrapper": ({"SUP007", "SUP008"}, set()),
    "py-backend-path": ({"SUP014"}, set()),
    "py-hatchling": (set(), set()),
    "py-pth-import": ({"SUP015"}, set()),
    "py-pth-paths": (set(), set()),
    "py-setup-cmdclass": ({"SUP013"}, set()),
    "py-setup-plain": (set(), set()),
    "py-requirements-git-main": ({"SUP001", "SUP006", "SUP007", "SUP012"}, set()),
    "py-requirements-hashed": (set(), set()),
    "py-uv-git-branch": ({"SUP002", "SUP006", "SUP007"}, set()),
    "py-uv-locked": (set(), set()),
    # install hooks that run a repository file: judged by what the file runs (ztsa.follow)
    "npm-follow-install-js-curl-sh": ({"SUP004"}, set()),
    "npm-follow-install-js-prints": (set(), set()),
    "npm-follow-two-levels-download-run": ({"SUP004"}, set()),
    "npm-follow-two-levels-builds": (set(), set()),
    "npm-follow-fetch-write-spawn": ({"SUP004"}, set()),
}


def test_every_fixture_is_listed():
    assert set(os.listdir(FIXTURES)) == set(EXPECTED)


@pytest.mark.parametrize("fixture", sorted(EXPECTED))
def test_fixture_verdicts(fixture):
    ctx = Context(Host(environ={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}),
                  str(FIXTURES / fixture), Profile.DEPENDENCY)
    report = run(ctx, only=SUP)
    failing = {r.id for r in report.results if r.status is Status.FAIL}
    unknown = {r.id for r in report.results if r.status is Status.UNKNOWN}
    want_fail, want_unknown = EXPECTED[fixture]
    assert (failing, unknown) == (want_fail, want_unknown), [
        (r.id, r.message) for r in report.results if r.status is not Status.PASS]
