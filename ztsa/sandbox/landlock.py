"""Landlock confinement of the tree, enforced by the kernel for every process of it (the
ruleset is inherited across fork and exec), so no check can be raced:
- writes only inside the workspace, the private home and TMPDIR, the --allow-write paths
  and a few devices;
- reads everywhere except the credential paths of the real home (FS002's list) and the
  system's secrets (/etc/shadow, SSH host keys, ...): read
  rights are granted on every entry of the filesystem tree except those paths, walking
  only the directories that lead to one (a Landlock rule grants a whole hierarchy, so a
  hidden path's ancestors get no read rule, only their other entries do). Directories
  stay listable everywhere, hidden ones included: names can be seen, contents cannot."""

from __future__ import annotations

import os

from ztsa.records import NamedTuple

# LANDLOCK_ACCESS_FS_* (linux/landlock.h; Debian 12's headers lack the newer ones)
WRITE_FILE, REMOVE_DIR, REMOVE_FILE = 1 << 1, 1 << 4, 1 << 5
MAKE_CHAR, MAKE_DIR, MAKE_REG, MAKE_SOCK = 1 << 6, 1 << 7, 1 << 8, 1 << 9
MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15  # ABI 2, 3 and 5

WRITE_ABI1 = (WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG
              | MAKE_SOCK | MAKE_FIFO | MAKE_BLOCK | MAKE_SYM)
EXECUTE, READ_FILE, READ_DIR = 1 << 0, 1 << 2, 1 << 3
READ = EXECUTE | READ_FILE | READ_DIR
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
# credential paths of the real home, never readable by the tree (FS002's list)
CREDENTIALS = (".ssh", ".aws", ".kube", ".config/gcloud", ".azure", ".docker", ".gnupg",
               ".npmrc", ".pypirc", ".netrc", ".git-credentials", ".vault-token",
               ".cargo/credentials", ".cargo/credentials.toml", ".config/gh",
               ".claude/.credentials.json", ".codex/auth.json")
# the system's secrets, unreadable by the tree even when ztsa runs as root (whose tree
# keeps uid 0, the owner of these files, without its capabilities)
SYSTEM_SECRETS = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
                  "/etc/security/opasswd", "/etc/ssl/private", "/etc/sudoers",
                  "/etc/sudoers.d")
SSH_HOST_KEYS = "/etc/ssh"  # its ssh_host_*_key files (the .pub ones stay readable)
# /dev is read only where a program needs it: a tree started by root reads every device
# root owns otherwise (disks, loop devices, the console's screen and input)
READABLE_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
                    "/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/shm", "/dev/fd", "/dev/stdin",
                    "/dev/stdout", "/dev/stderr")
# writable devices; directories get every handled right, files the file rights
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts",
           "/dev/shm")


class Plan(NamedTuple):
    abi: int
    handled: int
    rules: list[tuple[str, int]]  # (path, allowed rights)
    missing: list[str]  # controls this kernel cannot enforce
    scoped: int = 0  # the tree's scopes (SCOPE_SIGNAL: no signal leaves its domain)


def handled_rights(abi: int) -> tuple[int, list[str]]:
    handled, missing = 0, []
    if abi < 1:
        return 0, ["Landlock (writes outside the workspace cannot be blocked)"]
    handled = WRITE_ABI1 | READ
    if abi >= 2:
        handled |= REFER
    else:
        missing.append("Landlock ABI 2 (renames and links across directories)")
    if abi >= 3:
        handled |= TRUNCATE
    else:
        missing.append("Landlock ABI 3 (truncation)")
    if abi >= 5:
        handled |= IOCTL_DEV
    else:
        missing.append("Landlock ABI 5 (device ioctls)")
    return handled, missing


def system_host_keys(where: str = SSH_HOST_KEYS) -> list[str]:
    try:
        names = os.listdir(where)
    except OSError:
        return []
    return [os.path.join(where, n) for n in sorted(names)
            if n.startswith("ssh_host_") and n.endswith("_key")]


def read_rules(hidden: list[str], limit: int = 4096,
               absent_too: list[str] | None = None) -> list[tuple[str, int]]:
    """READ on every entry of the tree except the hidden paths and their ancestors.
    absent_too: hidden even when absent now (a policy's fs.deny_read): its directory gets
    no rule of its own, so a file made there during the run stays unreadable."""
    hidden_real = {os.path.realpath(h) for h in hidden if os.path.lexists(h)}
    hidden_real |= {os.path.realpath(h) for h in absent_too or ()}
    ancestors = {"/"}
    for h in hidden_real:
        d = os.path.dirname(h)
        while d not in ancestors:
            ancestors.add(d)
            d = os.path.dirname(d)
    # listing directories stays possible everywhere (a Landlock rule cannot stop READ_DIR
    # from reaching the hidden directories below): names may be seen, contents not
    rules: list[tuple[str, int]] = [(a, READ_DIR) for a in sorted(ancestors)]
    stack = ["/"]
    while stack:
        d = stack.pop()
        try:
            with os.scandir(d) as it:
                entries = list(it)
        except OSError:
            continue
        for e in entries:
            # d is real (/ or an ancestor of a real hidden path): so is an entry that is
            # no symlink
            link = e.is_symlink()
            path, real = e.path, os.path.realpath(e.path) if link else e.path
            if real in hidden_real or any(real.startswith(h + "/") for h in hidden_real):
                continue
            if path in ancestors:
                stack.append(path)
            elif real in ancestors:
                continue  # a symlink to an ancestor: its other entries are covered
            else:
                is_dir = os.path.isdir(real) if link else e.is_dir(follow_symlinks=False)
                rules.append((real, READ if is_dir else READ & FILE_RIGHTS))
            if len(rules) > limit:
                raise OSError(f"more than {limit} read rules")
    return rules


def unreadable(homes: list[str | None], hidden: list[str] | None = None) -> list[str]:
    """What the tree may never read: the homes' credential paths, the system's secrets,
    /dev (but READABLE_DEVICES) and hidden (a policy's fs.deny_read)."""
    out = [os.path.join(h, c) for h in dict.fromkeys(h for h in homes if h)
           for c in CREDENTIALS]
    return [*out, *SYSTEM_SECRETS, *system_host_keys(), "/dev", *(hidden or [])]


def audit_plan(abi: int, hidden: list[str], limit: int = 4096) -> Plan:
    """--audit-only's ruleset: writes everywhere (the rights handled, so that CMD's
    second ruleset can keep the agent files), reads everywhere but `hidden` (a policy's
    fs.deny_read, which no flag loosens); the scopes as ever."""
    handled, missing = handled_rights(abi)
    if not handled:
        return Plan(abi, 0, [], missing, scope(abi, missing))
    write = handled & ~READ
    rules: list[tuple[str, int]] = [("/", write)]
    if hidden:
        try:
            rules += read_rules(list(hidden), limit, absent_too=list(hidden))
        except OSError:
            missing.append(f"Landlock read rules for fs.deny_read (more than {limit})")
            handled &= ~READ
    else:
        handled &= ~READ
    return Plan(abi, handled, rules, missing, scope(abi, missing))


def plan(abi: int, writable_dirs: list[str], home: str | None,
         limit: int = 4096, also: list[str] | None = None,
         hidden: list[str] | None = None) -> Plan:
    """The ruleset. When the directories leading to the credential paths hold more
    entries than `limit` read rules, reads are not handled and that control is listed
    as missing (refused under untrusted, recorded otherwise). hidden: more paths never
    readable (a policy's fs.deny_read)."""
    handled, missing = handled_rights(abi)
    write = handled & ~READ
    rules: list[tuple[str, int]] = []
    for d in writable_dirs:  # a file among them (an agent's history) gets file rights
        real = os.path.realpath(d)
        rules.append((real, write if not os.path.isfile(real) else write & FILE_RIGHTS))
    for dev in DEVICES:
        if os.path.isdir(dev):
            rules.append((dev, write))
        elif os.path.exists(dev):
            rules.append((dev, write & FILE_RIGHTS))
    if handled:
        try:
            rules += read_rules(unreadable([home, *(also or [])], hidden), limit,
                                absent_too=hidden)
            rules += [(d, READ if os.path.isdir(d) else READ & FILE_RIGHTS)
                      for d in READABLE_DEVICES
                      if os.path.exists(d) and not os.path.islink(d)]
        except OSError:
            handled &= ~READ
            missing.append(f"Landlock read rules for the credential paths of {home} and the "
                           f"system's secrets (the directories leading to them hold more "
                           f"than {limit} entries; the real home stays hidden, and a "
                           f"policy's fs.deny_read is hidden by mounts)")
    return Plan(abi, handled, rules, missing, scope(abi, missing))


SCOPE_SIGNAL = 1 << 1  # LANDLOCK_SCOPE_SIGNAL (ABI 6)
SCOPE_MISSING = "Landlock ABI 6 (signals to processes outside the tree)"


def scope(abi: int, missing: list[str] | None = None) -> int:
    """The tree's Landlock scopes; what the ABI lacks is added to missing."""
    if abi >= 6:
        return SCOPE_SIGNAL
    if missing is not None and abi >= 1:
        missing.append(SCOPE_MISSING)
    return 0


MAKE_ALL = MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO | MAKE_BLOCK | MAKE_SYM


class Kept(NamedTuple):
    """CMD's kept-state ruleset under --agent, a layer of its own on top of the others
    (native/child.c applies it; native/creation.c is the file helper's view of it): no
    process of the tree writes, truncates or makes a name beneath the agent's kept
    entries, the agent included. The helper, outside this layer, performs the agent's
    own writes there: those of CMD's thread group alone (issue #44)."""

    handled: int  # WRITE_FILE, TRUNCATE, the MAKE_* rights and REFER, as the first handles
    rules: list[tuple[str, int]]  # every writable place of the first ruleset but these
    paths: list[str]  # the kept entries as the tree sees them (their mount points)
    way: list[str]  # the directories on the way to them from a writable root that holds
    # them (the private home, its state directory): the kernel makes no name there


def kept_plan(first: Plan, kept: list[str]) -> Kept | None:
    """The kept-state layer over the first ruleset FIRST, for the kept entries KEPT
    (absolute, as the tree sees them); None when there are none or Landlock cannot hold
    writes. A rule covers a whole hierarchy, so a writable root that holds kept entries
    (the private home) is granted entry by entry along the way down to them: each entry
    that exists now in a directory on the way, other than the next one on the way and
    the kept ones (symbolic links are granted nothing). Removal is not handled: a tool
    may delete a transcript (as it may in the workspace), never write one."""
    handled = first.handled & (WRITE_FILE | TRUNCATE | MAKE_ALL | REFER)
    if not kept or not (handled & WRITE_FILE and handled & MAKE_REG):
        return None
    paths = list(dict.fromkeys(os.path.realpath(k) for k in kept))

    def within(path: str, top: str) -> bool:
        return path == top or path.startswith(top.rstrip("/") + "/")

    on_way: set[str] = set()
    for k in paths:
        d = os.path.dirname(k)
        while d not in on_way:
            on_way.add(d)
            if d == "/":
                break
            d = os.path.dirname(d)
    rules: list[tuple[str, int]] = []
    way: list[str] = []
    for path, rights in first.rules:
        grant = rights & handled
        if not grant & WRITE_FILE or any(within(path, k) for k in paths):
            continue
        if path not in on_way:
            rules.append((path, grant))
            continue
        stack = [path]
        while stack:
            d = stack.pop()
            way.append(d)
            try:
                with os.scandir(d) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError:
                continue
            for e in entries:
                if e.path in paths or e.is_symlink():
                    continue
                if e.path in on_way:
                    stack.append(e.path)
                else:
                    rules.append((e.path, grant if e.is_dir(follow_symlinks=False)
                                  else grant & FILE_RIGHTS))
    return Kept(handled, rules, paths, list(dict.fromkeys(way)))
