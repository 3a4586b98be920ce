"""Generate docs/rules.md from the rule docstrings: `python -m ztsa.rulesdoc > docs/rules.md`."""

from __future__ import annotations

from ztsa.model import CATEGORY_TITLES, Action, Profile
from ztsa.registry import load_rules

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


if __name__ == "__main__":
    print(render(), end="")
