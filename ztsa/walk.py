"""One walk of the workspace, shared by every rule that looks for files by name.

Skips `node_modules`, `target`, `.git`, `.venv`, `venv`, `__pypackages__`,
`.ztsa-quarantine` and the
paths given with `--exclude` (glob patterns relative to the workspace), except a
directory in them that a root manifest names as a workspace member or a path dependency
(a crate at `target/x`, `file:venv/x`: what the root builds is audited wherever it
lies; ztsa.manifests.scope), never
follows a symlinked directory (so no loop and no way out of the tree, also when a
directory is replaced by a symlink while the walk runs), and stops at MAX_FILES with a
ProbeError rather than silently auditing part of the tree. A directory it cannot list
is a ProbeError too, never a partial list.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
from collections.abc import Callable

from ztsa.context import Context
from ztsa.host import ProbeError

# .ztsa-quarantine: what ztsa exec moved aside, inert (flattened names, no execute
# bits, a place no tool reads); AGT009 says it is there, `ztsa quarantine` shows it
SKIP_DIRS = frozenset({"node_modules", "target", ".git", ".venv", "venv", "__pypackages__",
                       ".ztsa-quarantine"})
MAX_FILES = 200_000
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def all_files(ctx: Context) -> list[str]:
    """Workspace-relative paths (with /) of every file and symlink outside SKIP_DIRS."""
    cached = ctx.cache.get("walk")
    if isinstance(cached, list):
        return cached
    if isinstance(cached, ProbeError):  # a walk that failed fails alike, not walked again
        raise cached
    excludes = [str(p).strip("/") for p in ctx.options.get("exclude") or ()]

    def excluded(rel: str) -> bool:
        return any(fnmatch.fnmatchcase(rel, pat) or rel.startswith(pat + "/")
                   for pat in excludes)

    skipped: list[str] = []
    try:
        out = files_below(ctx.workspace, "", SKIP_DIRS, MAX_FILES,
                          excluded if excludes else None, skipped)
    except ProbeError as exc:
        ctx.cache["walk"] = exc
        raise
    ctx.cache["walk"] = out  # what the root manifests name is read from this walk's tree
    try:
        for member in _named_in_skipped(ctx, {s.rsplit("/", 1)[-1] for s in skipped}):
            out += files_below(os.path.join(ctx.workspace, member), member + "/",
                               SKIP_DIRS, MAX_FILES - len(out),
                               excluded if excludes else None)
    except ProbeError as exc:  # never the partial list cached above
        ctx.cache["walk"] = exc
        raise
    for index in ("fileset", "byname"):  # if reading the manifests made them
        ctx.cache.pop(index, None)
    return out


ROOT_MANIFESTS = ("package.json", "Cargo.toml", "pnpm-workspace.yaml", "pyproject.toml")


def _named_in_skipped(ctx: Context, names: set[str]) -> list[str]:
    """The directories under a skipped one (its name in names) that the root manifests
    name as members or path dependencies (a glob up to its first wildcard, or to a
    skipped directory its wildcard matches), outermost first, none through a symbolic
    link. No manifest is parsed unless its text holds one of the names or a \\u escape."""
    names.discard(".git")
    if not names:
        return []
    for rel in ROOT_MANIFESTS:
        text = ctx.ws_text(rel, 1 << 24) if os.path.isfile(
            os.path.join(ctx.workspace, rel)) else None
        # only a \u or \U escape (JSON, TOML, YAML) could spell a name otherwise
        if text is not None and ("\\u" in text or "\\U" in text
                                 or any(n in text for n in names)):
            break
    else:
        return []
    from ztsa.manifests.scope import member_globs

    found: list[str] = []
    for glob in member_globs(ctx):
        parts = []
        for part in posixpath.normpath(glob).split("/"):
            if any(c in part for c in "*?["):
                parts += [n for n in sorted(names) if fnmatch.fnmatchcase(n, part)][:1]
                break
            parts.append(part)
        if ".." in parts or not any(p in names for p in parts):
            continue
        rel = "/".join(parts)
        if any(rel == f or rel.startswith(f + "/") for f in found):
            continue
        at = ctx.workspace
        for part in parts:
            at = os.path.join(at, part)
            if os.path.islink(at) or not os.path.isdir(at):
                break
        else:
            found = [f for f in found if not f.startswith(rel + "/")] + [rel]
    return sorted(found)


def files_below(root: str, prefix: str, skip: frozenset[str], limit: int,
                excluded: Callable[[str], bool] | None = None,
                skipped: list[str] | None = None) -> list[str]:
    """prefix + the root-relative path (with /) of every file and symlink below root,
    which is followed if it is a symlink itself. Depth first, each directory's files
    (sorted) before its subdirectories (sorted); directories named in skip, symlinked
    ones and those `excluded(path)` holds for are left out. Each subdirectory is opened
    relative to its parent's descriptor with O_NOFOLLOW, so a directory swapped for a
    symlink during the walk is not followed (ELOOP is a listing error like any other).
    The directories left out by name are added to skipped, if given.
    A directory that cannot be listed, or more than limit files, is a ProbeError: never
    a partial list."""
    out: list[str] = []
    errors: list[str] = []

    def listing(fd: int, prefix: str) -> None:
        files: list[str] = []
        dirs: list[str] = []
        try:
            with os.scandir(fd) as it:
                for entry in it:
                    try:
                        is_dir = entry.is_dir()  # follows a symlink, as a file's type
                    except OSError:
                        is_dir = False
                    if not is_dir:
                        files.append(entry.name)
                    elif not entry.is_symlink() and entry.name not in skip:
                        dirs.append(entry.name)
                    elif skipped is not None and not entry.is_symlink():
                        skipped.append(prefix + entry.name)
        except OSError as exc:
            errors.append(f"{prefix.rstrip('/') or '.'}: {exc.strerror}")
            return
        out.extend(prefix + f for f in sorted(files)
                   if not (excluded and excluded(prefix + f)))
        if len(out) > limit:
            raise ProbeError(root, f"more than {limit} files: leave generated or vendored "
                             "directories out with --exclude GLOB (e.g. --exclude "
                             "'build' --exclude 'vendor/*'), or audit a smaller tree")
        for d in sorted(dirs):
            rel = prefix + d
            if excluded and excluded(rel):
                continue
            try:
                sub = os.open(d, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                errors.append(f"{rel}: {exc.strerror}")
                continue
            try:
                listing(sub, rel + "/")
            finally:
                os.close(sub)

    try:
        top = os.open(root, _DIR_FLAGS & ~os.O_NOFOLLOW)
    except OSError as exc:
        raise ProbeError(root, f"cannot list {prefix.rstrip('/') or '.'}: "
                               f"{exc.strerror}") from None
    try:
        listing(top, prefix)
    finally:
        os.close(top)
    if errors:
        raise ProbeError(root, "cannot list " + "; ".join(errors[:3]))
    return out


def find_files(ctx: Context, match: Callable[[str], bool]) -> list[str]:
    """Files whose base name satisfies ``match``."""
    return [p for p in all_files(ctx) if match(p.rsplit("/", 1)[-1])]
