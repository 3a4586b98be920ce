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
  directory nested deeper than any agent nests its state;
- after the run, moves aside every regular file of the kept entries that the run made
  or changed (`written`): a transcript, a to-do list, a plan, a history line. With the
  file helper only the agent's own process writes there (CMD's kept-state Landlock
  layer, landlock.kept_plan; the helper performs CMD's own writes): its tools' writes
  were refused while they ran. This is the second layer: the agent writes what the
  repository's text may steer, and without the helper (no user namespaces) every
  process of the tree writes there. A later `claude --resume` would load it as the
  agent's own past. A kept file that was there before gets its bytes from before the
  run back in place (the person's history stays), its run's version beside the others.
  The quarantine has gitguard's layout and manifest: `ztsa quarantine list --workspace
  ~/.claude` shows it, `restore` puts back what the person chooses.
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
    restored: bool = False  # its bytes from before the run put back in its place


# relative path -> (inode, size, mtime_ns, ctime_ns): the tree may set a file's times
# back after writing it in place, but never its ctime
class Snapshot(dict[str, tuple[int, int, int, int]]):
    """And the bytes of the kept entries that are files (history.jsonl) as they were, to
    put back: `kept`."""

    kept: dict[str, bytes] = {}  # noqa: RUF012  (replaced whole, never changed)


MAX_KEPT_BYTES = 16 << 20


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
    """Every regular file of the kept entries as it is now (the instruction files,
    PATTERNS, e.g. projects/*/memory, among them), and the bytes of the kept entries
    that are files (up to MAX_KEPT_BYTES each; a larger one is moved aside whole)."""
    seen = Snapshot()
    kept: dict[str, bytes] = {}

    def on_file(fd: int, name: str, st: os.stat_result, rel: str) -> None:
        seen[rel] = _identity(st)
        if "/" not in rel and st.st_size <= MAX_KEPT_BYTES:
            data = _read_at(fd, name, follow=True)
            if data is not None:
                kept[rel] = data

    def nothing(*_: object) -> None:
        pass

    _walk(top, entries, on_file, nothing, nothing, nothing, [])
    seen.kept = kept
    return seen


def _read_at(fd: int, name: str, follow: bool = False) -> bytes | None:
    """A regular file's bytes (up to MAX_KEPT_BYTES + 1), or None."""
    how = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        f = os.open(name, how, dir_fd=fd)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(f).st_mode):
            return None
        chunks, size = [], 0
        while size <= MAX_KEPT_BYTES and (chunk := os.read(f, 1 << 20)):
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(f)


WRITTEN = ("written by the run (by the agent, whose words the repository's text may steer; "
           "without the file helper, by any of its processes): a later session would load "
           "it as the agent's own")


def audit(top: str, entries: tuple[str, ...], patterns: tuple[str, ...],
          was: dict[str, tuple[int, int, int, int]], run_id: str, written: bool = False
          ) -> list[Finding]:
    """Judge the kept entries of the state directory TOP (call before the run, with a
    fresh snapshot, for what an earlier run left; and once every process of the tree has
    ended, with WRITTEN: every file the run made or changed since WAS moved aside).
    Never raises: a failure is a Finding with its error."""
    found: list[Finding] = []
    try:
        _audit(top, entries, patterns, was, run_id, found, written)
    except Exception as exc:  # the rest of the run's end must happen whatever this met
        found.append(Finding(top, "the check of the agent's state failed",
                             error=f"{type(exc).__name__}: {exc}"))
    if written and any(f.moved_to for f in found):
        _manifest(top, run_id, found)
    return found


def _manifest(top: str, run_id: str, found: list[Finding]) -> None:
    """What was moved aside, in gitguard's manifest of the quarantine (paths relative to
    TOP), so that `ztsa quarantine list --workspace TOP` shows it."""
    from ztsa.sandbox import gitguard

    gitguard._manifest(top, run_id, [
        gitguard.Moved(os.path.relpath(f.path, top), f.reason,
                       None if f.moved_to is None else os.path.relpath(f.moved_to, top),
                       "restored" if f.restored else "", f.error)
        for f in found if f.moved_to is not None or f.error])


def _audit(top: str, entries: tuple[str, ...], patterns: tuple[str, ...],
           was: dict[str, tuple[int, int, int, int]], run_id: str, found: list[Finding],
           written: bool = False) -> None:
    from ztsa.sandbox.gitguard import _flat

    quarantine: list[int] = []  # its descriptor, made on first use
    kept = was.kept if isinstance(was, Snapshot) else {}

    def place() -> int:
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
        return quarantine[0]

    def aside(fd: int, name: str, rel: str, reason: str) -> None:
        target = _flat(rel)
        try:
            if "/" not in rel and rel in kept:
                _copy_back(fd, name, place(), target, kept[rel])
                found.append(Finding(os.path.join(top, rel), reason,
                                     os.path.join(top, QUARANTINE, run_id, target),
                                     restored=True))
                return
            os.rename(name, target, src_dir_fd=fd, dst_dir_fd=place())
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
        elif written and was.get(rel) != _identity(st):
            aside(fd, name, rel, WRITTEN)

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


def _copy_back(fd: int, name: str, qdir: int, target: str, old: bytes) -> None:
    """A kept file (the person's history, maybe their link to it) that the run changed:
    its bytes now copied into the quarantine as TARGET, then OLD written in its place,
    through the same descriptor (its inode, mode and links stay the person's)."""
    f = os.open(name, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
    try:
        if not stat.S_ISREG(os.fstat(f).st_mode):
            raise OSError(0, "not a regular file")
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                      | os.O_CLOEXEC, 0o600, dir_fd=qdir)
        try:
            while chunk := os.read(f, 1 << 20):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(out, view):]
        finally:
            os.close(out)
        os.ftruncate(f, 0)
        view = memoryview(old)
        offset = 0
        while offset < len(old):
            offset += os.pwrite(f, view[offset:], offset)
    finally:
        os.close(f)
