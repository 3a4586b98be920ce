"""Paths of a run: finding CMD, and the private directory for its home and TMPDIR.

These stand in for shutil.which, tempfile.mkdtemp and shutil.rmtree, which `ztsa exec`
does not import: shutil and tempfile (with random, weakref, zlib, bz2 and lzma) cost
several milliseconds of every run's start-up.
"""

from __future__ import annotations

import contextlib
import errno
import os


def find_program(cmd: str, path: str | None) -> str | None:
    """CMD as shutil.which finds it (without importing shutil): a name with a slash as
    it is, else the first executable non-directory of that name on PATH (an empty
    entry is the current directory)."""
    if "/" in cmd:
        return cmd if os.path.exists(cmd) else None
    if path == "":
        return None
    for entry in (os.defpath if path is None else path).split(os.pathsep):
        candidate = os.path.join(entry, cmd)
        if os.access(candidate, os.X_OK) and not os.path.isdir(candidate):
            return candidate
    return None


def private_dir() -> str:
    """A new 0700 directory for the run's home and TMPDIR (as tempfile.mkdtemp makes
    it: a random name, created exclusively, never an existing one)."""
    base = os.environ.get("TMPDIR") or "/tmp"
    if not os.path.isdir(base):
        base = "/tmp"
    for _ in range(100):
        path = os.path.join(os.path.abspath(base), f"ztsa-run-{os.urandom(6).hex()}")
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        return path
    raise FileExistsError(errno.EEXIST, "no free name for the private directory", base)


def remove_tree(path: str) -> None:
    """Remove PATH and everything under it, never following a symbolic link (the tree
    could plant one in its TMPDIR): directories are walked by file descriptor, and
    entries are removed relative to their directory's descriptor. Errors are ignored,
    as shutil.rmtree(ignore_errors=True) would."""
    # bottom-up; each dirfd is valid only until the walk moves on (the walk raises only
    # when PATH itself is gone)
    with contextlib.suppress(OSError):
        for _dirpath, dirnames, filenames, dirfd in os.fwalk(path, topdown=False):
            for name in filenames:
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=dirfd)
            for name in dirnames:
                try:
                    os.rmdir(name, dir_fd=dirfd)
                except OSError:
                    # a symbolic link to a directory is listed among the directories
                    with contextlib.suppress(OSError):
                        os.unlink(name, dir_fd=dirfd)
    with contextlib.suppress(OSError):
        os.rmdir(path)
