"""One walk of the workspace, shared by every rule that looks for files by name.

Skips `node_modules`, `target`, `.git`, `.venv`, `venv`, `__pypackages__` and the
paths given with `--exclude` (glob patterns relative to the workspace), never
follows a symlinked directory (so no loop and no way out of the tree, also when a
directory is replaced by a symlink while the walk runs), and stops at MAX_FILES with a
ProbeError rather than silently auditing part of the tree. A directory it cannot list
is a ProbeError too, never a partial list.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable

from ztsa.context import Context
from ztsa.host import ProbeError

SKIP_DIRS = frozenset({"node_modules", "target", ".git", ".venv", "venv", "__pypackages__"})
MAX_FILES = 200_000
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def all_files(ctx: Context) -> list[str]:
    """Workspace-relative paths (with /) of every file and symlink outside SKIP_DIRS."""
    cached = ctx.cache.get("walk")
    if isinstance(cached, list):
        return cached
    excludes = [str(p).strip("/") for p in ctx.options.get("exclude") or ()]

    def excluded(rel: str) -> bool:
        return any(fnmatch.fnmatchcase(rel, pat) or rel.startswith(pat + "/")
                   for pat in excludes)

    out = files_below(ctx.workspace, "", SKIP_DIRS, MAX_FILES,
                      excluded if excludes else None)
    ctx.cache["walk"] = out
    return out


def files_below(root: str, prefix: str, skip: frozenset[str], limit: int,
                excluded: Callable[[str], bool] | None = None) -> list[str]:
    """prefix + the root-relative path (with /) of every file and symlink below root,
    which is followed if it is a symlink itself. Depth first, each directory's files
    (sorted) before its subdirectories (sorted); directories named in skip, symlinked
    ones and those `excluded(path)` holds for are left out. Each subdirectory is opened
    relative to its parent's descriptor with O_NOFOLLOW, so a directory swapped for a
    symlink during the walk is not followed (ELOOP is a listing error like any other).
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
