"""`ztsa doctor`: the confinement controls this machine offers, and so what each profile
of `ztsa exec` does here."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ztsa.sandbox.offer import HostOffer


def _tree_cgroup() -> str:
    """What would hold the tree's totals: a cgroup of its own (made and removed here to
    find out), else only each process's rlimits, and why."""
    from ztsa.sandbox import cgroup

    group, why = cgroup.make("doctor", 0, 0)
    if group is None:
        return f"rlimits only ({why})"
    cgroup.remove(group)
    return group.kind


def _resources(host: HostOffer) -> dict[str, Any]:
    """The tree's share of its user's resources (ztsa.sandbox.resources): its own inotify
    limits, locks refused outside the writable places, the private HOME and TMPDIR's
    bound; None where this machine offers none."""
    from ztsa.sandbox import resources

    namespaces = host.mounts
    inotify = resources.inotify_share(host.inotify_limits)
    return {"inotify_limits": list(inotify) if namespaces and inotify != (0, 0) else None,
            "locks_outside_refused": namespaces,
            "private_disk_bound": "tmpfs, --max-disk" if namespaces else None}


def probe() -> dict[str, Any]:
    from ztsa.sandbox import landlock, offer
    from ztsa.sandbox.controls import missing_controls

    host = offer.probe()
    feat = offer.features()
    abi = host.landlock_abi
    missing = missing_controls(host)
    controls = {
        "kernel": feat.kernel,
        "root": host.root,
        "landlock_abi": abi,
        "landlock_features": {
            "file system (ABI 1)": abi >= 1, "refer (ABI 2)": abi >= 2,
            "truncate (ABI 3)": abi >= 3, "device ioctls (ABI 5)": abi >= 5,
            "signal scope (ABI 6)": landlock.scope(abi) != 0},
        "seccomp_user_notification": feat.user_notification,
        "seccomp_notification_features": {
            "ADDFD (5.9)": feat.addfd, "ADDFD_FLAG_SEND (5.14)": feat.addfd_send,
            "SYNC_WAKE_UP (6.6)": feat.sync_wake_up},
        "pidfd_getfd": feat.pidfd_getfd,
        "user_namespaces": host.mounts,
        "apparmor_restricts_user_namespaces": feat.apparmor_restricts_userns,
        "pid_namespaces": host.pidns,
        # made in the user namespace (as root: directly), by CMD before it drops its
        # capabilities: where one is there, so is the other
        "network_namespace": host.netns,
        "tree_cgroup": _tree_cgroup(),
        "tree_resources": _resources(host),
        "missing": missing,
    }
    profiles = {
        "untrusted": "refuses to run (EXEC001): " + "; ".join(missing) if missing
        else "runs with every control",
        "dependency": ("runs without: " + "; ".join(missing)) if missing
        else "runs with every control",
        "repo": ("runs without: " + "; ".join(missing)) if missing
        else "runs with every control",
    }
    return {"schema": "ztsa.doctor/v1", "controls": controls, "profiles": profiles}


def render_text(doc: dict[str, Any]) -> str:
    c = doc["controls"]

    def yes(v: bool) -> str:
        return "yes" if v else "NO"

    lines = [f"kernel {c['kernel']}, {'root' if c['root'] else 'an ordinary user'}",
             f"Landlock ABI {c['landlock_abi']}"]
    lines += [f"  {name}: {yes(v)}" for name, v in c["landlock_features"].items()]
    lines.append(f"seccomp user notification: {yes(c['seccomp_user_notification'])}")
    lines += [f"  {name}: {yes(v)}" for name, v in c["seccomp_notification_features"].items()]
    lines.append(f"pidfd_getfd: {yes(c['pidfd_getfd'])}")
    lines.append(f"user namespaces: {yes(c['user_namespaces'])}"
                 + (" (AppArmor restricts unprivileged ones)"
                    if c["apparmor_restricts_user_namespaces"] else ""))
    lines.append(f"PID and IPC namespaces: {yes(c['pid_namespaces'])}")
    lines.append(f"a network namespace for the tree (ztsa answers its DNS): "
                 f"{yes(c['network_namespace'])}")
    lines.append(f"the tree's memory and process totals: {c['tree_cgroup']}")
    r = c["tree_resources"]
    lines.append("the tree's own inotify limits: " + (
        "{} instances, {} watches".format(*r["inotify_limits"]) if r["inotify_limits"]
        else "NO (it can take all of its user's)"))
    lines.append(f"locks on files outside the writable places refused: "
                 f"{yes(r['locks_outside_refused'])}")
    lines.append("the private HOME and TMPDIR bounded: " + (
        r["private_disk_bound"] or "NO (the host's disk)"))
    lines.append("")
    lines += [f"--profile {p}: {what}" for p, what in doc["profiles"].items()]
    return "\n".join(lines) + "\n"
