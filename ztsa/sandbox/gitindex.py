"""What the tree leaves in a repository's index that hides a change from the person's
review (docs/git-control.md, "What hides a change from git status").

The index is the tree's to write (`git add` writes it), and two bits of an entry make
`git status` and `git diff` skip the file: assume-unchanged (CE_VALID: git does not
look at the file at all) and skip-worktree. A tree that sets one on `app.py` and then
edits it leaves a clean `git status` over code that runs. After the run, each bit set
on an entry that the snapshot before the run did not have is cleared through git
itself (`git update-index --no-assume-unchanged` / `--no-skip-worktree`), run so that
nothing runs with it: no hooks (`core.hooksPath=/dev/null`), no fsmonitor, no
system or global config. A skip-worktree bit is cleared only where the file exists in
the working tree: `git sparse-checkout` sets it on the files it removes, which hides
nothing (a deletion runs nothing), and the person's own sparse checkout is left alone.

An entry's cached stat data (ctime, mtime, inode, size...) hides a change as well: git
trusts stat data that matches the file and does not read it, so a tree that edits
`app.py` and writes the file's stat data into its entry (the blob still the committed
one) leaves `git status` clean. Each entry whose stat data (or object) the run changed,
or that the run added, gets its stat data reset (`git update-index --index-info` with
the same mode and object: zeroed stat data), so git compares the file's content at its
next look. An entry git itself refreshed during the run is reset too: it costs git one
read of that file.

Cheap when nothing changed: before the run each index's identity (inode, size, mtime,
ctime) and bytes are kept (read only); after it an index still the same is not read,
and git (`ls-files -s --debug`, on the kept bytes and on the index now) runs only for
one that changed. The tree can set an mtime back, never a ctime."""

from __future__ import annotations

import os
import stat

from ztsa import gitlayout
from ztsa.records import NamedTuple

MAX_KEPT = 64 << 20  # an index larger than this is read by git before the run instead
ASSUME, SKIP = "assume-unchanged", "skip-worktree"
STAT = "stat-data"  # the entry's cached stat data changed: reset, git reads the file again
# ce_flags as `git ls-files --debug` prints them (git's cache.h)
CE_VALID, CE_INTENT_TO_ADD, CE_SKIP_WORKTREE = 0x8000, 1 << 29, 1 << 30
FILE_MODES = frozenset((b"100644", b"100755", b"120000"))  # not a gitlink: git reads it

Ident = tuple[int, int, int, int]  # (inode, size, mtime_ns, ctime_ns)


class Entry(NamedTuple):
    bits: frozenset[str]  # ASSUME, SKIP
    key: bytes  # a digest of its mode, object, stage and stat data: changed or not
    head: bytes = b""  # "MODE OBJECT STAGE", as --index-info takes it back
    intent: bool = False  # `git add -N`: no content staged


Entries = dict[str, Entry]  # entry (from the working tree's top) -> what git says of it


class Index(NamedTuple):
    ident: Ident
    data: bytes | None  # its bytes, at most MAX_KEPT
    entries: Entries | None = None  # a larger one's entries, read by git before the run


Before = dict[str, Index]  # git directory -> its index as it was


class Cleared(NamedTuple):
    path: str  # workspace-relative: the file the bit (or stat data) hid
    flag: str  # ASSUME, SKIP or STAT
    repository: str  # workspace-relative: its working tree ("." for the top)
    error: str = ""  # why it could not be cleared: the run is unclean


def _worktrees(workspace: str, layout: gitlayout.Layout) -> list[tuple[str, str]]:
    """(git directory, working tree) of every repository of the workspace that has one
    in the workspace (a bare repository has no working tree to hide a file in)."""
    out = []
    for g in layout.gitdirs:
        top = gitlayout.worktree_of(g)
        if g.startswith(workspace + "/") and top != g and (
                top == workspace or top.startswith(workspace + "/")):
            out.append((g, top))
    return out


def _open(path: str) -> tuple[Ident, int] | None:
    """(the identity of the regular file PATH, a descriptor of it): a symlink followed,
    as git follows it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        st = os.fstat(fd)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns), fd


def _ident(path: str) -> Ident | None:
    try:
        st = os.stat(path)  # as git reads it
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns) if stat.S_ISREG(
        st.st_mode) else None


def before(workspace: str, layout: gitlayout.Layout) -> Before:
    """Every index of the workspace's repositories as it is: its identity and bytes."""
    out: Before = {}
    for g, top in _worktrees(workspace, layout):
        got = _open(os.path.join(g, "index"))
        if got is None:
            continue
        ident, fd = got
        try:
            if ident[1] <= MAX_KEPT:
                with os.fdopen(os.dup(fd), "rb") as f:
                    out[g] = Index(ident, f.read(MAX_KEPT + 1))
                continue
        except OSError:
            continue
        finally:
            os.close(fd)
        got_entries = _entries(g, top)  # kept small: no head, never reset from here
        out[g] = Index(ident, None, None if got_entries is None else {
            n: Entry(e.bits, e.key) for n, e in got_entries.items()})
    return out


def _git(gitdir: str, top: str, args: list[str], index: str | None = None,
         stdin: bytes = b"") -> bytes | None:
    """git on one repository, run so that nothing runs with it: no system or global
    config, no hooks, no fsmonitor, no pager (its stdout, None when it failed)."""
    import shutil
    import subprocess  # only for an index that changed: off every run's start-up
    import tempfile

    git = shutil.which("git")
    if git is None:
        return None
    from ztsa.sandbox.gitguard import safe_git_env

    with tempfile.TemporaryDirectory(prefix="ztsa-git-") as empty:
        env = {**safe_git_env(empty), "GIT_OPTIONAL_LOCKS": "0"}
        if index is not None:
            env["GIT_INDEX_FILE"] = index
        try:
            proc = subprocess.run(
                [git, "--no-pager", f"--git-dir={gitdir}", f"--work-tree={top}",
                 "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
                 "-c", "safe.directory=*", *args],
                input=stdin, capture_output=True, cwd=top, env=env, timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
    return proc.stdout if proc.returncode == 0 else None


def _entries(gitdir: str, top: str, data: bytes | None = None) -> Entries | None:
    """Every entry of the index now, or of the bytes DATA, by `git ls-files -s --debug
    -z`: its bits (CE_VALID is what `ls-files -v` shows as a lower-case tag, skip-worktree
    as `S`), and a digest of its mode, object, stage and cached stat data."""
    import tempfile

    args = ["ls-files", "-s", "--debug", "-z"]
    if data is None:
        out = _git(gitdir, top, args)
    else:
        with tempfile.TemporaryDirectory(prefix="ztsa-index-") as d:
            copy = os.path.join(d, "index")
            with open(copy, "wb") as f:
                f.write(data)
            out = _git(gitdir, top, args, index=copy)
    return None if out is None else _parse(out)


def _parse(out: bytes) -> Entries | None:
    """`MODE OBJECT STAGE<TAB>NAME<NUL>` and five lines of stat data per entry (ctime,
    mtime, dev and ino, uid and gid, size and flags), the name as it is (-z); None when
    it is not that shape."""
    import hashlib

    entries: Entries = {}
    pos = 0
    while pos < len(out):
        tab = out.find(b"\t", pos)
        nul = out.find(b"\0", tab + 1)
        if tab < 0 or nul < 0:
            return None
        head, name = out[pos:tab], out[tab + 1:nul]
        pos = nul + 1
        lines = []
        for _ in range(5):
            nl = out.find(b"\n", pos)
            if nl < 0:
                return None
            lines.append(out[pos:nl])
            pos = nl + 1
        flags_at = lines[4].rfind(b"\tflags: ")
        if flags_at < 0 or len(head.split(b" ")) != 3:
            return None
        try:
            flags = int(lines[4][flags_at + 8:], 16)
        except ValueError:
            return None
        bits = frozenset(b for b, on in ((ASSUME, flags & CE_VALID),
                                         (SKIP, flags & CE_SKIP_WORKTREE)) if on)
        stat_data = b"\n".join((*lines[:4], lines[4][:flags_at]))
        key = hashlib.blake2b(head + b"\n" + stat_data, digest_size=16).digest()
        entries[os.fsdecode(name)] = Entry(bits, key, head,
                                           bool(flags & CE_INTENT_TO_ADD))
    return entries


def audit(workspace: str, was: Before, layout: gitlayout.Layout | None) -> list[Cleared]:
    """Clear each bit the run set (a skip-worktree bit only on a file that exists), and
    reset the stat data of each entry the run changed. Call only when every process of
    the tree has ended. Never raises: a failure is a Cleared with its error."""
    out: list[Cleared] = []
    try:
        for g, top in _worktrees(workspace, layout or gitlayout.find(workspace)):
            out += _audit_one(workspace, g, top, was.get(g))
    except Exception as exc:
        out.append(Cleared(".", "", ".", f"the audit of the indexes failed: "
                           f"{type(exc).__name__}: {exc}; run `git ls-files -v` in the "
                           "workspace's repositories before trusting `git status`"))
    return out


def _audit_one(workspace: str, gitdir: str, top: str, old: Index | None) -> list[Cleared]:
    ident = _ident(os.path.join(gitdir, "index"))
    if ident is None or (old is not None and old.ident == ident):
        return []
    repo = os.path.relpath(top, workspace)
    index_rel = os.path.relpath(os.path.join(gitdir, "index"), workspace)
    now = _entries(gitdir, top)
    if now is None:
        return [Cleared(index_rel, "", repo, "git could not read the index the run left")]
    if not now:
        return []
    then: Entries | None = {} if old is None else old.entries if old.data is None else (
        _entries(gitdir, top, old.data))
    if then is None:
        return [Cleared(index_rel, "", repo, "git could not read the index as it was "
                        "before the run")]
    todo: dict[str, list[str]] = {ASSUME: [], SKIP: []}
    stale: list[str] = []  # entries whose stat data the run changed
    for name, e in sorted(now.items()):
        was = then.get(name)
        kept = e.bits
        for bit in e.bits - (was.bits if was else frozenset()):
            if bit == SKIP and not os.path.lexists(os.path.join(top, name)):
                continue  # a sparse checkout's: nothing there to hide
            todo[bit].append(name)
            kept = kept - {bit}
        # stat data that vouches for the file: the run's own (new, or changed with or
        # without its object) is not trusted. Not an entry with the person's bits or a
        # sparse checkout's (git does not read those files), not an intent-to-add or
        # conflicted one (`--index-info` would stage it), not a gitlink.
        if (not kept and not e.intent and (was is None or was.key != e.key)
                and e.head.endswith(b" 0") and e.head.split(b" ")[0] in FILE_MODES):
            stale.append(name)
    out: list[Cleared] = []
    for bit, names in todo.items():
        if not names:
            continue
        done = _git(gitdir, top, ["update-index", "-z", f"--no-{bit}", "--stdin"],
                    stdin=b"".join(os.fsencode(n) + b"\0" for n in names))
        error = "" if done is not None else "git update-index failed (a lock left?)"
        out += [Cleared(os.path.relpath(os.path.join(top, n), workspace), bit, repo, error)
                for n in names]
    if stale:
        # the same mode and object, stage 0: git writes the entry with zeroed stat data
        # and compares the file's content at its next look
        mode_obj = {n: now[n].head.rsplit(b" ", 1)[0] for n in stale}
        done = _git(gitdir, top, ["update-index", "-z", "--index-info"],
                    stdin=b"".join(mode_obj[n] + b"\t" + os.fsencode(n) + b"\0"
                                   for n in stale))
        error = "" if done is not None else (
            "git update-index --index-info failed (a lock left?): git status may trust "
            "stat data the run wrote")
        out += [Cleared(os.path.relpath(os.path.join(top, n), workspace), STAT, repo, error)
                for n in stale]
    return out
