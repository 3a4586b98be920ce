"""What this host offers `ztsa exec`, probed once into a frozen record.

The one place that asks the kernel which confinement controls it has: `ztsa exec`
(its plan, ztsa.sandbox.plan.make, reads only the record), `ztsa check`'s machine
view, the missing controls (ztsa.sandbox.controls) and `ztsa doctor`. Tests give
`plan.make` a `HostOffer` of their own: no decision of the plan asks the host.

`probe()` costs what `ztsa exec` needs anyway: the Landlock ABI (one system call), the
namespaces (one short-lived child, ztsa_ns_probe: of ztsa-ns where it is installed, the
program that will make them), the user's inotify limits (two small reads of
/proc/sys/user), where ztsa-ns is (a few stats) and whether AppArmor restricts user
namespaces (one read). The seccomp features only `ztsa doctor` shows (ctypes'
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
    # ztsa-ns, the child's set-up as an executable (native/nsmain.c): where the run
    # execs it from ("": not installed; the set-up runs in a fork of this process)
    ns: str = ""
    # AppArmor lets only the programs a profile names make user namespaces
    # (kernel.apparmor_restrict_unprivileged_userns, Ubuntu 23.10 on)
    apparmor_userns: bool = False

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
    """This process's offer (the native module's probes, each made once a process); the
    namespaces as ztsa-ns can make them where it is installed."""
    from ztsa.sandbox import native as nat
    from ztsa.sandbox.resources import inotify_limits

    restricted = apparmor_restricts_userns()
    ns = locate_ns(restricted)
    return HostOffer(euid=os.geteuid(), userns=nat.userns_available(ns),
                     pidns=nat.pidns_available(ns), landlock_abi=nat.landlock_abi(),
                     inotify_limits=inotify_limits(),
                     root_mountns=os.geteuid() == 0 and nat.root_mount_namespace(ns),
                     pidfd_getfd=nat.pidfd_getfd_available(), ns=ns,
                     apparmor_userns=restricted)


# -- where ztsa-ns is --------------------------------------------------------------------
NS = "ztsa-ns"
# the copy an AppArmor profile may name (`ztsa doctor --apparmor-profile`): root's to
# install and replace, never one its user could (a path under a home, a venv's bin)
ROOT_NS = "/usr/local/libexec/ztsa/ztsa-ns"
APPARMOR_USERNS = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"


def apparmor_restricts_userns() -> bool:
    try:
        with open(APPARMOR_USERNS, "rb") as f:
            return f.read().strip() == b"1"
    except OSError:
        return False


def root_owned(path: str) -> bool:
    """Is path an executable file only root can replace: no symlink on its way, the file
    and every directory above it owned by root and writable by neither group nor other?"""
    import stat

    if not os.path.isabs(path) or os.path.realpath(path) != os.path.normpath(path):
        return False
    try:
        st = os.lstat(path)
        if (not stat.S_ISREG(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o022
                or not st.st_mode & 0o111):
            return False
        d = path
        while d != "/":
            d = os.path.dirname(d)
            st = os.lstat(d)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o022:
                return False
    except OSError:
        return False
    return True


def installed_ns() -> str:
    """ztsa-ns as this installation installed it, "" when it did not: beside the
    launcher's real path (`ztsa`), or, run as `python -m ztsa`, the one the RECORD of
    the distribution beside the package lists (an editable install's RECORD says
    nothing of which source tree runs: none). Never looked for on PATH."""
    import sys

    named = sys.argv[0] if sys.argv else ""
    found = ""
    if named and not named.endswith(".py"):
        real = os.path.realpath(named)
        if os.path.basename(real) == "ztsa" and os.path.isfile(real):
            found = os.path.join(os.path.dirname(real), NS)
    else:
        found = recorded_ns()
    return found if found and os.path.isfile(found) and os.access(found, os.X_OK) else ""


def recorded_ns() -> str:
    """ztsa-ns as the RECORD of the distribution beside the package lists it, "" for
    none (whether or not it exists now)."""
    from ztsa._boot import recorded

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    where = os.path.dirname(package)
    for path in recorded(where):
        if os.path.basename(path) == NS:
            return os.path.normpath(os.path.join(where, path))
    return ""


def locate_ns(restricted: bool) -> str:
    """The ztsa-ns a run execs: where AppArmor restricts user namespaces, root's copy
    (ROOT_NS, which a profile may name) when only root can replace it; else the one this
    installation installed; "" for none (a source tree: the set-up runs in a fork)."""
    if restricted and root_owned(ROOT_NS):
        return ROOT_NS
    return installed_ns()


# -- what only `ztsa doctor` shows -------------------------------------------------------
SECCOMP_GET_ACTION_AVAIL = 2
SECCOMP_RET_USER_NOTIF = 0x7FC00000
SYS_SECCOMP = 317


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
    restrict = apparmor_restricts_userns()
    release = platform.release()
    kernel = _release(release)
    return Features(kernel=release, user_notification=notif, addfd=kernel >= (5, 9),
                    addfd_send=kernel >= (5, 14), sync_wake_up=kernel >= (6, 6),
                    pidfd_getfd=getfd, apparmor_restricts_userns=restrict)
