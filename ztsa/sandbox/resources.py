"""The tree's share of its user's resources: inotify instances and watches, file locks
and disk (issue #45).

- inotify: the kernel counts a user's instances and watches in every user namespace up
  to the initial one (ucounts), each against its own `/proc/sys/user/max_inotify_*`.
  The tree's user namespace (an ordinary user's, or, started by root, one CMD makes
  before its capabilities go) gets half of the user's limits as its own
  (native/resources.c), so the host's programs keep the other half whatever the tree
  takes. Root with --keep-cap keeps its capabilities in the host's namespace, and so no
  user namespace of the tree's: no limits of its own.
- locks: the file helper takes a lock only on a file in the writable places
  (native/locks.c); without the helper (no user namespaces) nothing refuses one.
- disk: the private HOME and TMPDIR are a tmpfs of --max-disk bytes in the tree's mount
  namespace (native/resources.c): ENOSPC past it, nothing on the host's disk, its pages
  counted as the tree's memory. The workspace is the tree's to write: its growth is
  reported (its file system's used bytes before and after, one statvfs each).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ztsa.sandbox.offer import HostOffer

MAX_DISK = 8 << 30  # bytes of the private HOME and TMPDIR: no ordinary build meets it
SHARE = 2  # the tree's inotify limits: the user's divided by this

INOTIFY_MISSING = ("inotify limits of the tree's own (no user namespace of its own: its "
                   "instances and watches count against its user's, and the host's "
                   "programs get EMFILE or ENOSPC once it has taken them all)")
LOCKS_MISSING = ("refusing locks on files outside the writable places (no file helper: "
                 "the tree's flock and read locks through read-only descriptors hold on "
                 "the host's files while it runs)")
DISK_MISSING = ("a bound on the private HOME and TMPDIR (no mount namespace: they lie on "
                "the host's disk, bounded by nothing but it)")


def _read_int(path: str) -> int:
    try:
        with open(path, "rb") as f:
            return int(f.read().strip() or b"0")
    except (OSError, ValueError):
        return 0


def inotify_limits(proc: str = "/proc") -> tuple[int, int]:
    """The user's inotify limits on this host, (instances, watches); (0, 0) when the
    kernel has none to read (a probe: ztsa.sandbox.offer)."""
    instances = _read_int(os.path.join(proc, "sys/user/max_inotify_instances"))
    watches = _read_int(os.path.join(proc, "sys/user/max_inotify_watches"))
    if instances <= 0 or watches <= 0:
        return (0, 0)
    return (instances, watches)


def inotify_share(limits: tuple[int, int]) -> tuple[int, int]:
    """The tree's own inotify limits from the user's: half of each, at least one;
    (0, 0) when there are none."""
    instances, watches = limits
    if instances <= 0 or watches <= 0:
        return (0, 0)
    return (max(1, instances // SHARE), max(1, watches // SHARE))


def missing(offer: HostOffer, keep_caps: bool = False) -> list[str]:
    """What of the three a run on this host cannot hold. keep_caps: root keeping
    capabilities (--keep-cap), which keeps the host's user namespace, so no inotify
    limits of the tree's own (the run's choice, not the kernel's lack)."""
    out = []
    if not offer.mounts or inotify_share(offer.inotify_limits) == (0, 0) or (
            offer.root and keep_caps):
        out.append(INOTIFY_MISSING)
    if not offer.mounts:
        out += [LOCKS_MISSING, DISK_MISSING]
    return out


def fs_used(path: str) -> int | None:
    """Bytes used on the file system that holds path (None when it cannot be read)."""
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return (st.f_blocks - st.f_bfree) * st.f_frsize
