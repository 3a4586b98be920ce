"""What this host offers `ztsa exec`, probed once into a frozen record.

The one place that asks the kernel which confinement controls it has: `ztsa exec`
(its plan, ztsa.sandbox.plan.make, reads only the record), `ztsa check`'s machine
view, the missing controls (ztsa.sandbox.controls) and `ztsa doctor`. Tests give
`plan.make` a `HostOffer` of their own: no decision of the plan asks the host.

`probe()` costs what `ztsa exec` needs anyway: the Landlock ABI (one system call), the
namespaces (one short-lived child, ztsa_ns_probe) and the user's inotify limits (two
small reads of /proc/sys/user). The seccomp features only `ztsa doctor` shows (ctypes'
import and a few system calls) are `features()`."""

from __future__ import annotations

import os

from ztsa.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class HostOffer(NamedTuple):
    """The kernel's confinement controls for this process, as probed."""

    euid: int
    # ztsa_ns_probe: a user namespace (as root: a mount namespace) can be made, and
    # in it a network namespace (made by CMD before its capabilities go)
    userns: bool
    pidns: bool  # ... and PID and IPC namespaces whose init mounts a /proc of its own
    landlock_abi: int  # 0: no Landlock
    # the user's inotify limits, (instances, watches), /proc/sys/user/max_inotify_*: the
    # tree's user namespace gets a share as its own (ztsa.sandbox.resources); (0, 0):
    # none to read, so no share to give
    inotify_limits: tuple[int, int] = (0, 0)
    # as root: the mount namespace is made with root's own capabilities; False for a
    # root without CAP_SYS_ADMIN (a container's under the runtime's defaults), which
    # makes a user namespace as an ordinary user does (userns says whether it can)
    root_mountns: bool = True
    # pidfd_getfd works: the tracer and the file helper perform the tree's connects and
    # sends on a duplicate of its socket; a seccomp profile may refuse it (Docker's
    # default, without CAP_SYS_PTRACE)
    pidfd_getfd: bool = True

    @property
    def root(self) -> bool:
        return self.euid == 0

    @property
    def mounts(self) -> bool:
        """A mount namespace for the tree (root's own, or in a user namespace)."""
        return (self.root and self.root_mountns) or self.userns

    @property
    def netns(self) -> bool:
        """A network namespace for the tree: wherever there is a mount namespace."""
        return self.mounts


def probe() -> HostOffer:
    """This process's offer (the native module's probes, each made once a process)."""
    from ztsa.sandbox import native as nat
    from ztsa.sandbox.resources import inotify_limits

    return HostOffer(euid=os.geteuid(), userns=nat.userns_available(),
                     pidns=nat.pidns_available(), landlock_abi=nat.landlock_abi(),
                     inotify_limits=inotify_limits(),
                     root_mountns=os.geteuid() == 0 and nat.root_mount_namespace(),
                     pidfd_getfd=nat.pidfd_getfd_available())


# -- what only `ztsa doctor` shows -------------------------------------------------------
SECCOMP_GET_ACTION_AVAIL = 2
SECCOMP_RET_USER_NOTIF = 0x7FC00000
SYS_SECCOMP = 317
APPARMOR_USERNS = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"


class Features(NamedTuple):
    """The seccomp and kernel features the file helper relies on (ztsa doctor)."""

    kernel: str  # the release
    user_notification: bool  # SECCOMP_RET_USER_NOTIF
    addfd: bool  # SECCOMP_IOCTL_NOTIF_ADDFD (5.9)
    addfd_send: bool  # SECCOMP_ADDFD_FLAG_SEND (5.14)
    sync_wake_up: bool  # SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (6.6)
    pidfd_getfd: bool
    apparmor_restricts_userns: bool


def _release(text: str) -> tuple[int, int]:
    parts = text.split(".")
    try:
        return int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)
    except (IndexError, ValueError):
        return 0, 0


def features() -> Features:
    import ctypes
    import platform

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long

    def syscall_errno(nr: int, *args: Any) -> int:
        r = libc.syscall(ctypes.c_long(nr), *args)
        return 0 if r >= 0 else ctypes.get_errno()

    action = ctypes.c_uint32(SECCOMP_RET_USER_NOTIF)
    notif = syscall_errno(SYS_SECCOMP, ctypes.c_long(SECCOMP_GET_ACTION_AVAIL),
                          ctypes.c_long(0), ctypes.byref(action)) == 0
    from ztsa.sandbox import native as nat

    getfd = nat.pidfd_getfd_available()
    try:
        with open(APPARMOR_USERNS) as f:
            restrict = f.read().strip() == "1"
    except OSError:
        restrict = False
    release = platform.release()
    kernel = _release(release)
    return Features(kernel=release, user_notification=notif, addfd=kernel >= (5, 9),
                    addfd_send=kernel >= (5, 14), sync_wake_up=kernel >= (6, 6),
                    pidfd_getfd=getfd, apparmor_restricts_userns=restrict)
