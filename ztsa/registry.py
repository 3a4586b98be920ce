"""Rule declaration and discovery.

A rule is a module ``ztsa/rules/<category>/<id>_<slug>.py`` holding one function
decorated with :func:`rule`. Its docstring is the documentation, with the sections
``What it checks``, ``Why it matters`` and ``How to fix``.

:func:`load_rules` imports every rule module. :func:`gating_rules` imports only those
that can block under a profile, as the generated index ``ztsa/rules/_index.py`` (rule ID
to module and actions) lists them: ``python -m ztsa.rulesdoc --index >
ztsa/rules/_index.py`` writes it from the registered rules, and a registry test fails
when it is stale.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
from collections.abc import Callable

from ztsa.lazy import LazyRe
from ztsa.model import Action, Category, Outcome, Profile, Severity
from ztsa.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ztsa.context import Context

RULE_ID = LazyRe(r"^(ENV|FS|NET|SUP|AGT)\d{3}$")
SLUG = LazyRe(r"^[a-z0-9]+(-[a-z0-9]+)*$")
DOC_SECTIONS = ("What it checks", "Why it matters", "How to fix")
_ACTIONS = {"B": Action.BLOCK, "W": Action.WARN, "-": Action.OFF}
_SYMBOLS = {action: symbol for symbol, action in _ACTIONS.items()}
# the order of the profiles in an actions spec, the r/d/u columns of RULES.md
_PROFILES = (Profile.REPO, Profile.DEPENDENCY, Profile.UNTRUSTED)

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
        return _sections(self.doc).get(name, "")

    @property
    def fix(self) -> str:
        return self.section("How to fix")


def parse_actions(spec: str) -> dict[Profile, Action]:
    """``"W/B/B"`` (repo/dependency/untrusted, as in RULES.md) to actions."""
    parts = spec.split("/")
    if len(parts) != 3 or any(p not in _ACTIONS for p in parts):
        raise ValueError(f"bad profile actions {spec!r}: want three of B, W, - joined by /")
    return {profile: _ACTIONS[p] for profile, p in zip(_PROFILES, parts, strict=True)}


def format_actions(actions: dict[Profile, Action]) -> str:
    """The inverse of :func:`parse_actions`: actions to ``"W/B/B"``."""
    return "/".join(_SYMBOLS[actions[profile]] for profile in _PROFILES)


@functools.cache
def _sections(doc: str) -> dict[str, str]:
    """doc_sections, once per docstring (every result of a report reads its fix)."""
    return doc_sections(doc)


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


_ALL_LOADED = False


def _rule_modules() -> list[str]:
    """The module name of every rule module, in ID order of their files."""
    base = os.path.join(os.path.dirname(__file__), "rules")
    out = []
    for cat in sorted(os.listdir(base)):
        folder = os.path.join(base, cat)
        if not os.path.isdir(folder) or cat.startswith(("_", ".")):
            continue
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py") and not name.startswith("_"):
                out.append(f"ztsa.rules.{cat}.{name[:-3]}")
    return out


def load_rules() -> dict[str, Rule]:
    """Import every rule module once; return the rules sorted by ID."""
    global _ALL_LOADED
    if not _ALL_LOADED:
        for module in _rule_modules():
            importlib.import_module(module)
        _ALL_LOADED = True
    return dict(sorted(_REGISTRY.items()))


def gating_rules(profile: Profile) -> dict[str, Rule] | None:
    """The rules that block under profile, importing only their modules (`ztsa exec`
    needs the others only when the gate fails), as the generated index lists them. None
    where the index and the rules disagree (a rule module on disk that it does not name,
    or one it names that is not there; a rule imported that is not the one it lists):
    then the caller loads every rule."""
    try:
        from ztsa.rules._index import RULES as index
    except ImportError:
        return None
    if sorted(module for module, _ in index.values()) != sorted(_rule_modules()):
        return None
    column = _PROFILES.index(profile)
    rules = {}
    for rule_id, (module, actions) in index.items():
        if actions.split("/")[column] != "B":
            continue
        importlib.import_module(module)
        found = _REGISTRY.get(rule_id)
        if found is None or found.module != module or format_actions(found.actions) != actions:
            return None  # the index is stale: trust neither
        rules[rule_id] = found
    return dict(sorted(rules.items()))
