"""A collector for rules that look at many things: fail beats unknown beats pass."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ztsa.host import Host, ProbeError
from ztsa.model import Evidence, Outcome, Status

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar
    T = TypeVar("T")


class Findings:
    def __init__(self) -> None:
        self.found: list[Evidence] = []
        self.errors: list[str] = []
        self.error_paths: list[str | None] = []  # the file an error is about, if known
        self.advised: list[Evidence] = []  # reported, never gating on their own

    def advise(self, detail: str, path: str | None = None, line: int | None = None) -> None:
        """A finding that is only advice: alone it makes an advisory fail; beside other
        findings or an undecided result it is listed with them."""
        self.advised.append(Evidence(detail, path=path, line=line))

    def fail(self, detail: str, path: str | None = None, line: int | None = None) -> None:
        self.found.append(Evidence(detail, path=path, line=line))

    def error(self, what: ProbeError | str, path: str | None = None) -> None:
        """path: the file a message is about (a ProbeError names its own)."""
        self.errors.append(str(what))
        self.error_paths.append(what.path if isinstance(what, ProbeError) else path)

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

    def outcome(self, passed: str, failed: str | None = None,
                scope: Callable[[str], bool] | None = None,
                advised: str = "advice only") -> Outcome:
        """scope: is a path part of what the root installs, builds, tests or opens
        (ztsa.manifests.scope.in_play, the one judgement of test data for every rule)?
        What is found or unreadable only elsewhere (test data, examples, docs, templates
        that nothing of the root names) is advisory; beside findings in play, each item
        from elsewhere says so. advised: the message when only advice was found."""
        out = self._outcome(passed, failed, scope)
        if not self.advised:
            return out
        if out.status is Status.PASS:
            return Outcome.failed(advised, self.advised, advisory=True)
        return out._replace(evidence=out.evidence + tuple(self.advised))

    def _outcome(self, passed: str, failed: str | None,
                 scope: Callable[[str], bool] | None) -> Outcome:
        found = self.found
        if scope is not None:
            judged = [(e, e.path is None or scope(e.path)) for e in self.found]
            here = [e for e, ok in judged if ok]
            err_here = [e for e, p in zip(self.errors, self.error_paths, strict=True)
                        if p is None or scope(p)]
            if not here and not err_here and (self.found or self.errors):
                evidence = [Evidence(e.detail + ELSEWHERE_NOTE, path=e.path, line=e.line)
                            for e in self.found]
                evidence += [Evidence(f"could not read: {e}{ELSEWHERE_NOTE}")
                             for e in self.errors]
                if not self.found:  # only undecided there: unknown, and advisory
                    return Outcome(Status.UNKNOWN, "could not decide, only in test data, "
                                   "examples, docs or templates: " + self.errors[0],
                                   tuple(evidence), True)
                return Outcome.failed(
                    (failed or f"{len(self.found)} finding(s)") + ", only in test data, "
                    "examples, docs or templates", evidence, advisory=True)
            if not here and err_here:
                return Outcome.unknown("could not decide: " + err_here[0],
                                       [Evidence(e) for e in err_here])
            # beside findings in play, each one from elsewhere is marked as such
            found = [e if ok else Evidence(e.detail + ELSEWHERE_NOTE, path=e.path, line=e.line)
                     for e, ok in judged]
        if found:
            extra = [Evidence(f"also could not read: {e}") for e in self.errors]
            return Outcome.failed(failed or f"{len(found)} finding(s)", found + extra)
        if self.errors:
            return Outcome.unknown("could not decide: " + self.errors[0],
                                   [Evidence(e) for e in self.errors])
        return Outcome.passed(passed)


ELSEWHERE_NOTE = (" (test data, or a project nothing of the root installs, builds or "
                  "names: advisory)")
