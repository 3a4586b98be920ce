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
    could plant one in its TMPDIR). However deep the tree nested its directories, the
    walk recurses nowhere and holds two descriptors at most: it goes down by opening a
    subdirectory relative to its parent's descriptor and back up by `..`, checked
    against the directory it came from. A directory the tree made unreadable or
    unwritable (chmod 000, which does not stop its owner from changing it back) is given
    its owner's rights again and emptied too. Other errors leave what they concern in
    place, as shutil.rmtree(ignore_errors=True) would. Called once the tree is gone:
    nothing swaps a directory for a link meanwhile."""
    if _remove_empty_dirs(path):
        return
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = _open_dir(path, None, flags)
    except OSError:
        return  # gone, or not a directory (a link is left, never followed)
    try:
        top = os.fstat(fd)
        # the way down: each directory entered, as (its name, device, inode, the names
        # of its subdirectories still to empty)
        trail = [("", top.st_dev, top.st_ino, _empty_files(fd))]
        while True:
            name, pending = trail[-1][0], trail[-1][3]
            if pending:
                child = pending.pop()
                try:
                    sub = _open_dir(child, fd, flags)
                except OSError:
                    continue  # left in place
                os.close(fd)
                fd = sub
                st = os.fstat(fd)
                trail.append((child, st.st_dev, st.st_ino, _empty_files(fd)))
                continue
            if len(trail) == 1:
                break
            trail.pop()
            parent = os.open("..", flags, dir_fd=fd)
            os.close(fd)
            fd = parent
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != trail[-1][1:3]:
                return  # not the way it came down: stop rather than guess
            with contextlib.suppress(OSError):
                os.rmdir(name, dir_fd=fd)
    except OSError:
        return
    finally:
        os.close(fd)
    with contextlib.suppress(OSError):
        os.rmdir(path)


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


def _open_dir(name: str, dir_fd: int | None, flags: int) -> int:
    """NAME opened as a directory, given its owner's rights first if it refuses."""
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except PermissionError:
        import stat

        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if not stat.S_ISDIR(st.st_mode):
            raise
        os.chmod(name, stat.S_IMODE(st.st_mode) | 0o700, dir_fd=dir_fd)
        return os.open(name, flags, dir_fd=dir_fd)


def _empty_files(fd: int) -> list[str]:
    """Remove what the directory FD holds but its non-empty subdirectories (files,
    links, empty directories), given its owner's rights first; return those
    subdirectories' names."""
    import stat

    st = os.fstat(fd)
    if st.st_mode & 0o700 != 0o700:
        with contextlib.suppress(OSError):
            os.chmod(fd, stat.S_IMODE(st.st_mode) | 0o700)
    with os.scandir(fd) as entries:
        listed = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
    full = []
    for name, is_dir in listed:
        try:
            if is_dir:
                os.rmdir(name, dir_fd=fd)
            else:
                os.unlink(name, dir_fd=fd)
        except OSError:
            if is_dir:
                full.append(name)
    return full
