"""What a rule's check receives: the host view, the workspace and the run's options."""

from __future__ import annotations

import os
import stat

from ztsa.host import Host, ProbeError, decode
from ztsa.model import Profile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Context:
    __slots__ = ("cache", "host", "options", "profile", "workspace")

    def __init__(self, host: Host, workspace: str, profile: Profile = Profile.UNTRUSTED,
                 options: dict[str, Any] | None = None) -> None:
        self.host = host
        self.workspace = os.path.abspath(workspace)
        self.profile = profile
        self.options: dict[str, Any] = options if options is not None else {}
        # results shared between rules (e.g. isolation detection, found manifests)
        self.cache: dict[str, Any] = {}

    def in_workspace(self, path: str) -> bool:
        real = self._realpath(path)
        ws = self._realdir(self.workspace)
        return real == ws or real.startswith(ws + os.sep)

    def _realdir(self, d: str) -> str:
        """realpath of a directory, memoised: every file of a directory shares it."""
        memo: dict[str, str] = self.cache.setdefault("realdirs", {})
        if d not in memo:
            memo[d] = os.path.realpath(d)
        return memo[d]

    def _realpath(self, path: str) -> str:
        """os.path.realpath, resolving the directory part once per directory."""
        d, base = os.path.split(os.path.abspath(path))
        try:
            if base in ("", ".", "..") or stat.S_ISLNK(os.lstat(path).st_mode):
                return os.path.realpath(path)
        except OSError:
            return os.path.realpath(path)
        return os.path.join(self._realdir(d), base)

    # -- the workspace: real files, never followed out of the tree -----------------------
    def ws_path(self, rel: str) -> str:
        return os.path.join(self.workspace, rel)

    def ws_exists(self, rel: str) -> bool:
        return os.path.lexists(self.ws_path(rel))

    def ws_lstat(self, rel: str) -> os.stat_result | None:
        try:
            return os.lstat(self.ws_path(rel))
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ProbeError(rel, exc.strerror or type(exc).__name__) from exc

    def ws_access(self, rel: str, mode: int) -> bool | None:
        """``os.access`` on a workspace path; None if absent."""
        real = self.ws_path(rel)
        try:
            os.lstat(real)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ProbeError(rel, exc.strerror or type(exc).__name__) from exc
        return os.access(real, mode)

    def ws_bytes(self, rel: str, limit: int = 16 * 1024 * 1024) -> bytes | None:
        """A workspace file's bytes; None if absent; ProbeError if it leaves the tree."""
        real = self.ws_path(rel)
        if not os.path.lexists(real):
            return None
        if not self.in_workspace(real):
            raise ProbeError(rel, "symlink points outside the workspace (not followed)")
        return self.host.read_real(real, limit, shown=rel)

    def ws_head(self, rel: str, n: int) -> bytes | None:
        """The first n bytes of a workspace file (symlinks are not followed)."""
        return self.host.read_head(self.ws_path(rel), n, shown=rel)

    def ws_text(self, rel: str, limit: int = 16 * 1024 * 1024) -> str | None:
        data = self.ws_bytes(rel, limit)
        return None if data is None else decode(data, rel, "utf-8-sig")
