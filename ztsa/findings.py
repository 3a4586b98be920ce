"""A collector for rules that look at many things: fail beats unknown beats pass."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ztsa.host import Host, ProbeError
from ztsa.model import Evidence, Outcome

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar
    T = TypeVar("T")


class Findings:
    def __init__(self) -> None:
        self.found: list[Evidence] = []
        self.errors: list[str] = []

    def fail(self, detail: str, path: str | None = None, line: int | None = None) -> None:
        self.found.append(Evidence(detail, path=path, line=line))

    def error(self, what: ProbeError | str) -> None:
        self.errors.append(str(what))

    def attempt(self, fn: Callable[..., T], *args: Any) -> T | None:
        """Call fn; a ProbeError is recorded and None returned."""
        try:
            return fn(*args)
        except ProbeError as exc:
            self.error(exc)
            return None

    def access(self, host: Host, paths: Iterable[str], mode: int, verb: str) -> None:
        """Fail every existing path that os.access allows for mode ("is {verb}")."""
        for p in paths:
            if self.attempt(host.access, p, mode):
                self.fail(f"{p} is {verb}", path=p)

    def outcome(self, passed: str, failed: str | None = None) -> Outcome:
        if self.found:
            extra = [Evidence(f"also could not read: {e}") for e in self.errors]
            return Outcome.failed(failed or f"{len(self.found)} finding(s)", self.found + extra)
        if self.errors:
            return Outcome.unknown("could not decide: " + self.errors[0],
                                   [Evidence(e) for e in self.errors])
        return Outcome.passed(passed)
