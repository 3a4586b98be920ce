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
from ztsa.model import Action, Category, Nature, Outcome, Profile, Severity
from ztsa.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ztsa.context import Context

RULE_ID = LazyRe(r"^(ENV|FS|NET|SUP|AGT)\d{3}$")
SLUG = LazyRe(r"^[a-z0-9]+(-[a-z0-9]+)*$")
DOC_SECTIONS = ("What it checks", "Why it matters", "How to fix")
_ACTIONS = {"B": Action.BLOCK, "W": Action.WARN, "-": Action.OFF}
_SYMBOLS = {action: symbol for symbol, action in _ACTIONS.items()}
# the order of the profiles in an actions spec: repo/dependency/untrusted
_PROFILES = (Profile.REPO, Profile.DEPENDENCY, Profile.UNTRUSTED)

Check = Callable[["Context"], Outcome]


class NatureSpec(NamedTuple):
    actions: str  # repo/dependency/untrusted
    what: str  # what a finding of this nature is
    why: str  # why it does that in each profile


# The one principle that decides what blocks: block on what an attacker plants, warn on
# what a careful maintainer merely forgot. A rule declares its nature; its actions
# follow from it (a registry test checks), so no rule's actions are chosen on their own.
# The profiles say whom a run trusts: `repo` the repository and what it installs (your
# own), `dependency` the repository but not what it installs, `untrusted` neither.
NATURES = {
    Nature.ATTACK: NatureSpec(
        "W/W/B",
        "the repository plants it: code run by the agent, an editor, git or the host "
        "outside the sandbox (hooks, MCP servers, tasks, git config, direnv, devcontainer "
        "commands), a widened agent permission or endpoint, an instruction to the agent, "
        "or the repository's own code that a package manager, build or interpreter runs",
        "it blocks where the repository itself is not trusted (`untrusted`); under "
        "`repo` and `dependency` the repository is yours, and it warns"),
    Nature.SUPPLY_ATTACK: NatureSpec(
        "W/B/B",
        "the repository makes the install or build run code from outside what a lockfile "
        "pins or the registry serves: a download run as code, another index or host, a "
        "package run at no fixed version",
        "it blocks wherever what the repository installs is not trusted (`dependency`, "
        "`untrusted`); under `repo` it warns"),
    Nature.CREDENTIAL: NatureSpec(
        "B/B/B",
        "a live credential committed to the tree",
        "whatever runs in the workspace, and whoever clones it, reads it, whoever wrote "
        "it: it blocks in every profile"),
    Nature.HYGIENE: NatureSpec(
        "W/W/W",
        "what a careful maintainer merely forgot: no lockfile, no hashes, a git source "
        "without a commit, dependency install or build scripts no one allowlisted",
        "nothing is planted: the person is told in every profile, and the gate never "
        "refuses a command for it"),
    Nature.ENV_ESCAPE: NatureSpec(
        "W/B/B",
        "the machine gives code a way out of any confinement or onto the host: root, "
        "capabilities, writable kernel or system paths, a container daemon, injection "
        "variables, no isolation",
        "it blocks wherever some code is not trusted (`dependency`, `untrusted`); under "
        "`ztsa exec` the confinement handles what it can"),
    Nature.ENV_SECRETS: NatureSpec(
        "-/B/B",
        "the machine hands code a credential: readable key files, secret variables, "
        "cloud or cluster tokens",
        "your own code may use your credentials (`repo`: off); code you do not trust "
        "may not (`dependency`, `untrusted`)"),
    Nature.ENV_HARDENING: NatureSpec(
        "-/W/B",
        "a layer of defence in depth is missing: no seccomp filter or NoNewPrivs, shared "
        "namespaces, forwarded agent sockets, writable persistence or agent files, "
        "reachable local services",
        "no escape on its own: it blocks only where the repository itself is not trusted "
        "(`untrusted`), warns under `dependency`, and is off under `repo`"),
    Nature.ENV_LIMITS: NatureSpec(
        "-/-/W",
        "nothing bounds what code may consume (memory, processes)",
        "an exhaustion is a nuisance, not a compromise: a warning under `untrusted` only"),
    Nature.ENV_UNGUARDED: NatureSpec(
        "B/B/B",
        "an agent runs with every guard off (bypass mode) on a machine that is not isolated",
        "nothing stands between the agent and the machine, whoever wrote the repository: "
        "it blocks in every profile"),
}


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
    nature: Nature | None = None  # every rule declares one (tests/test_registry.py)

    def action(self, profile: Profile) -> Action:
        return self.actions[profile]

    def section(self, name: str) -> str:
        return _sections(self.doc).get(name, "")

    @property
    def fix(self) -> str:
        return self.section("How to fix")


def parse_actions(spec: str) -> dict[Profile, Action]:
    """``"W/B/B"`` (repo/dependency/untrusted) to actions."""
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
    nature: Nature | None = None,
    opt_in: str | None = None,
) -> Callable[[Check], Check]:
    """Declare a rule. ``nature`` is what it finds; ``actions``, repo/dependency/untrusted
    (e.g. ``"W/B/B"``), is what NATURES says of that nature, written out so that the rule
    file reads whole. A registry test fails for a rule without a nature or whose actions
    are not its nature's (a rule module that lacks one still loads: the test, not the
    gate, is where that is caught)."""

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
            nature=Nature(nature) if nature is not None else None,
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


def gating_rules(profile: Profile, also: frozenset[Nature] = frozenset()
                 ) -> dict[str, Rule] | None:
    """The rules that block under profile, and those of the natures also (`ztsa exec`
    shows the hygiene warnings of a gate that passes), importing only their modules
    (`ztsa exec` needs the others only when the gate fails), as the generated index
    lists them. None where the index and the rules disagree (a rule module on disk that
    it does not name, or one it names that is not there; a rule imported that is not the
    one it lists): then the caller loads every rule."""
    try:
        from ztsa.rules._index import RULES as index
    except ImportError:
        return None
    if sorted(entry[0] for entry in index.values()) != sorted(_rule_modules()):
        return None
    column = _PROFILES.index(profile)
    natures = {n.value for n in also}
    rules = {}
    for rule_id, (module, actions, nature) in index.items():
        if actions.split("/")[column] != "B" and nature not in natures:
            continue
        importlib.import_module(module)
        found = _REGISTRY.get(rule_id)
        if (found is None or found.module != module
                or format_actions(found.actions) != actions
                or found.nature is None or found.nature.value != nature):
            return None  # the index is stale: trust neither
        rules[rule_id] = found
    return dict(sorted(rules.items()))
