"""One walk of the workspace, shared by every rule that looks for files by name.

Skips `node_modules`, `target`, `.git`, `.venv`, `venv`, `__pypackages__` and the
paths given with `--exclude` (glob patterns relative to the workspace), never
follows a symlinked directory (so no loop and no way out of the tree), and stops at
MAX_FILES with a ProbeError rather than silently auditing part of the tree.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable

from ztsa.context import Context
from ztsa.host import ProbeError

SKIP_DIRS = frozenset({"node_modules", "target", ".git", ".venv", "venv", "__pypackages__"})
MAX_FILES = 200_000


def all_files(ctx: Context) -> list[str]:
    """Workspace-relative paths (with /) of every file and symlink outside SKIP_DIRS."""
    cached = ctx.cache.get("walk")
    if isinstance(cached, list):
        return cached
    out: list[str] = []
    errors: list[str] = []
    root = ctx.workspace
    excludes = [str(p).strip("/") for p in ctx.options.get("exclude") or ()]

    def excluded(rel: str) -> bool:
        return any(fnmatch.fnmatchcase(rel, pat) or rel.startswith(pat + "/")
                   for pat in excludes)

    def onerror(exc: OSError) -> None:
        errors.append(f"{os.path.relpath(exc.filename or root, root)}: {exc.strerror}")

    for dirpath, dirnames, filenames in os.walk(root, onerror=onerror):
        rel = os.path.relpath(dirpath, root)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS
                             and not os.path.islink(os.path.join(dirpath, d))
                             and not (excludes and excluded(prefix + d)))
        out.extend(prefix + f for f in sorted(filenames)
                   if not (excludes and excluded(prefix + f)))
        if len(out) > MAX_FILES:
            raise ProbeError(root, f"more than {MAX_FILES} files: audit a smaller tree")
    if errors:
        raise ProbeError(root, "cannot list " + "; ".join(errors[:3]))
    ctx.cache["walk"] = out
    return out


def find_files(ctx: Context, match: Callable[[str], bool]) -> list[str]:
    """Files whose base name satisfies ``match``."""
    return [p for p in all_files(ctx) if match(p.rsplit("/", 1)[-1])]
