"""Paths of a run: finding CMD, and the private directory for its home and TMPDIR.

These stand in for shutil.which, tempfile.mkdtemp and shutil.rmtree, which `ztsa exec`
does not import: shutil and tempfile (with random, weakref, zlib, bz2 and lzma) would
add to every run's start-up (docs/performance.md).
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


def private_base() -> str:
    """Where private directories are made: `ztsa-UID`, a 0700 directory of the user's
    own in $TMPDIR if that is a directory, else in /tmp. Each run's mount view covers it
    but for the run's own directory, so that no run reaches another's private home (an
    agent's copied credentials). Where another user holds that name, a new directory of
    the same kind for this run alone."""
    import stat

    top = os.environ.get("TMPDIR") or "/tmp"
    top = os.path.abspath(top if os.path.isdir(top) else "/tmp")
    uid = os.geteuid()
    base = os.path.join(top, f"ztsa-{uid}")
    with contextlib.suppress(FileExistsError):
        os.mkdir(base, 0o700)
    st = os.lstat(base)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid:
        import tempfile  # only then: it costs every run 2 ms (shutil, random, lzma)

        return tempfile.mkdtemp(prefix=f"ztsa-{uid}-", dir=top)
    if stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(base, 0o700)
    return base


def private_dir(reapable: bool = True) -> tuple[str, int]:
    """A new 0700 directory for the run's home and TMPDIR (as tempfile.mkdtemp makes
    it: a random name, created exclusively, never an existing one), and a descriptor of
    it holding an flock for as long as the run lives. reapable: the name carries this
    process's ID, so that a later run may remove it once that process is gone and the
    lock free (reap_stale); a directory kept with --keep-tmp is named without it."""
    base = private_base()
    owner = f"{os.getpid()}-" if reapable else ""
    for _ in range(100):
        path = os.path.join(base, f"ztsa-run-{owner}{os.urandom(6).hex()}")
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        return path, _locked(path)  # new: nobody else can hold its lock
    raise FileExistsError(errno.EEXIST, "no free name for the private directory", base)


def _locked(path: str) -> int:
    """A descriptor of the directory PATH (not a link) holding its flock; OSError if
    another holds it."""
    import fcntl

    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise
    return fd


def reap_stale(base: str | None = None) -> list[str]:
    """Remove the private directories that runs killed before their own cleanup (by
    SIGKILL, say) left behind; return their paths. A directory qualifies only if its
    name carries a process ID (`ztsa-run-PID-HEX`), it is ours (owner and not a link),
    no process has that ID here, and its lock is free: a run in another PID namespace
    sharing this /tmp still holds its lock, a run of an older ztsa has no ID in the
    name, and a directory kept with --keep-tmp has none either."""
    import stat

    base = base or private_base()
    removed: list[str] = []
    try:
        entries = list(os.scandir(base))
    except OSError:
        return removed
    uid = os.geteuid()
    for entry in entries:
        parts = entry.name.split("-")
        if len(parts) != 4 or parts[:2] != ["ztsa", "run"] or not parts[2].isdigit():
            continue
        try:
            st = entry.stat(follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid:
                continue
            os.kill(int(parts[2]), 0)
            continue  # its process (or one with its ID) is alive
        except ProcessLookupError:
            pass
        except OSError:
            continue  # unreadable, or a process we may not signal: alive
        try:
            fd = _locked(entry.path)
        except OSError:
            continue  # a live run holds it (or it is gone)
        try:
            remove_tree(entry.path)
            removed.append(entry.path)
        finally:
            os.close(fd)
    return removed


def remove_tree(path: str) -> None:
    """Remove PATH and everything under it, never following a symbolic link (the tree
    could plant one in its TMPDIR): directories are walked by file descriptor, and
    entries are removed relative to their directory's descriptor. A directory the tree
    made unreadable (chmod 000, which does not stop its owner from changing it back) is
    given its owner's rights again and emptied too. Other errors are ignored, as
    shutil.rmtree(ignore_errors=True) would. Called once the tree is gone: nothing
    swaps a directory for a link meanwhile."""
    if _remove_empty_dirs(path):
        return
    _remove(path)
    if os.path.lexists(path):
        _owner_rights(path)
        _remove(path)


def _remove_empty_dirs(path: str) -> bool:
    """The common case, in a few syscalls instead of a walk: PATH holds only empty
    directories (a private HOME and TMPDIR the tree left empty). rmdir(2) never follows
    a link (a symlink in their place is ENOTDIR); any failure leaves the rest to the
    walk."""
    try:
        with os.scandir(path) as entries:
            names = [e.name for e in entries]
        for name in names:
            os.rmdir(os.path.join(path, name))
        os.rmdir(path)
    except OSError:
        return False
    return True


def _remove(path: str) -> None:
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


def _owner_rights(path: str) -> None:
    """rwx for the owner on PATH and every directory beneath it (top-down, so that each
    can then be listed), links never followed."""
    import stat

    with contextlib.suppress(OSError):
        st = os.lstat(path)
        if stat.S_ISDIR(st.st_mode):
            os.chmod(path, stat.S_IMODE(st.st_mode) | 0o700)
    with contextlib.suppress(OSError):
        for _dirpath, dirnames, _filenames, dirfd in os.fwalk(path):
            for name in dirnames:
                with contextlib.suppress(OSError):
                    st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
                    if stat.S_ISDIR(st.st_mode) and st.st_mode & 0o700 != 0o700:
                        os.chmod(name, stat.S_IMODE(st.st_mode) | 0o700, dir_fd=dirfd)
