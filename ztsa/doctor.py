"""`ztsa doctor`: the confinement controls this machine offers, and so what each profile
of `ztsa exec` does here."""

from __future__ import annotations

import ctypes
import errno
import os
import platform

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SECCOMP_GET_ACTION_AVAIL = 2
SECCOMP_RET_USER_NOTIF = 0x7FC00000
SYS_SECCOMP, SYS_PIDFD_GETFD = 317, 438
APPARMOR_USERNS = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"


def _kernel() -> tuple[int, int]:
    parts = platform.release().split(".")
    try:
        return int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)
    except (IndexError, ValueError):
        return 0, 0


def _syscall_errno(nr: int, *args: int) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    r = libc.syscall(ctypes.c_long(nr), *(ctypes.c_long(a) for a in args))
    return 0 if r >= 0 else ctypes.get_errno()


def _user_notif() -> bool:
    action = ctypes.c_uint32(SECCOMP_RET_USER_NOTIF)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    r = libc.syscall(ctypes.c_long(SYS_SECCOMP), ctypes.c_long(SECCOMP_GET_ACTION_AVAIL),
                     ctypes.c_long(0), ctypes.byref(action))
    return bool(r == 0)


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def _tree_cgroup() -> str:
    """What would hold the tree's totals: a cgroup of its own (made and removed here to
    find out), else only each process's rlimits, and why."""
    from ztsa.sandbox import cgroup

    group, why = cgroup.make("doctor", 0, 0)
    if group is None:
        return f"rlimits only ({why})"
    cgroup.remove(group)
    return group.kind


def _resources(namespaces: bool) -> dict[str, Any]:
    """The tree's share of its user's resources (ztsa.sandbox.resources): its own inotify
    limits, locks refused outside the writable places, the private HOME and TMPDIR's
    bound; None where this machine offers none."""
    from ztsa.sandbox import resources

    inotify = resources.inotify_share()
    return {"inotify_limits": list(inotify) if namespaces and inotify != (0, 0) else None,
            "locks_outside_refused": namespaces,
            "private_disk_bound": "tmpfs, --max-disk" if namespaces else None}


def probe() -> dict[str, Any]:
    from ztsa.sandbox import landlock
    from ztsa.sandbox import native as nat
    from ztsa.sandbox.controls import missing_controls

    root = os.geteuid() == 0
    abi = nat.landlock_abi()
    kernel = _kernel()
    pidfd_getfd = _syscall_errno(SYS_PIDFD_GETFD, -1, -1, 0) != errno.ENOSYS
    restrict = _read(APPARMOR_USERNS)
    missing = missing_controls()
    controls = {
        "kernel": platform.release(),
        "root": root,
        "landlock_abi": abi,
        "landlock_features": {
            "file system (ABI 1)": abi >= 1, "refer (ABI 2)": abi >= 2,
            "truncate (ABI 3)": abi >= 3, "device ioctls (ABI 5)": abi >= 5,
            "signal scope (ABI 6)": landlock.scope(abi) != 0},
        "seccomp_user_notification": _user_notif(),
        "seccomp_notification_features": {
            "ADDFD (5.9)": kernel >= (5, 9), "ADDFD_FLAG_SEND (5.14)": kernel >= (5, 14),
            "SYNC_WAKE_UP (6.6)": kernel >= (6, 6)},
        "pidfd_getfd": pidfd_getfd,
        "user_namespaces": root or nat.userns_available(),
        "apparmor_restricts_user_namespaces": restrict == "1",
        "pid_namespaces": nat.pidns_available(),
        # made in the user namespace (as root: directly), by CMD before it drops its
        # capabilities: where one is there, so is the other
        "network_namespace": root or nat.userns_available(),
        "tree_cgroup": _tree_cgroup(),
        "tree_resources": _resources(root or nat.userns_available()),
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
