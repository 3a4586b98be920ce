"""Generate, from the registered rules, docs/rules.md (`python -m ztsa.rulesdoc >
docs/rules.md`) and the index of their modules and actions that `ztsa exec`'s gate reads
(`python -m ztsa.rulesdoc --index > ztsa/rules/_index.py`). A test fails when either is
stale."""

from __future__ import annotations

from ztsa.model import CATEGORY_TITLES, Action, Profile
from ztsa.registry import NATURES, format_actions, load_rules, parse_actions

_SYMBOL = {Action.BLOCK: "block", Action.WARN: "warn", Action.OFF: "off"}


def render() -> str:
    rules = load_rules()
    out = ["# ztsa rules", "",
           "Generated from the rule files by `python -m ztsa.rulesdoc`; do not edit. The",
           "rule files and this page are the catalogue of record. `ztsa explain ID` prints",
           "a rule's text.", ""]
    out += principle()
    out += ["## The rules", "",
            "| ID | slug | title | severity | nature | repo | dependency | untrusted |",
            "|---|---|---|---|---|---|---|---|"]
    for r in rules.values():
        acts = " | ".join(_SYMBOL[r.action(p)] for p in Profile)
        nature = r.nature.value if r.nature else ""
        out.append(f"| [{r.id}](#{r.id.lower()}) | `{r.slug}` | {r.title} | "
                   f"{r.severity.value} | {nature} | {acts} |")
    current = None
    for r in rules.values():
        if r.category is not current:
            current = r.category
            out += ["", f"## {r.category.value}: {CATEGORY_TITLES[r.category]}"]
        out += ["", f"### {r.id}", "", f"`{r.slug}`: **{r.title}** (severity "
                f"{r.severity.value}, nature {r.nature.value if r.nature else '?'}: "
                f"{format_actions(r.actions)})"]
        for name in ("What it checks", "Why it matters", "How to fix"):
            out += ["", f"**{name}.** {r.section(name)}"]
    return "\n".join(out) + "\n"


def principle() -> list[str]:
    """What blocks, and why: the natures and the actions each implies."""
    out = ["## What blocks: one principle", "",
           "Block on what an attacker plants; warn on what a careful maintainer merely "
           "forgot. Each rule declares its *nature*, what it finds, and its actions in the "
           "three profiles follow from that nature alone (a registry test checks every "
           "rule, so a new rule cannot drift). The profiles say whom a run trusts: `repo`, "
           "the repository and what it installs (your own project); `dependency`, the "
           "repository but not the packages it installs; `untrusted` (the default), "
           "neither: an agent running a pull request's code.", "",
           "A rule whose nature is an attack may also find hygiene (SUP002: an entry "
           "without a hash beside one from another host): those findings are advisory, "
           "listed but never gating on their own. Test data is judged where it acts: a "
           "finding only in files of the tests, fixtures, examples or docs that nothing of "
           "the root installs, builds or references is advisory, except in surfaces a tool "
           "obeys wherever they sit (an instruction file an agent loads in a subdirectory, "
           "`.envrc`, `mise.toml`; `docs/surfaces.md`). Under `ztsa exec`, a finding about "
           "the machine that the confinement removes is `handled` and does not block.", "",
           "| nature | repo | dependency | untrusted | what it is | why |",
           "|---|---|---|---|---|---|"]
    for nature, spec in NATURES.items():
        acts = parse_actions(spec.actions)
        cols = " | ".join(_SYMBOL[acts[p]] for p in Profile)
        out.append(f"| `{nature.value}` | {cols} | {spec.what} | {spec.why} |")
    return [*out, ""]


INDEX_HEADER = '''"""Every rule's module, actions (repo/dependency/untrusted) and nature, by
ID: registry.gating_rules imports only the modules of the rules that can block (and of
the hygiene rules, whose warnings `ztsa exec` shows).

Generated from the registered rules by `python -m ztsa.rulesdoc --index >
ztsa/rules/_index.py`; do not edit (a registry test fails when it is stale).
"""
'''


def render_index() -> str:
    rules = load_rules()
    out = [INDEX_HEADER, "RULES = {"]
    for r in rules.values():
        nature = r.nature.value if r.nature else ""
        out.append(f'    "{r.id}": ("{r.module}", "{format_actions(r.actions)}", "{nature}"),')
    return "\n".join(out) + "\n}\n"


if __name__ == "__main__":
    import sys

    print(render_index() if sys.argv[1:] == ["--index"] else render(), end="")
