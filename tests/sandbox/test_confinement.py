"""Missing confinement controls become EXEC001 in the report: blocking under untrusted,
a warning otherwise, in every output format."""

import json
from pathlib import Path

import jsonschema
import pytest

from ztsa.model import Profile, Report
from ztsa.output import Format, render
from ztsa.sandbox import resources
from ztsa.sandbox.controls import (
    GETFD_MISSING,
    NETNS_MISSING,
    PIDNS_MISSING,
    USERNS_MISSING,
    confinement_result,
    missing_controls,
)
from ztsa.sandbox.landlock import SCOPE_MISSING
from ztsa.sandbox.offer import HostOffer

SCHEMA = json.loads((Path(__file__).parents[2] / "docs" / "report-schema.json").read_text())


def lacking(abi: int, userns: bool, euid: int, pidns: bool,
            inotify: tuple[int, int] = (128, 65536)) -> list[str]:
    return missing_controls(HostOffer(euid=euid, userns=userns, pidns=pidns,
                                      landlock_abi=abi, inotify_limits=inotify))


def test_what_each_kernel_lacks():
    assert lacking(7, userns=True, euid=1000, pidns=True) == []
    # root needs no user namespace
    assert lacking(7, userns=False, euid=0, pidns=True) == []
    # without one there is no PID namespace either (it is made in the user namespace),
    # nor the tree's own share of its user's resources (issue #45)
    assert lacking(7, userns=False, euid=1000, pidns=True) == [
        USERNS_MISSING, PIDNS_MISSING, NETNS_MISSING, resources.INOTIFY_MISSING,
        resources.LOCKS_MISSING, resources.DISK_MISSING]
    # no inotify limits to read: none to share
    assert lacking(7, userns=True, euid=1000, pidns=True, inotify=(0, 0)) == [
        resources.INOTIFY_MISSING]
    assert lacking(7, userns=True, euid=1000, pidns=False) == [PIDNS_MISSING]
    # a container's root without CAP_SYS_ADMIN, whose runtime also refuses user
    # namespaces (Docker's default seccomp profile): no namespace at all
    no_admin = HostOffer(euid=0, userns=False, pidns=False, landlock_abi=7,
                         inotify_limits=(128, 65536), root_mountns=False)
    assert missing_controls(no_admin)[:3] == [USERNS_MISSING, PIDNS_MISSING, NETNS_MISSING]
    assert missing_controls(no_admin._replace(userns=True, pidns=True)) == []
    # pidfd_getfd refused (Docker's default profile without CAP_SYS_PTRACE)
    no_getfd = HostOffer(euid=1000, userns=True, pidns=True, landlock_abi=7,
                         inotify_limits=(128, 65536), pidfd_getfd=False)
    assert missing_controls(no_getfd) == [GETFD_MISSING]
    assert lacking(5, userns=True, euid=0, pidns=True) == [SCOPE_MISSING]
    lacks = lacking(1, userns=True, euid=1000, pidns=True)
    assert [m.split(" (")[0] for m in lacks] == ["Landlock ABI 2", "Landlock ABI 3",
                                                 "Landlock ABI 5", "Landlock ABI 6"]
    assert lacking(0, userns=True, euid=1000, pidns=True)[0].startswith(
        "Landlock (")


@pytest.mark.parametrize("strict", [True, False])
def test_the_finding_blocks_only_under_untrusted(strict):
    result = confinement_result([USERNS_MISSING], strict)
    report = Report("0", Profile.UNTRUSTED if strict else Profile.REPO, "/w", (result,))
    assert report.passed is not strict
    doc = json.loads(render(report, Format.JSON, color=False))
    jsonschema.validate(doc, SCHEMA)
    assert doc["results"][0]["id"] == "EXEC001"
    assert doc["results"][0]["gating"] is strict
    sarif = json.loads(render(report, Format.SARIF, color=False))
    assert sarif["runs"][0]["tool"]["driver"]["rules"][0]["id"] == "EXEC001"
    text = render(report, Format.TEXT, color=False)
    assert "EXEC001" in text and "user namespaces" in text
