"""`ztsa quarantine list` and `ztsa quarantine restore`: what `ztsa exec` moved aside
into the workspace's `.ztsa-quarantine/RUN/` (ztsa.sandbox.gitguard, bytecode), shown,
and put back on the person's word.

The quarantine lies in the workspace, which a tree could write before a later run (or
while a run without namespaces went on): every name and every manifest in it is
hostile text. It is read through descriptors opened without following a symlink from
the workspace down; a manifest is parsed, checked for the shape ztsa writes, and shown
through ztsa.printable. A restore moves a file back only where its path is absent now
(a config ztsa gave its old text back only with force), never out of the workspace or
through a symlink, never with an execute bit, and records itself in the manifest
(rewritten whole, atomically, its time kept)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import time

from ztsa.printable import printable
from ztsa.records import NamedTuple
from ztsa.sandbox.gitguard import QUARANTINE, _flat

TYPE_CHECKING = False
if TYPE_CHECKING:
    _Shape = tuple[tuple[str, type | tuple[type, ...]], ...]

MANIFEST = "manifest.json"
MAX_MANIFEST = 16 << 20
SCHEMA = "ztsa.quarantine/v1"
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC  # listed
_WALK = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC  # passed through
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_EXEC = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH | stat.S_ISUID | stat.S_ISGID
_FIELDS: _Shape = (("path", str), ("reason", str), ("moved_to", (str, type(None))),
           ("replaced", str))
_OPTIONAL: _Shape = (("error", str), ("runs", str), ("restored", bool), ("restored_at", str))
REPLACED = {"restored": "its text from before the run",
            "safe keys": "only its keys git writes in ordinary work"}


class QuarantineError(Exception):
    """The quarantine, a run of it or its manifest cannot be used (said why)."""


class Entry(NamedTuple):
    path: str  # workspace-relative, as the manifest says
    reason: str
    moved_to: str | None
    replaced: str  # "", "restored", "safe keys"
    error: str
    runs: str
    restored: bool
    restored_at: str  # when `ztsa quarantine restore` moved it back (UTC), or ""
    state: str  # "present", "missing", "restored", "not kept", or what is wrong


class Run(NamedTuple):
    run: str  # the directory's name
    mtime: float | None  # the manifest's (else the directory's); None: unknown
    problem: str  # why its manifest cannot be read ("" when it can)
    entries: list[Entry]


class Listing(NamedTuple):
    workspace: str
    error: str  # why the quarantine itself cannot be read ("" when it can)
    runs: list[Run]  # newest first


class Outcome(NamedTuple):
    path: str
    ok: bool
    message: str  # raw: shown through printable


# -- reading ---------------------------------------------------------------------------------
def _kind(mode: int) -> str:
    return ("a symbolic link" if stat.S_ISLNK(mode) else "a directory" if stat.S_ISDIR(mode)
            else "a regular file" if stat.S_ISREG(mode) else "a special file")


def _open_root(workspace: str) -> int:
    try:
        return os.open(workspace, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise QuarantineError(f"cannot open the workspace {workspace}: "
                              f"{exc.strerror or exc}") from None


def _open_dir(parent: int, name: str, what: str) -> int | None:
    """A directory below parent, opened for listing without following a symlink; None
    when it is absent; QuarantineError when it is anything else."""
    try:
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise QuarantineError(f"{what} cannot be read: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise QuarantineError(f"{what} is {_kind(st.st_mode)}, not a directory: not "
                              "followed")
    try:
        return os.open(name, _DIR, dir_fd=parent)
    except OSError as exc:
        raise QuarantineError(f"{what} cannot be opened: {exc.strerror or exc}") from None


def _check(items: object) -> str:
    """What is wrong with a manifest's shape ("" for nothing)."""
    if not isinstance(items, list):
        return f"manifest.json is malformed: a JSON {type(items).__name__}, not a list"
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            return f"manifest.json is malformed: entry {i} is not an object"
        for key, kind in _FIELDS:
            if key not in item:
                return f"manifest.json is malformed: entry {i} has no {key}"
            if not isinstance(item[key], kind):
                return f"manifest.json is malformed: entry {i}'s {key} has the wrong type"
        for key, kind in _OPTIONAL:
            if key in item and not isinstance(item[key], kind):
                return f"manifest.json is malformed: entry {i}'s {key} has the wrong type"
    return ""


def _read_manifest(run_fd: int) -> tuple[list[dict[str, object]] | None, os.stat_result
                                         | None, str]:
    """(its entries, its stat, "") or (None, its stat or None, why it cannot be used)."""
    try:
        fd = os.open(MANIFEST, _FILE, dir_fd=run_fd)
    except FileNotFoundError:
        return None, None, "no manifest.json"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None, None, "manifest.json is a symbolic link: not followed"
        return None, None, f"manifest.json cannot be read: {exc.strerror or exc}"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None, st, f"manifest.json is {_kind(st.st_mode)}"
        if st.st_size > MAX_MANIFEST:
            return None, st, f"manifest.json is too large ({st.st_size} bytes)"
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(MAX_MANIFEST + 1)
    except OSError as exc:
        return None, None, f"manifest.json cannot be read: {exc.strerror or exc}"
    finally:
        os.close(fd)
    try:
        items = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        return None, st, "manifest.json is malformed: not UTF-8"
    except ValueError as exc:
        return None, st, f"manifest.json is malformed: not JSON ({exc})"
    problem = _check(items)
    return (None, st, problem) if problem else (items, st, "")


def _quarantined(run: str, item: dict[str, object]) -> str | None:
    """The name in the run's directory that item's file was moved to, when its moved_to
    is the one ztsa writes for its path; None otherwise."""
    path = item["path"]
    assert isinstance(path, str)
    name = _flat(path)
    ok = item["moved_to"] == f"{QUARANTINE}/{run}/{name}" and name not in (
        "", ".", "..", MANIFEST)
    return name if ok else None


def _entry(run_fd: int, run: str, item: dict[str, object]) -> Entry:
    def text(key: str) -> str:
        value = item.get(key, "")
        return value if isinstance(value, str) else ""

    moved_to = item["moved_to"]
    restored = item.get("restored") is True
    if restored:
        state = "restored"
    elif moved_to is None:
        state = "not kept"
    else:
        name = _quarantined(run, item)
        if name is None:
            state = "moved_to names no file of this run's quarantine"
        else:
            try:
                st = os.stat(name, dir_fd=run_fd, follow_symlinks=False)
                state = "present" if stat.S_ISREG(st.st_mode) else \
                    f"present ({_kind(st.st_mode)})"
            except FileNotFoundError:
                state = "missing"
            except OSError as exc:
                state = f"cannot be checked: {exc.strerror or exc}"
    return Entry(text("path"), text("reason"), moved_to if isinstance(moved_to, str) else
                 None, text("replaced"), text("error"), text("runs"), restored,
                 text("restored_at"), state)


def _run(q_fd: int, name: str) -> Run:
    try:
        st = os.stat(name, dir_fd=q_fd, follow_symlinks=False)
    except OSError as exc:
        return Run(name, None, f"cannot be read: {exc.strerror or exc}", [])
    if not stat.S_ISDIR(st.st_mode):
        return Run(name, st.st_mtime, f"{_kind(st.st_mode)}, not a run's directory", [])
    try:
        run_fd = os.open(name, _DIR, dir_fd=q_fd)
    except OSError as exc:
        return Run(name, st.st_mtime, f"cannot be opened: {exc.strerror or exc}", [])
    try:
        items, mst, problem = _read_manifest(run_fd)
        mtime = mst.st_mtime if mst is not None else st.st_mtime
        if items is None:
            return Run(name, mtime, problem, [])
        return Run(name, mtime, "", [_entry(run_fd, name, item) for item in items])
    finally:
        os.close(run_fd)


def listing(workspace: str) -> Listing:
    """Every run of the workspace's quarantine, newest first. Never raises for what is
    in the quarantine: a problem is the listing's error or a run's."""
    workspace = os.path.abspath(workspace)
    try:
        root = _open_root(workspace)
        try:
            q_fd = _open_dir(root, QUARANTINE, QUARANTINE)
        finally:
            os.close(root)
    except QuarantineError as exc:
        return Listing(workspace, str(exc), [])
    if q_fd is None:
        return Listing(workspace, "", [])
    try:
        names = os.listdir(q_fd)
        runs = [_run(q_fd, name) for name in names]
    except OSError as exc:
        return Listing(workspace, f"{QUARANTINE} cannot be listed: {exc.strerror or exc}",
                       [])
    finally:
        os.close(q_fd)
    runs.sort(key=lambda r: r.run)
    runs.sort(key=lambda r: -(r.mtime or 0.0))
    return Listing(workspace, "", runs)


# -- showing ---------------------------------------------------------------------------------
def _when(mtime: float | None) -> str:
    if mtime is None:
        return "time unknown"
    return time.strftime("%Y-%m-%d %H:%M:%S %z", time.localtime(mtime))


def _replaced(value: str) -> str:
    return REPLACED.get(value) or printable(value)


def render_text(found: Listing) -> str:
    where = printable(os.path.join(found.workspace, QUARANTINE))
    if found.error:
        return f"{where}: {printable(found.error)}\n"
    if not found.runs:
        return f"{where}: nothing; ztsa exec has moved nothing aside here\n"
    lines = [f"{where}: {len(found.runs)} run(s), newest first"]
    for run in found.runs:
        lines.append("")
        head = f"run {printable(run.run)}  {_when(run.mtime)}"
        if run.problem:
            lines.append(f"{head}  {printable(run.problem)}")
            continue
        lines.append(f"{head}  ({len(run.entries)} entr{'y' if len(run.entries) == 1 else 'ies'})")
        for e in run.entries:
            lines.append(f"  {printable(e.path)}  [{printable(e.state)}]")
            lines.append(f"    why: {printable(e.reason)}")
            if e.runs:
                lines.append(f"    runs: {printable(e.runs)}")
            if e.replaced:
                lines.append(f"    in its place: {_replaced(e.replaced)}")
            if e.restored:
                lines.append(f"    restored: {printable(e.restored_at or 'yes')}")
            elif e.moved_to is not None:
                lines.append(f"    kept as: {printable(e.moved_to)}")
            if e.error:
                lines.append(f"    error: {printable(e.error)}")
    return "\n".join(lines) + "\n"


def render_json(found: Listing) -> str:
    def iso(mtime: float | None) -> str | None:
        return None if mtime is None else time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                        time.gmtime(mtime))

    doc = {"schema": SCHEMA, "workspace": found.workspace, "quarantine": QUARANTINE,
           "error": found.error or None,
           "runs": [{"run": r.run, "when": iso(r.mtime), "mtime": r.mtime,
                     "problem": r.problem or None,
                     "entries": [e._asdict() for e in r.entries]} for r in found.runs]}
    return json.dumps(doc, indent=2) + "\n"


# -- restoring -------------------------------------------------------------------------------
class _Refused(Exception):
    """One entry not restored (said why)."""


def _bad_path(path: str) -> str:
    if not path or "\0" in path:
        return "is not a path"
    if path.startswith("/"):
        return "leaves the workspace (an absolute path)"
    parts = path.split("/")
    if ".." in parts:
        return "leaves the workspace (`..`)"
    if any(p in ("", ".") for p in parts):
        return "is not a plain relative path"
    if parts[0] == QUARANTINE:
        return "lies in the quarantine itself"
    return ""


def _parent(root: int, path: str) -> tuple[int, str]:
    """(a descriptor of path's directory, its last name), walked from the workspace
    without following a symlink; _Refused when the way there is not plain directories."""
    parts = path.split("/")
    fd = os.dup(root)
    try:
        for i, part in enumerate(parts[:-1]):
            so_far = "/".join(parts[:i + 1])
            try:
                st = os.stat(part, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                raise _Refused(f"its directory {so_far} no longer exists") from None
            if stat.S_ISLNK(st.st_mode):
                raise _Refused(f"the way there passes the symbolic link {so_far}: not "
                               "followed")
            if not stat.S_ISDIR(st.st_mode):
                raise _Refused(f"{so_far} is {_kind(st.st_mode)}, not a directory")
            try:
                nxt = os.open(part, _WALK, dir_fd=fd)
            except OSError as exc:
                raise _Refused(f"{so_far} cannot be opened: {exc.strerror or exc}") from None
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd, parts[-1]


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _gone(src_dir: int, name: str, st: os.stat_result) -> str:
    """The quarantine's name of the file st removed, when it is still that file; a note
    when it stays."""
    try:
        if _same(os.stat(name, dir_fd=src_dir, follow_symlinks=False), st):
            os.unlink(name, dir_fd=src_dir)
    except FileNotFoundError:
        pass
    except OSError as exc:
        return f"; its copy in the quarantine stays ({exc.strerror or exc})"
    return ""


def _link_in(src: int, st: os.stat_result, src_dir: int, name: str, dst_dir: int,
             leaf: str) -> str:
    """The file open as src (stat st, named name in src_dir) moved to leaf, which must
    not exist: linked there through /proc/self/fd (the very file checked; a link never
    replaces), then the quarantine's name removed. Where no hard link can be made, a
    rename after checking that leaf is still absent, and that it moved that file."""
    try:
        os.link(f"/proc/self/fd/{src}", leaf, dst_dir_fd=dst_dir, follow_symlinks=True)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EACCES, errno.ENOENT, errno.EOPNOTSUPP,
                             errno.EMLINK, errno.ENOSYS):
            raise
        try:
            os.stat(leaf, dir_fd=dst_dir, follow_symlinks=False)
        except FileNotFoundError:
            os.rename(name, leaf, src_dir_fd=src_dir, dst_dir_fd=dst_dir)
            _check_moved(dst_dir, leaf, st)
            return ""
        raise FileExistsError(errno.EEXIST, "exists now") from None
    return _gone(src_dir, name, st)


def _check_moved(dst_dir: int, leaf: str, st: os.stat_result) -> None:
    """What a rename by name put at leaf is the file ztsa checked; OSError otherwise (a
    name of the quarantine swapped meanwhile)."""
    if not _same(os.stat(leaf, dir_fd=dst_dir, follow_symlinks=False), st):
        raise OSError(errno.ESTALE, "the quarantine's file changed while it was moved: "
                                    "look at what is there now")


def _restore(root: int, run_fd: int, run: str, item: dict[str, object], force: bool,
             workspace: str) -> str:
    """item's file back at its path; what was done, or _Refused."""
    path, replaced = item["path"], item["replaced"]
    assert isinstance(path, str) and isinstance(replaced, str)
    if item["moved_to"] is None:
        why = item.get("error") or "removed, or its text put back in place"
        raise _Refused(f"was not kept in the quarantine ({why}): nothing to restore")
    bad = _bad_path(path)
    if bad:
        raise _Refused(bad)
    name = _quarantined(run, item)
    if name is None:
        raise _Refused(f"its manifest entry's moved_to is not {QUARANTINE}/RUN/"
                       f"{_flat(path)}, where ztsa keeps it: not trusted")
    try:
        src = os.open(name, _FILE, dir_fd=run_fd)
    except FileNotFoundError:
        raise _Refused(f"{QUARANTINE}/{run}/{name} is no longer there") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _Refused(f"{QUARANTINE}/{run}/{name} is a symbolic link: restore it "
                           "by hand if you mean it") from None
        raise _Refused(f"{QUARANTINE}/{run}/{name} cannot be opened: "
                       f"{exc.strerror or exc}") from None
    try:
        st = os.fstat(src)
        if not stat.S_ISREG(st.st_mode):
            raise _Refused(f"{QUARANTINE}/{run}/{name} is {_kind(st.st_mode)}: only a "
                           "regular file is restored; move it by hand if you mean it")
        parent, leaf = _parent(root, path)
        try:
            try:
                there: os.stat_result | None = os.stat(leaf, dir_fd=parent,
                                                       follow_symlinks=False)
            except FileNotFoundError:
                there = None
            if there is not None:
                if not replaced:
                    raise _Refused("exists now: ztsa never overwrites it; move it away "
                                   "first if you want the tree's version back")
                if not force:
                    raise _Refused(
                        f"holds {REPLACED.get(replaced, replaced)}, which ztsa put there "
                        "after the run: that file is yours now; --force replaces it with "
                        "the tree's version")
                if not stat.S_ISREG(there.st_mode):
                    raise _Refused(f"is {_kind(there.st_mode)} now: not replaced")
            mode = stat.S_IMODE(st.st_mode)
            cleared = ""
            if mode & _EXEC:  # never back with an execute bit (gitguard took them away)
                try:
                    os.fchmod(src, mode & ~_EXEC)
                except OSError as exc:
                    raise _Refused(f"{QUARANTINE}/{run}/{name} has execute bits ztsa "
                                   f"cannot clear ({exc.strerror or exc})") from None
                mode &= ~_EXEC
                cleared = "its execute bits cleared, "
            try:
                if there is not None:
                    os.rename(name, leaf, src_dir_fd=run_fd, dst_dir_fd=parent)
                    _check_moved(parent, leaf, st)
                    note = f"; it replaced {REPLACED.get(replaced, replaced)}"
                else:
                    note = _link_in(src, st, run_fd, name, parent, leaf)
            except FileExistsError:
                raise _Refused("exists now: ztsa never overwrites it") from None
            except OSError as exc:
                raise _Refused(f"could not be moved back: {exc.strerror or exc}") from None
        finally:
            os.close(parent)
    finally:
        os.close(src)
    import shlex

    full = shlex.quote(os.path.join(workspace, path))
    return (f"restored from run {run} ({cleared}mode {mode:04o}: no execute bit; "
            f"`chmod +x -- {full}` if you mean it to run){note}")


def _write_manifest(run_fd: int, items: list[dict[str, object]]) -> None:
    """The manifest rewritten whole: a new file renamed over it, with its times kept."""
    try:
        was: os.stat_result | None = os.stat(MANIFEST, dir_fd=run_fd, follow_symlinks=False)
    except OSError:
        was = None
    tmp = f".{MANIFEST}.{os.getpid()}.{os.urandom(4).hex()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600, dir_fd=run_fd)
    try:
        with os.fdopen(os.dup(fd), "w", encoding="utf-8") as f:
            json.dump(items, f, indent=1)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        if was is not None:
            os.utime(fd, ns=(was.st_atime_ns, was.st_mtime_ns))
        os.rename(tmp, MANIFEST, src_dir_fd=run_fd, dst_dir_fd=run_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=run_fd)
        raise
    finally:
        os.close(fd)


def restore(workspace: str, run: str, paths: list[str] | None, force: bool = False
            ) -> list[Outcome]:
    """The entries of run's manifest for paths (None: every entry still in the
    quarantine) moved back, each an Outcome. QuarantineError when the run or its
    manifest cannot be used; then nothing is moved."""
    workspace = os.path.abspath(workspace)
    if not run or "/" in run or run in (".", "..") or "\0" in run:
        raise QuarantineError(f"{run!r} is not a run of the quarantine")
    root = _open_root(workspace)
    try:
        q_fd = _open_dir(root, QUARANTINE, QUARANTINE)
        if q_fd is None:
            raise QuarantineError(f"{workspace} has no {QUARANTINE}: nothing to restore")
        try:
            run_fd = _open_dir(q_fd, run, f"run {run}")
        finally:
            os.close(q_fd)
        if run_fd is None:
            raise QuarantineError(f"{QUARANTINE} has no run {run} (`ztsa quarantine "
                                  "list` shows them)")
        try:
            return _restore_run(root, run_fd, run, paths, force, workspace)
        finally:
            os.close(run_fd)
    finally:
        os.close(root)


def _restore_run(root: int, run_fd: int, run: str, paths: list[str] | None, force: bool,
                 workspace: str) -> list[Outcome]:
    items, _, problem = _read_manifest(run_fd)
    if items is None:
        raise QuarantineError(f"run {run}: {problem}; nothing restored")
    if paths is None:
        chosen = [i for i, item in enumerate(items)
                  if item["moved_to"] is not None and item.get("restored") is not True]
        wanted = [str(items[i]["path"]) for i in chosen]
    else:
        wanted = [os.path.normpath(p) if p else p for p in paths]
        chosen = []
        for p in wanted:
            found = [i for i, item in enumerate(items) if item["path"] == p]
            kept = [i for i in found if items[i]["moved_to"] is not None]
            chosen.append(kept[-1] if kept else found[-1] if found else -1)
    out: list[Outcome] = []
    changed = False
    for path, i in zip(wanted, chosen, strict=True):
        if i < 0:
            out.append(Outcome(path, False, f"run {run}'s manifest has no entry for it "
                                            "(`ztsa quarantine list` shows them)"))
            continue
        item = items[i]
        if item.get("restored") is True:
            out.append(Outcome(path, True, f"already restored from run {run}"))
            continue
        try:
            message = _restore(root, run_fd, run, item, force, workspace)
        except _Refused as exc:
            out.append(Outcome(path, False, f"not restored: {exc}"))
            continue
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        for other in items:  # the same file moved aside twice in the run: one copy
            if other["path"] == item["path"] and other["moved_to"] == item["moved_to"]:
                other["restored"], other["restored_at"] = True, stamp
        changed = True
        out.append(Outcome(path, True, message))
    if changed:
        try:
            _write_manifest(run_fd, items)
        except OSError as exc:
            out.append(Outcome(f"{QUARANTINE}/{run}/{MANIFEST}", False,
                               "could not record the restore: "
                               f"{exc.strerror or exc}"))
    return out


def render_outcomes(outcomes: list[Outcome]) -> tuple[str, str]:
    """(what was restored, for stdout; what was not, for stderr)."""
    done = "".join(f"{printable(o.path)}: {printable(o.message)}\n"
                   for o in outcomes if o.ok)
    failed = "".join(f"ztsa: {printable(o.path)}: {printable(o.message)}\n"
                     for o in outcomes if not o.ok)
    return done, failed
