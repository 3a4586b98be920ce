"""Large lockfiles parsed once: across runs (a content-addressed cache) and across cores
(forked workers).

`ztsa exec` runs the gate before every agent command, so the same 600 kB pnpm lock is
read again and again; parsing it is most of the gate's time. Two things make that cheap:

- **A cache of parse results**, keyed by a SHA-256 of everything the result depends on:
  the ztsa version and the stamp of its parser sources, the Python version, the parser,
  the file's workspace-relative path and its exact text. Equal key, equal result: the
  cache never changes what a rule decides. It holds parse results (lock entries, or the
  parse error), never a decision, an approval or an allowlist entry. It lives in
  ``$ZTSA_CACHE_DIR``, else ``$XDG_CACHE_HOME/ztsa``, else ``~/.cache/ztsa``, a
  directory of the caller's own with mode 0700; a directory owned by someone else or
  writable by others is not used. Entries are read with an unpickler that builds only
  ztsa's own lock classes, so a tampered entry cannot run code; any unreadable entry is
  a miss. `--no-cache` turns it off for one run.
- **Workers**: lockfiles missing from the cache and larger than ``PARALLEL_BYTES`` are
  parsed by forked children (at most one per CPU) while the parent runs the other rules.
  A child that fails for any reason only means the parent parses that file itself.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import stat
import sys
from collections.abc import Callable, Mapping

from ztsa import __version__
from ztsa.host import ProbeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_ENTRY_BYTES = 256 * 1024 * 1024
MAX_ENTRIES = 256

_ALLOWED = {
    ("ztsa.manifests.cargo", "CargoToml"),
    ("ztsa.manifests.lock", "LockEntry"),
    ("ztsa.manifests.npm", "NpmLock"),
    ("ztsa.manifests.npm", "PackageJson"),
    ("ztsa.manifests.pnpm", "PnpmLock"),
    ("ztsa.manifests.python", "Pyproject"),
    ("ztsa.manifests.python", "Requirement"),
    ("ztsa.manifests.python", "RequirementsFile"),
    # TOML dates and times
    ("datetime", "date"), ("datetime", "datetime"), ("datetime", "time"),
    ("datetime", "timedelta"), ("datetime", "timezone"),
}


class _Unpickler(pickle.Unpickler):
    """Builds only ztsa's lock classes and plain data: no other global is reachable."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not a lock class")


def encode(value: Any) -> bytes:
    if isinstance(value, ProbeError):
        return pickle.dumps(("err", value.path, value.reason), protocol=5)
    return pickle.dumps(("ok", value), protocol=5)


def _decode(data: bytes) -> Any:
    """The parse result (or ProbeError instance) in ``data``; raises on anything else."""
    tag, *rest = _Unpickler(io.BytesIO(data)).load()
    if tag == "err" and len(rest) == 2 and all(isinstance(x, str) for x in rest):
        from ztsa.parsing import ParseError

        return ParseError(rest[0], rest[1])
    if tag == "ok" and len(rest) == 1:
        return rest[0]
    raise ValueError("not a parse result")


def _code_stamp() -> bytes:
    """Size and mtime of ztsa's parser sources: a changed parser never meets old entries."""
    here = os.path.dirname(os.path.abspath(__file__))
    parts = []
    for d in (here, os.path.dirname(here)):
        for name in sorted(os.listdir(d)):
            if name.endswith(".py"):
                st = os.stat(os.path.join(d, name))
                parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
    return "\n".join(parts).encode()


def cache_dir(environ: Mapping[str, str] | None = None) -> str | None:
    """The cache directory, created 0700 if missing; None if unusable or unsafe."""
    env = os.environ if environ is None else environ
    d = env.get("ZTSA_CACHE_DIR")
    if not d:
        home = env.get("HOME")
        base = env.get("XDG_CACHE_HOME") or (os.path.join(home, ".cache") if home else None)
        if not base or not os.path.isabs(base):
            return None  # nowhere of the caller's own: no cache
        d = os.path.join(base, "ztsa")
    try:
        os.makedirs(d, mode=0o700, exist_ok=True)
        st = os.lstat(d)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
        return None
    return d


class ParseCache:
    """One run's view of the cache and of the workers it started.

    A large file's result is an entry of its own; the results of the small files of one
    workspace (a hundred Cargo.toml, package.json and requirements files) share one
    bundle entry, read once and rewritten, with only what this run used, when it changed.
    """

    def __init__(self, directory: str | None, scope: str = "") -> None:
        self.directory = directory
        self.scope = scope  # the workspace: names the bundle
        self._stamp: bytes | None = None
        self._pending: dict[str, tuple[int, int]] = {}  # key -> (pid, read end)
        self._bundle: dict[str, bytes] | None = None
        self._used: dict[str, bytes] = {}
        self._dirty = False

    def _hash(self, *parts: str, text: str = "") -> str:
        import hashlib  # only when a file is parsed: start-up cost matters

        if self._stamp is None:
            self._stamp = _code_stamp()
        h = hashlib.sha256()
        for part in (__version__, sys.version, *parts):
            h.update(part.encode("utf-8", "surrogatepass") + b"\0")
        h.update(self._stamp + b"\0")
        h.update(text.encode("utf-8", "surrogatepass"))
        return h.hexdigest()

    def key(self, parser: Callable[[str, str], Any], rel: str, text: str) -> str:
        return self._hash(parser.__module__, parser.__qualname__, rel, text=text)

    # -- the disk cache ------------------------------------------------------------------
    def _read(self, name: str) -> bytes | None:
        assert self.directory is not None
        try:
            fd = os.open(os.path.join(self.directory, name), os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if (not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid()
                    or st.st_size > MAX_ENTRY_BYTES):
                return None
            with os.fdopen(fd, "rb", closefd=False) as f:
                return f.read()
        except OSError:
            return None
        finally:
            os.close(fd)

    def _load_bundle(self) -> dict[str, bytes]:
        if self._bundle is None:
            self._bundle = {}
            data = self._read(self._hash("bundle", self.scope))
            try:
                value = _Unpickler(io.BytesIO(data)).load() if data else {}
            except Exception:  # a damaged bundle is empty, never a result
                value = {}
            if isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, bytes)
                                               for k, v in value.items()):
                self._bundle = value
        return self._bundle

    def get(self, key: str, small: bool = False) -> tuple[bool, Any]:
        """(True, result) for a stored parse of this key, else (False, None)."""
        if self.directory is None:
            return False, None
        data = self._load_bundle().get(key) if small else self._read(key)
        if data is None:
            return False, None
        try:
            value = _decode(data)
        except Exception:  # a damaged or foreign entry is a miss, never a result
            return False, None
        if small:
            self._used[key] = data
        return True, value

    def put(self, key: str, data: bytes, small: bool = False) -> None:
        if self.directory is None:
            return
        if small:
            self._used[key] = data
            self._dirty = True
            return
        self._write(key, data)

    def _write(self, name: str, data: bytes) -> None:
        assert self.directory is not None
        tmp = os.path.join(self.directory, f".{name}.{os.getpid()}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, os.path.join(self.directory, name))
            self._trim()
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)

    def _trim(self) -> None:
        assert self.directory is not None
        with os.scandir(self.directory) as it:
            entries = [e for e in it if len(e.name) == 64 and e.is_file(follow_symlinks=False)]
        if len(entries) <= MAX_ENTRIES:
            return
        entries.sort(key=lambda e: e.stat(follow_symlinks=False).st_mtime_ns)
        for e in entries[: len(entries) - MAX_ENTRIES]:
            with contextlib.suppress(OSError):
                os.unlink(e.path)

    # -- the workers ---------------------------------------------------------------------
    def start(self, key: str, parser: Callable[[str, str], Any], rel: str, text: str) -> None:
        """Parse in a forked child; `collect` takes the result."""
        r, w = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(r)
            os.close(w)
            return
        if pid == 0:  # the child: parse, store, send, leave without cleanup
            code = 1
            try:
                os.close(r)
                try:
                    value: Any = parser(text, rel)
                except ProbeError as exc:
                    value = exc
                data = encode(value)
                self.put(key, data)
                with os.fdopen(w, "wb") as out:
                    out.write(data)
                code = 0
            finally:
                os._exit(code)
        os.close(w)
        self._pending[key] = (pid, r)

    def collect(self, key: str) -> tuple[bool, Any]:
        """The result of a started worker; (False, None) if there is none or it failed."""
        started = self._pending.pop(key, None)
        if started is None:
            return False, None
        pid, r = started
        chunks = []
        try:
            with os.fdopen(r, "rb") as f:
                while chunk := f.read(1 << 20):
                    chunks.append(chunk)
        except OSError:
            chunks = []
        _, status = os.waitpid(pid, 0)
        if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
            return False, None
        try:
            return True, _decode(b"".join(chunks))
        except Exception:
            return False, None

    def close(self) -> None:
        """Store the bundle if this run changed it; stop workers nobody asked for."""
        if self.directory is not None and (
                self._dirty or (self._bundle is not None and len(self._bundle) != len(self._used))):
            self._write(self._hash("bundle", self.scope), pickle.dumps(self._used, protocol=5))
        for pid, r in self._pending.values():
            os.close(r)
            with contextlib.suppress(OSError):
                os.kill(pid, 9)
            os.waitpid(pid, 0)
        self._pending.clear()


def load_toml(cache: ParseCache | None, text: str, path: str) -> Any:
    """parsing.load_toml's document (ParseError as it raises), through CACHE when there
    is one: a hit imports no tomllib."""
    from ztsa.parsing import ParseError
    from ztsa.parsing import load_toml as parse

    if cache is None:
        return parse(text, path)
    key = cache.key(parse, path, text)
    hit, value = cache.get(key)
    if not hit:
        try:
            value = parse(text, path)
        except ParseError as exc:
            value = exc
        cache.put(key, encode(value))
    if isinstance(value, ParseError):
        raise value
    return value
