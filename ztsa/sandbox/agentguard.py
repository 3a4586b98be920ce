"""What a run leaves in an agent's kept state (--agent), judged before and after the run.

The entries an agent keeps (its transcripts, to-do lists, history) are the tree's to
write during the run. An unconfined run of the agent later reads them, follows the
links in them and, for some of them, obeys them. So before the run (what a killed run
left) and after it, ztsa:
- removes every entry that is neither a regular file nor a directory: a symbolic link
  (to ~/.bashrc, say, written through later), a FIFO, a socket, a device;
- clears group and other write, setuid, setgid and sticky bits, so that nobody else
  can plant anything there afterwards;
- moves aside, into `<state>/.ztsa-quarantine/RUN/`, what is new or changed among the
  files an agent loads as instructions (Claude Code's `projects/*/memory/`), and any
  directory nested deeper than any agent nests its state.
It walks by descriptors (openat with O_NOFOLLOW, unlinkat and renameat on the
directory it checked), never by path, so no concurrent tree can redirect it; it never
recurses. What it cannot check it names. It never raises."""

from __future__ import annotations

import contextlib
import fnmatch
import os
import stat

from ztsa.records import NamedTuple

MAX_DEPTH = 32  # Claude Code's projects/<slug>/<session>/subagents/...: a few levels
QUARANTINE = ".ztsa-quarantine"
NOFOLLOW_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Finding(NamedTuple):
    path: str  # absolute, in the real state directory
    reason: str
    moved_to: str | None = None  # in the quarantine; None: removed, or left (error)
    error: str = ""


# relative path -> (inode, size, mtime_ns, ctime_ns): the tree may set a file's times
# back after writing it in place, but never its ctime
Snapshot = dict[str, tuple[int, int, int, int]]


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _walk(top: str, entries: tuple[str, ...], visit_file: object, visit_other: object,
          visit_dir: object, deep: object, failed: list[Finding]) -> None:
    """Every entry beneath the kept entries of the state directory TOP, by descriptors.
    The visitors get (directory descriptor, name, stat result, relative path)."""
    try:
        top_fd = os.open(top, NOFOLLOW_DIR)
    except OSError as exc:
        failed.append(Finding(top, "cannot open the state directory", error=exc.strerror
                              or str(exc)))
        return
    stack: list[tuple[int, list[str], int, str]] = [(top_fd, list(entries), 0, "")]
    try:
        while stack:
            fd, pending, depth, rel = stack[-1]
            if not pending:
                stack.pop()
                os.close(fd)
                continue
            name = pending.pop()
            path = f"{rel}/{name}" if rel else name
            # a kept entry itself may be the person's own link (the tree cannot replace
            # it: a mount point, or an entry of a directory it cannot write)
            follow = depth == 0
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=follow)
            except FileNotFoundError:
                continue
            except OSError as exc:
                failed.append(Finding(os.path.join(top, path), "cannot be checked",
                                      error=exc.strerror or str(exc)))
                continue
            if not stat.S_ISDIR(st.st_mode):
                (visit_file if stat.S_ISREG(st.st_mode) else visit_other)(  # type: ignore[operator]
                    fd, name, st, path)
                continue
            if depth >= MAX_DEPTH:
                deep(fd, name, path)  # type: ignore[operator]
                continue
            child = _open_dir(fd, name, follow)
            if isinstance(child, str):
                failed.append(Finding(os.path.join(top, path), "cannot be listed",
                                      error=child))
                continue
            visit_dir(child, path)  # type: ignore[operator]
            try:
                names = os.listdir(child)
            except OSError as exc:
                os.close(child)
                failed.append(Finding(os.path.join(top, path), "cannot be listed",
                                      error=exc.strerror or str(exc)))
                continue
            stack.append((child, names, depth + 1, path))
    finally:
        for fd, *_ in stack:
            os.close(fd)


def _open_dir(parent: int, name: str, follow: bool = False) -> int | str:
    """A descriptor of the directory NAME in PARENT, never through a link (unless
    FOLLOW: a kept entry); a directory the tree made unreadable, a kept entry too, is
    given its owner's rights first (it is the caller's own). Or why not."""
    how = os.O_DIRECTORY | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        return os.open(name, os.O_RDONLY | how, dir_fd=parent)
    except PermissionError:
        pass
    except OSError as exc:
        return exc.strerror or str(exc)
    try:
        path_fd = os.open(name, os.O_PATH | how, dir_fd=parent)
        try:  # the directory itself: O_PATH
            mode = stat.S_IMODE(os.fstat(path_fd).st_mode)
            os.chmod(f"/proc/self/fd/{path_fd}", mode | 0o700)
        finally:
            os.close(path_fd)
        return os.open(name, os.O_RDONLY | how, dir_fd=parent)
    except OSError as exc:
        return exc.strerror or str(exc)


def _plain_mode(mode: int) -> int:
    """MODE without group/other write, setuid, setgid and sticky bits."""
    return stat.S_IMODE(mode) & ~0o7022


def _instruction(rel: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(rel, p + "/*") for p in patterns)


def snapshot(top: str, entries: tuple[str, ...], patterns: tuple[str, ...]) -> Snapshot:
    """The instruction files (PATTERNS, e.g. projects/*/memory) as they are now."""
    seen: Snapshot = {}
    if not patterns:
        return seen

    def on_file(fd: int, name: str, st: os.stat_result, rel: str) -> None:
        if _instruction(rel, patterns):
            seen[rel] = _identity(st)

    def nothing(*_: object) -> None:
        pass

    _walk(top, entries, on_file, nothing, nothing, nothing, [])
    return seen


def audit(top: str, entries: tuple[str, ...], patterns: tuple[str, ...], was: Snapshot,
          run_id: str) -> list[Finding]:
    """Judge the kept entries of the state directory TOP (call before the run, with a
    fresh snapshot, for what an earlier run left; and once every process of the tree has
    ended). Never raises: a failure is a Finding with its error."""
    found: list[Finding] = []
    try:
        _audit(top, entries, patterns, was, run_id, found)
    except Exception as exc:  # the rest of the run's end must happen whatever this met
        found.append(Finding(top, "the check of the agent's state failed",
                             error=f"{type(exc).__name__}: {exc}"))
    return found


def _audit(top: str, entries: tuple[str, ...], patterns: tuple[str, ...], was: Snapshot,
           run_id: str, found: list[Finding]) -> None:
    quarantine: list[int] = []  # its descriptor, made on first use

    def aside(fd: int, name: str, rel: str, reason: str) -> None:
        target = rel.replace("/", "__")
        try:
            if not quarantine:
                top_fd = os.open(top, NOFOLLOW_DIR)
                try:
                    for part in (QUARANTINE, run_id):
                        with contextlib.suppress(FileExistsError):
                            os.mkdir(part, 0o700, dir_fd=top_fd)
                        nxt = os.open(part, NOFOLLOW_DIR, dir_fd=top_fd)
                        os.close(top_fd)
                        top_fd = nxt
                except BaseException:
                    os.close(top_fd)
                    raise
                quarantine.append(top_fd)
            os.rename(name, target, src_dir_fd=fd, dst_dir_fd=quarantine[0])
            found.append(Finding(os.path.join(top, rel), reason,
                                 os.path.join(top, QUARANTINE, run_id, target)))
        except OSError as exc:
            found.append(Finding(os.path.join(top, rel), reason,
                                 error=exc.strerror or str(exc)))

    def on_file(fd: int, name: str, st: os.stat_result, rel: str) -> None:
        if _plain_mode(st.st_mode) != stat.S_IMODE(st.st_mode):
            try:
                f = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                            dir_fd=fd)
                try:
                    os.fchmod(f, _plain_mode(st.st_mode))
                finally:
                    os.close(f)
            except OSError as exc:
                found.append(Finding(os.path.join(top, rel), "its mode lets others write it",
                                     error=exc.strerror or str(exc)))
        if _instruction(rel, patterns) and was.get(rel) != _identity(st):
            aside(fd, name, rel, "an instruction file of the agent made or changed "
                                 "by the run (it would be loaded into a later session)")

    def on_other(fd: int, name: str, st: os.stat_result, rel: str) -> None:
        kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "a FIFO, socket or device"
        target = ""
        if stat.S_ISLNK(st.st_mode):
            with contextlib.suppress(OSError):
                target = f" to {os.readlink(name, dir_fd=fd)}"
        try:
            os.unlink(name, dir_fd=fd)
            found.append(Finding(os.path.join(top, rel), f"{kind}{target}, removed"))
        except OSError as exc:
            found.append(Finding(os.path.join(top, rel), f"{kind}{target}",
                                 error=exc.strerror or str(exc)))

    def on_dir(fd: int, rel: str) -> None:
        mode = os.fstat(fd).st_mode
        if _plain_mode(mode) != stat.S_IMODE(mode):
            os.fchmod(fd, _plain_mode(mode) | 0o700)

    def deep(fd: int, name: str, rel: str) -> None:
        aside(fd, name, rel, f"a directory nested deeper than {MAX_DEPTH} levels")

    try:
        top_fd = os.open(top, NOFOLLOW_DIR)
        try:
            on_dir(top_fd, "")
        finally:
            os.close(top_fd)
    except OSError:
        pass  # _walk names it
    _walk(top, entries, on_file, on_other, on_dir, deep, found)
    for fd in quarantine:
        os.close(fd)
