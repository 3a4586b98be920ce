"""The data that flows from rules to formatters: all frozen, no behaviour beyond helpers.

The records are typed NamedTuples rather than frozen dataclasses: both are immutable and
typed, but a NamedTuple class is much cheaper to create, and ztsa's start-up runs before
every agent command (figures in docs/performance.md)."""

from __future__ import annotations

import enum
from collections.abc import Iterable

from ztsa.records import NamedTuple


class Severity(str, enum.Enum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"


class Status(str, enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    UNKNOWN = "unknown"
    WAIVED = "waived"
    HANDLED = "handled"  # a finding the confinement of `ztsa exec` removes for CMD


class Action(str, enum.Enum):
    """What a rule does in one profile."""

    BLOCK = "block"
    WARN = "warn"
    OFF = "off"


class Profile(str, enum.Enum):
    REPO = "repo"
    DEPENDENCY = "dependency"
    UNTRUSTED = "untrusted"


class Nature(str, enum.Enum):
    """What a rule finds, which alone decides what it does in each profile (the table,
    with the reasons, is ``ztsa.registry.NATURES``; docs/rules.md prints it)."""

    ATTACK = "attack"  # the repository plants it: runs outside the sandbox, widens, instructs
    SUPPLY_ATTACK = "supply-attack"  # code fetched from outside the lockfile or registry
    CREDENTIAL = "credential"  # a credential committed to the tree
    HYGIENE = "hygiene"  # what a careful maintainer merely forgot
    ENV_ESCAPE = "env-escape"  # the machine gives code a way out or onto the host
    ENV_SECRETS = "env-secrets"  # the machine hands code a credential
    ENV_HARDENING = "env-hardening"  # a missing layer of defence in depth
    ENV_LIMITS = "env-limits"  # no bound on what code may consume
    ENV_UNGUARDED = "env-unguarded"  # an agent with every guard off on an unisolated machine


class Category(str, enum.Enum):
    ENV = "ENV"
    FS = "FS"
    NET = "NET"
    SUP = "SUP"
    AGT = "AGT"
    EXEC = "EXEC"  # not a rule category: what `ztsa exec` finds about its own confinement


CATEGORY_TITLES = {
    Category.ENV: "environment integrity",
    Category.FS: "filesystem and credential leakage",
    Category.NET: "network exposure",
    Category.SUP: "supply chain and build hooks",
    Category.AGT: "AI-agent configuration",
    Category.EXEC: "confinement of ztsa exec",
}


class Evidence(NamedTuple):
    """One thing a rule saw. Never holds a secret value."""

    detail: str
    path: str | None = None
    line: int | None = None

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"detail": self.detail}
        if self.path is not None:
            out["path"] = self.path
        if self.line is not None:
            out["line"] = self.line
        return out


class Outcome(NamedTuple):
    """What a rule's check returns.

    ``advisory`` marks a finding that the catalogue says only warns (for example
    dangerous capabilities present only in the bounding set): it is reported as a
    failure but never gates, whatever the profile.
    """

    status: Status
    message: str
    evidence: tuple[Evidence, ...] = ()
    advisory: bool = False

    @classmethod
    def passed(cls, message: str, evidence: Iterable[Evidence] = ()) -> Outcome:
        return cls(Status.PASS, message, tuple(evidence))

    @classmethod
    def failed(
        cls, message: str, evidence: Iterable[Evidence] = (), *, advisory: bool = False
    ) -> Outcome:
        return cls(Status.FAIL, message, tuple(evidence), advisory)

    @classmethod
    def unknown(cls, message: str, evidence: Iterable[Evidence] = ()) -> Outcome:
        return cls(Status.UNKNOWN, message, tuple(evidence))


class Result(NamedTuple):
    """One evaluated rule in one report."""

    id: str
    slug: str
    category: Category
    title: str
    severity: Severity
    action: Action
    status: Status
    gating: bool
    message: str
    evidence: tuple[Evidence, ...]
    fix: str

    @property
    def blocks(self) -> bool:
        return self.gating and self.status in (Status.FAIL, Status.UNKNOWN)


class NotRun(NamedTuple):
    id: str
    reason: str


class Report(NamedTuple):
    tool_version: str
    profile: Profile
    path: str
    results: tuple[Result, ...]
    not_run: tuple[NotRun, ...] = ()

    @property
    def passed(self) -> bool:
        return not any(r.blocks for r in self.results)

    def summary(self) -> dict[str, int]:
        counts = {s.value: 0 for s in Status}
        for r in self.results:
            counts[r.status.value] += 1
        counts["blocking"] = sum(1 for r in self.results if r.blocks)
        counts["not_run"] = len(self.not_run)
        return counts


class MachineView(NamedTuple):
    """What the confinement of `ztsa exec` does with the findings about the machine, for
    the text report's second part. ztsa.sandbox.handled.view computes it from the same
    logic the gate under `ztsa exec` uses; a formatter only reads it.

    A finding is about the machine (not the repository) when it describes the
    environment a command runs in here: its category is ENV, NET or EXEC, the
    confinement of `ztsa exec` would remove it on a kernel with every control, or every
    file it names lies outside the workspace."""

    running: bool  # the report is ztsa exec's own: its findings are already judged
    machine: frozenset[str]  # ids of the findings about the machine
    handled: dict[str, str]  # id -> the control that would remove it here (ztsa check)
    unhandled: dict[str, str]  # id -> why ztsa exec does not remove it here
    missing: tuple[str, ...] = ()  # the confinement controls this kernel lacks
    refuses: bool = False  # ztsa exec would not run here under this profile (EXEC001)
