"""Which confinement controls this kernel lacks, and the report's finding for them
(EXEC001: a finding of `ztsa exec`, not a catalogue rule)."""

from __future__ import annotations

from ztsa.sandbox import landlock

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ztsa.sandbox.offer import HostOffer

USERNS_MISSING = ("user namespaces (agent files, the audit log and the rest of the system "
                  "cannot be made read-only, nor the real home hidden)")
PIDNS_MISSING = ("PID and IPC namespaces with a /proc, /dev/shm and /dev/pts of the tree's "
                 "own (it sees the host's processes, reaches their /proc files through the "
                 "file helper, can open other terminals, can change other programs' files "
                 "in /dev/shm, and can leave files there and SysV IPC objects behind)")


NETNS_MISSING = ("a network namespace (the tree's DNS is not answered by ztsa: a query "
                 "for any name reaches the resolvers, and a socket it listens on is "
                 "reachable from outside; nor is the name checked at the connection: an "
                 "address a name rule opens takes a TLS server name or HTTP Host of any "
                 "other site it serves, as a CDN does, and UDP to it)")

GETFD_MISSING = ("pidfd_getfd (refused here: Docker's default seccomp profile refuses it "
                 "to a container without CAP_SYS_PTRACE): ztsa performs the tree's "
                 "connects and sends, and with the file helper its creations at a "
                 "directory descriptor, locks and metadata changes, on a duplicate of "
                 "its descriptor, so those fail")


def missing_controls(offer: HostOffer) -> list[str]:
    """The confinement controls this host's offer (ztsa.sandbox.offer) cannot enforce."""
    missing = landlock.handled_rights(offer.landlock_abi)[1]
    landlock.scope(offer.landlock_abi, missing)
    return [*missing, *namespace_controls(offer)]


def namespace_controls(offer: HostOffer) -> list[str]:
    """The namespaces among them, pidfd_getfd (what the helper and the tracer do in
    them needs it), and the tree's share of its user's resources that they hold (the
    rest is Landlock's: its ruleset names them)."""
    missing = []
    if not offer.mounts:
        missing.append(USERNS_MISSING)
    if not offer.pidns or not offer.mounts:
        missing.append(PIDNS_MISSING)
    if not offer.netns:
        missing.append(NETNS_MISSING)
    if not offer.pidfd_getfd:
        missing.append(GETFD_MISSING)
    from ztsa.sandbox import resources  # the tree's share of its user's (issue #45)

    missing += resources.missing(offer)
    return missing


def apparmor_hint(offer: HostOffer) -> str | None:
    """Why there are no user namespaces, where AppArmor is the reason, and the fix."""
    if not offer.apparmor_userns or offer.mounts:
        return None
    return ("AppArmor lets only programs a profile names make user namespaces here: "
            "`ztsa doctor` prints the root commands that let ztsa's set-up (ztsa-ns) "
            "make them")


FIX = ("Run on a kernel with Landlock ABI 5 or later and user namespaces enabled "
       "(sysctl user.max_user_namespaces > 0), or as root; in a container, `ztsa "
       "doctor` names the runtime's option that gives it back (docs/container.md); or "
       "choose --profile repo or dependency to accept the weaker confinement knowingly.")
EXPLAIN_EXEC001 = f"""EXEC001 confinement-incomplete: a confinement control of ztsa exec is missing
category exec, severity high; untrusted: block, dependency: warn, repo: warn

## What it checks
A finding of `ztsa exec`, not a catalogue rule: the controls this kernel cannot
enforce for the tree (a Landlock ABI feature, user namespaces, PID and IPC namespaces,
Landlock's signal scope). Under `untrusted` CMD is then not started (exit 3); under
`repo` and `dependency` it runs with what there is, says what is missing on stderr and
logs a `confinement` event. Under ztsa exec, a gate finding that a missing control would
have handled blocks as it would under `ztsa check`.

## How to fix
{FIX}"""


def confinement_result(missing: list[str], strict: bool) -> Any:
    """The report's finding for missing controls (EXEC001; not a catalogue rule)."""
    from ztsa.model import Action, Category, Evidence, Result, Severity, Status

    return Result(
        id="EXEC001", slug="confinement-incomplete", category=Category.EXEC,
        title="a confinement control of ztsa exec is missing", severity=Severity.HIGH,
        action=Action.BLOCK if strict else Action.WARN, status=Status.FAIL, gating=strict,
        message="this kernel cannot enforce: " + "; ".join(missing) + (
            " (the untrusted profile needs every control: CMD is not started)" if strict
            else " (running with weaker confinement)"),
        evidence=tuple(Evidence(m) for m in missing), fix=FIX)
