"""Generate, from the registered rules, docs/rules.md (`python -m ztsa.rulesdoc >
docs/rules.md`) and the index of their modules and actions that `ztsa exec`'s gate reads
(`python -m ztsa.rulesdoc --index > ztsa/rules/_index.py`). A test fails when either is
stale."""

from __future__ import annotations

from ztsa.model import CATEGORY_TITLES, Action, Profile
from ztsa.registry import format_actions, load_rules

_SYMBOL = {Action.BLOCK: "block", Action.WARN: "warn", Action.OFF: "off"}


def render() -> str:
    rules = load_rules()
    out = ["# ztsa rules", "",
           "Generated from the rule docstrings by `python -m ztsa.rulesdoc`; do not edit.",
           "`ztsa explain ID` prints the same text.", ""]
    out += ["| ID | slug | title | severity | repo | dependency | untrusted |",
            "|---|---|---|---|---|---|---|"]
    for r in rules.values():
        acts = " | ".join(_SYMBOL[r.action(p)] for p in Profile)
        out.append(f"| [{r.id}](#{r.id.lower()}) | `{r.slug}` | {r.title} | "
                   f"{r.severity.value} | {acts} |")
    current = None
    for r in rules.values():
        if r.category is not current:
            current = r.category
            out += ["", f"## {r.category.value}: {CATEGORY_TITLES[r.category]}"]
        out += ["", f"### {r.id}", "", f"`{r.slug}`: **{r.title}** (severity {r.severity.value})"]
        for name in ("What it checks", "Why it matters", "How to fix"):
            out += ["", f"**{name}.** {r.section(name)}"]
    return "\n".join(out) + "\n"


INDEX_HEADER = '''"""Every rule's module and actions (repo/dependency/untrusted, as in RULES.md), by
ID: registry.gating_rules imports only the modules of the rules that can block.

Generated from the registered rules by `python -m ztsa.rulesdoc --index >
ztsa/rules/_index.py`; do not edit (a registry test fails when it is stale).
"""
'''


def render_index() -> str:
    rules = load_rules()
    out = [INDEX_HEADER, "RULES = {"]
    for r in rules.values():
        out.append(f'    "{r.id}": ("{r.module}", "{format_actions(r.actions)}"),')
    return "\n".join(out) + "\n}\n"


if __name__ == "__main__":
    import sys

    print(render_index() if sys.argv[1:] == ["--index"] else render(), end="")
