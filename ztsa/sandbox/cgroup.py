"""The tree's memory and process totals, by a cgroup of its own where ztsa may make one.

Runs in ztsa's own process, around the spawn: `make` creates the group beneath ztsa's
own cgroup (so every limit of the caller's still applies above it), `enter` puts the
spawned child in it before it runs anything (the keeper, the helper and CMD inherit it),
`refused` reads what the limits refused and `remove` takes the group away once the tree
is gone.

- cgroup v2: a child of ztsa's own cgroup, when that cgroup hands the memory and pids
  controllers down (a delegated subtree whose processes live in leaves: v2 refuses
  controllers in a group that has processes of its own, and ztsa moves none).
- cgroup v1 (a hybrid host): a child of ztsa's own group in the memory and the pids
  hierarchies, when ztsa may write there (root, or a hierarchy delegated to the user).
Elsewhere (an ordinary user without delegation) `make` says why not, and the rlimits a
process (RLIMIT_DATA, and RLIMIT_NPROC or the PID namespace's pid_max) are all there is.
"""

from __future__ import annotations

import _thread
import contextlib
import errno
import os

from ztsa.records import NamedTuple


class Group(NamedTuple):
    kind: str  # "cgroup v2" or "cgroup v1"
    dirs: tuple[str, ...]  # the groups made (one for v2; memory's and pids' for v1)
    memory: str  # the group that holds the memory limit ("" when none)
    pids: str  # the group that holds the process limit ("" when none)
    max_memory: int  # bytes of memory the whole tree may use (0: no limit)


class Refused(NamedTuple):
    memory: int  # processes the kernel killed at the memory limit
    procs: int  # forks and clones refused at the process limit


def default_total(meminfo: str = "/proc/meminfo") -> int:
    """The tree's memory total when --max-memory does not say: three quarters of the
    machine's memory, so that a balloon leaves the host usable while no build that the
    machine could run at all is stopped (4 GiB when /proc/meminfo cannot say)."""
    try:
        kib = _counter(_read(meminfo).replace(":", ""), "MemTotal")
    except OSError:
        kib = 0
    return (kib << 10) * 3 // 4 if kib else 4 << 30


def size(n: int) -> str:
    """A byte count as people write it: 512M, 1.5G."""
    for unit, shift in (("T", 40), ("G", 30), ("M", 20), ("K", 10)):
        if n >= 1 << shift:
            value = n / (1 << shift)
            return f"{value:.1f}".removesuffix(".0") + unit
    return str(n)


def _mounts(mountinfo: str) -> tuple[tuple[str, str], dict[str, tuple[str, str]]]:
    """(the cgroup2 mount's (point, root) or ("", ""), {v1 controller: its mount's (point,
    root)}). The root is the group the mount shows at its point: "/" on a host, the
    container's own group where a runtime mounts only that (cgroup v1 without a cgroup
    namespace), while /proc/self/cgroup still names the whole path."""
    v2, v1 = ("", ""), dict[str, tuple[str, str]]()
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        root, point = (f.replace("\\040", " ") for f in fields[3:5])
        if tail[0] == "cgroup2" and not v2[0]:
            v2 = (point, root)
        elif tail[0] == "cgroup":
            for option in tail[2].split(","):
                if option in ("memory", "pids"):
                    v1.setdefault(option, (point, root))
    return v2, v1


def _under(mount: tuple[str, str], path: str) -> str:
    """The directory of the group `path` (as /proc/self/cgroup names it) through the
    mount (point, root), or "" where that mount does not show it."""
    point, root = mount
    rel = os.path.relpath(path or "/", root or "/")
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return ""
    return point if rel == os.curdir else os.path.join(point, rel)


def _own(cgroups: str) -> tuple[str, dict[str, str]]:
    """(ztsa's v2 path or "", {v1 controller: ztsa's path in its hierarchy})."""
    v2, v1 = "", dict[str, str]()
    for line in cgroups.splitlines():
        num, _, rest = line.partition(":")
        names, _, path = rest.partition(":")
        if num == "0" and not names:
            v2 = path
        for name in names.split(","):
            if name in ("memory", "pids"):
                v1[name] = path
    return v2, v1


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def _write(path: str, value: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def _counter(text: str, key: str) -> int:
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        value = value.strip().removesuffix(" kB")
        if name == key and value.isdigit():
            return int(value)
    return 0


def _mkdir(parent: str, name: str) -> str:
    path = os.path.join(parent, name)
    os.mkdir(path, 0o755)
    return path


def _bases(proc: str) -> tuple[str, str, dict[str, str]]:
    """(ztsa's own v2 path or "", the directory of its v2 group or "", {v1 controller:
    the directory of ztsa's group in that hierarchy}); OSError if /proc cannot say."""
    v2_mount, v1_mounts = _mounts(_read(f"{proc}/self/mountinfo"))
    v2_path, v1_paths = _own(_read(f"{proc}/self/cgroup"))
    v2 = _under(v2_mount, v2_path) if v2_mount[0] and v2_path else ""
    v1 = {c: _under(mount, v1_paths.get(c, "/")) for c, mount in v1_mounts.items()}
    return v2_path, v2, {c: d for c, d in v1.items() if d}


def _limit(made: Group, memory_file: str, swap: tuple[str, str], max_procs: int) -> None:
    """The memory total in memory_file and the swap limit (file, value) where the kernel
    accounts swap, in the memory group; the process limit in the pids group."""
    if made.max_memory:
        _write(os.path.join(made.memory, memory_file), str(made.max_memory))
        with contextlib.suppress(FileNotFoundError):  # no swap accounting
            _write(os.path.join(made.memory, swap[0]), swap[1])
    if max_procs:
        _write(os.path.join(made.pids, "pids.max"), str(max_procs))


def make(run_id: str, max_procs: int, max_memory: int,
         proc: str = "/proc") -> tuple[Group | None, str]:
    """A new group for the tree with its limits (0: none), or (None, why not)."""
    try:
        v2_path, base, v1_bases = _bases(proc)
    except OSError as e:
        return None, f"cannot read ztsa's cgroups: {e.strerror}"
    name = f"ztsa-{os.getpid()}-{run_id}"
    why = "no cgroup with the memory and pids controllers"
    if base:
        try:
            handed = _read(os.path.join(base, "cgroup.subtree_control")).split()
        except OSError:
            handed = []
        if "memory" in handed and "pids" in handed:
            try:
                group = _mkdir(base, name)
            except OSError as e:
                why = f"cannot make a cgroup in {base}: {e.strerror}"
            else:
                made = Group("cgroup v2", (group,), group, group, max_memory)
                try:
                    _limit(made, "memory.max", ("memory.swap.max", "0"), max_procs)
                except OSError as e:
                    remove(made)
                    return None, f"cannot set the limits of {group}: {e.strerror}"
                prewarm(proc)
                return made, ""
        elif not v1_bases:
            why = (f"ztsa's cgroup {v2_path} does not hand the memory and pids controllers "
                   "to groups beneath it (no delegation)")
    if "memory" in v1_bases and "pids" in v1_bases:
        dirs: list[str] = []
        try:
            for controller in ("memory", "pids"):
                base = v1_bases[controller]
                dirs.append(_mkdir(base, name))
        except OSError as e:
            remove(Group("cgroup v1", tuple(dirs), "", "", 0))
            return None, f"cannot make a cgroup in {base}: {e.strerror}"
        made = Group("cgroup v1", tuple(dirs), dirs[0], dirs[1], max_memory)
        try:
            _limit(made, "memory.limit_in_bytes",
                   ("memory.memsw.limit_in_bytes", str(max_memory)), max_procs)
            if max_memory:  # v1 charges TCP buffers only to a limit of their own
                with contextlib.suppress(FileNotFoundError):
                    _write(os.path.join(made.memory, "memory.kmem.tcp.limit_in_bytes"),
                           str(max_memory))
        except OSError as e:
            remove(made)
            return None, f"cannot set the limits of the tree's cgroup: {e.strerror}"
        prewarm(proc)
        return made, ""
    return None, why


class _Warmth:
    """The keep-warm thread's state: `first` is held until its first move is done, and
    `stop` asks it to end."""

    def __init__(self) -> None:
        self.first = _thread.allocate_lock()
        self.first.acquire()
        self.stop = False


_warmth: list[_Warmth] = []  # the keep-warm thread of this process, once started

KEEP_WARM_S = 5.0  # the longest a run's planning keeps the moves warm


def prewarm(proc: str = "/proc") -> None:
    """Keep cgroup moves fast until the child's `enter`. A move waits for an RCU grace
    period, unless another move happened within about one grace period before: a thread
    moves ztsa into the cgroup it is already in (nothing changes; a refusal ends it), at
    once and then every 2 ms, while the gate runs and the run is planned and spawned.
    Started as `ztsa exec` begins, so that the first, slow move is over before the fork;
    a call while one keeps them warm does nothing; `enter` ends it."""
    if _warmth and not _warmth[-1].stop:
        return
    try:
        _, v2, v1 = _bases(proc)
    except OSError:
        return
    target = v2 or v1.get("memory") or v1.get("pids")
    if not target:
        return
    own = os.path.join(target, "cgroup.procs")
    warmth = _Warmth()
    _warmth[:] = [warmth]

    def keep() -> None:
        import time

        until = time.monotonic() + KEEP_WARM_S
        try:
            _write(own, str(os.getpid()))
        except OSError:
            return
        finally:
            warmth.first.release()  # only this thread releases it, once
        while not warmth.stop and time.monotonic() < until:
            time.sleep(0.002)
            try:
                _write(own, str(os.getpid()))
            except OSError:
                return

    _thread.start_new_thread(keep, ())


def enter(group: Group, pid: int) -> None:
    """Put process pid (not yet running anything of the tree's) in the group."""
    for warmth in _warmth:
        with warmth.first:  # its first move is over: this one needs no grace period
            warmth.stop = True
    for d in group.dirs:
        _write(os.path.join(d, "cgroup.procs"), str(pid))


def refused(group: Group) -> Refused:
    """What the limits refused so far."""
    memory = procs = 0
    with contextlib.suppress(OSError):
        if group.kind == "cgroup v2":
            memory = _counter(_read(os.path.join(group.memory, "memory.events")), "oom_kill")
        else:
            memory = _counter(_read(os.path.join(group.memory, "memory.oom_control")),
                              "oom_kill")
    with contextlib.suppress(OSError):
        procs = _counter(_read(os.path.join(group.pids, "pids.events")), "max")
    return Refused(memory, procs)


def remove(group: Group) -> None:
    """Remove the groups (each empty once the tree is gone; a zombie still counted is
    waited for briefly)."""
    import time

    for d in group.dirs:
        for _ in range(50):
            try:
                os.rmdir(d)
                break
            except FileNotFoundError:
                break
            except OSError as e:
                if e.errno != errno.EBUSY:
                    break
                time.sleep(0.002)


def reap_stale(proc: str = "/proc") -> None:
    """Remove the groups of ztsa runs killed before their own cleanup: named with a
    process ID that no longer exists here, and empty (rmdir refuses any other)."""
    try:
        _, v2, v1_bases = _bases(proc)
    except OSError:
        return
    for base in [*v1_bases.values(), *([v2] if v2 else [])]:
        try:
            names = os.listdir(base)
        except OSError:
            continue
        for entry in names:
            parts = entry.split("-")
            if len(parts) != 3 or parts[0] != "ztsa" or not parts[1].isdigit():
                continue
            if os.path.exists(f"{proc}/{parts[1]}"):
                continue
            with contextlib.suppress(OSError):
                os.rmdir(os.path.join(base, entry))
