"""Write confinement with Landlock: the tree may write only inside the workspace, the
private home and TMPDIR, the --allow-write paths and a few devices. Reads are not
restricted here. The kernel enforces it for every process of the tree (the ruleset is
inherited across fork and exec), so no check can be raced."""

from __future__ import annotations

import os
from typing import NamedTuple

# LANDLOCK_ACCESS_FS_* (linux/landlock.h; Debian 12's headers lack the newer ones)
WRITE_FILE, REMOVE_DIR, REMOVE_FILE = 1 << 1, 1 << 4, 1 << 5
MAKE_CHAR, MAKE_DIR, MAKE_REG, MAKE_SOCK = 1 << 6, 1 << 7, 1 << 8, 1 << 9
MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15  # ABI 2, 3 and 5

WRITE_ABI1 = (WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG
              | MAKE_SOCK | MAKE_FIFO | MAKE_BLOCK | MAKE_SYM)
FILE_RIGHTS = WRITE_FILE | TRUNCATE | IOCTL_DEV
# writable devices; directories get every handled right, files the file rights
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts",
           "/dev/shm")


class Plan(NamedTuple):
    abi: int
    handled: int
    rules: list[tuple[str, int]]  # (path, allowed rights)
    missing: list[str]  # controls this kernel cannot enforce


def handled_rights(abi: int) -> tuple[int, list[str]]:
    handled, missing = 0, []
    if abi < 1:
        return 0, ["Landlock (writes outside the workspace cannot be blocked)"]
    handled = WRITE_ABI1
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


def plan(abi: int, writable_dirs: list[str]) -> Plan:
    handled, missing = handled_rights(abi)
    rules: list[tuple[str, int]] = []
    for d in writable_dirs:
        rules.append((os.path.realpath(d), handled))
    for dev in DEVICES:
        if os.path.isdir(dev):
            rules.append((dev, handled))
        elif os.path.exists(dev):
            rules.append((dev, handled & FILE_RIGHTS))
    return Plan(abi, handled, rules, missing)
