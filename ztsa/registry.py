"""Rule declaration and discovery.

A rule is a module ``ztsa/rules/<category>/<id>_<slug>.py`` holding one function
decorated with :func:`rule`. Its docstring is the documentation, with the sections
``What it checks``, ``Why it matters`` and ``How to fix``.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from ztsa.lazy import LazyRe
from ztsa.model import Action, Category, Outcome, Profile, Severity

if TYPE_CHECKING:
    from ztsa.context import Context

RULE_ID = LazyRe(r"^(ENV|FS|NET|SUP|AGT)\d{3}$")
SLUG = LazyRe(r"^[a-z0-9]+(-[a-z0-9]+)*$")
DOC_SECTIONS = ("What it checks", "Why it matters", "How to fix")
_ACTIONS = {"B": Action.BLOCK, "W": Action.WARN, "-": Action.OFF}

Check = Callable[["Context"], Outcome]


class Rule(NamedTuple):
    id: str
    slug: str
    category: Category
    title: str
    severity: Severity
    actions: dict[Profile, Action]
    doc: str
    check: Check
    module: str
    opt_in: str | None = None

    def action(self, profile: Profile) -> Action:
        return self.actions[profile]

    def section(self, name: str) -> str:
        return doc_sections(self.doc).get(name, "")

    @property
    def fix(self) -> str:
        return self.section("How to fix")


def parse_actions(spec: str) -> dict[Profile, Action]:
    """``"W/B/B"`` (repo/dependency/untrusted, as in RULES.md) to actions."""
    parts = spec.split("/")
    if len(parts) != 3 or any(p not in _ACTIONS for p in parts):
        raise ValueError(f"bad profile actions {spec!r}: want three of B, W, - joined by /")
    return {
        profile: _ACTIONS[p]
        for profile, p in zip(
            (Profile.REPO, Profile.DEPENDENCY, Profile.UNTRUSTED), parts, strict=True
        )
    }


def doc_sections(doc: str) -> dict[str, str]:
    """Split a rule docstring into ``{"Title": first line, section: text}``."""
    lines = [ln.rstrip() for ln in doc.strip().splitlines()]
    # dedent everything after the first line
    body = lines[1:]
    indents = [len(ln) - len(ln.lstrip()) for ln in body if ln.strip()]
    cut = min(indents) if indents else 0
    body = [ln[cut:] for ln in body]
    out: dict[str, str] = {"Title": lines[0].strip() if lines else ""}
    current: str | None = None
    chunk: list[str] = []
    for ln in body:
        if ln.startswith("## "):
            if current is not None:
                out[current] = "\n".join(chunk).strip()
            current, chunk = ln[3:].strip(), []
        elif current is not None:
            chunk.append(ln)
    if current is not None:
        out[current] = "\n".join(chunk).strip()
    return out


_REGISTRY: dict[str, Rule] = {}


def rule(
    *,
    id: str,
    slug: str,
    title: str,
    severity: Severity,
    actions: str,
    opt_in: str | None = None,
) -> Callable[[Check], Check]:
    """Declare a rule. ``actions`` is the r/d/u column of RULES.md, e.g. ``"W/B/B"``."""

    def register(fn: Check) -> Check:
        if not RULE_ID.match(id):
            raise ValueError(f"bad rule id {id!r}")
        if id in _REGISTRY and _REGISTRY[id].module != fn.__module__:
            raise ValueError(f"duplicate rule id {id}")
        mod = importlib.import_module(fn.__module__)
        _REGISTRY[id] = Rule(
            id=id,
            slug=slug,
            category=Category(re.sub(r"\d+$", "", id)),
            title=title,
            severity=severity,
            actions=parse_actions(actions),
            doc=mod.__doc__ or "",
            check=fn,
            module=fn.__module__,
            opt_in=opt_in,
        )
        return fn

    return register


def load_rules() -> dict[str, Rule]:
    """Import every rule module once; return the rules sorted by ID."""
    if not _REGISTRY:
        base = os.path.join(os.path.dirname(__file__), "rules")
        for cat in sorted(os.listdir(base)):
            folder = os.path.join(base, cat)
            if not os.path.isdir(folder) or cat.startswith(("_", ".")):
                continue
            for name in sorted(os.listdir(folder)):
                if name.endswith(".py") and not name.startswith("_"):
                    importlib.import_module(f"ztsa.rules.{cat}.{name[:-3]}")
    return dict(sorted(_REGISTRY.items()))
