"""Every rule is declared, named, documented and tested the same way."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ztsa.model import Action, Profile
from ztsa.registry import DOC_SECTIONS, RULE_ID, SLUG, load_rules

ROOT = Path(__file__).resolve().parent.parent
RULES = load_rules()
CATALOGUE = ROOT.parent / "shared" / "RULES.md"


def catalogue_actions() -> dict[str, str]:
    rows = re.findall(r"^\| ((?:ENV|FS|NET|SUP|AGT)\d{3}) \|.*\| ([BW-]/[BW-]/[BW-]) \|$",
                      CATALOGUE.read_text(), re.M)
    return dict(rows)


def test_rules_are_registered():
    assert len(RULES) >= 11
    assert all(RULE_ID.match(i) for i in RULES)


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_rule_is_well_formed(rule_id):
    rule = RULES[rule_id]
    assert rule.id == rule_id and SLUG.match(rule.slug), rule.slug
    module_file = Path(rule.check.__code__.co_filename)
    expected = f"{rule.id.lower()}_{rule.slug.replace('-', '_')}.py"
    assert module_file.name == expected
    assert module_file.parent.name == rule.category.value.lower()
    for section in DOC_SECTIONS:
        assert len(rule.section(section)) > 40, f"{rule_id}: section {section!r} too short"
    assert rule.doc.splitlines()[0].strip(), "first docstring line is the title"
    test_file = (ROOT / "tests" / "rules" / rule.category.value.lower()
                 / f"test_{module_file.name}")
    assert test_file.exists(), f"missing {test_file}"
    text = test_file.read_text()
    for status in ("PASS", "FAIL", "UNKNOWN"):
        assert f"Status.{status}" in text, f"{test_file.name} has no {status.lower()} case"


@pytest.mark.skipif(not CATALOGUE.exists(), reason="../shared/RULES.md is not beside the checkout")
def test_actions_match_the_catalogue():
    spec = catalogue_actions()
    assert len(spec) == 48
    symbol = {Action.BLOCK: "B", Action.WARN: "W", Action.OFF: "-"}
    for rule_id, rule in RULES.items():
        if rule_id not in spec:  # a rule added after the catalogue: its category's next ID
            prefix = rule_id.rstrip("0123456789")
            ids = sorted(int(r[len(prefix):]) for r in spec if r.startswith(prefix))
            assert int(rule_id[len(prefix):]) > ids[-1], rule_id
            continue
        got = "/".join(symbol[rule.action(p)] for p in
                       (Profile.REPO, Profile.DEPENDENCY, Profile.UNTRUSTED))
        assert got == spec[rule_id], rule_id
    assert set(spec) <= set(RULES)  # every original rule is there


def test_docs_rules_md_is_current():
    from ztsa.rulesdoc import render

    assert (ROOT / "docs" / "rules.md").read_text() == render(), (
        "docs/rules.md is stale: run `python -m ztsa.rulesdoc > docs/rules.md`")


def test_the_rule_index_is_current():
    from ztsa.rulesdoc import render_index

    assert (ROOT / "ztsa" / "rules" / "_index.py").read_text() == render_index(), (
        "ztsa/rules/_index.py is stale: run "
        "`python -m ztsa.rulesdoc --index > ztsa/rules/_index.py`")


def test_every_rule_module_registers_one_rule():
    from ztsa.registry import _rule_modules

    assert sorted(r.module for r in RULES.values()) == sorted(_rule_modules())


def test_gating_rules_are_the_blocking_ones_of_each_profile():
    from ztsa.model import Action, Profile
    from ztsa.registry import gating_rules

    rules = load_rules()
    for profile in Profile:
        want = {i for i, r in rules.items() if r.action(profile) is Action.BLOCK}
        got = gating_rules(profile)
        assert got is not None and set(got) == want, profile


def test_an_index_that_disagrees_with_the_rules_is_not_trusted(monkeypatch):
    """A stale index makes the caller load every rule: a rule module it does not name, a
    module it names that is not there, a rule whose module or actions are not the ones
    it lists."""
    from ztsa.registry import format_actions, gating_rules
    from ztsa.rules import _index

    index = {i: (r.module, format_actions(r.actions)) for i, r in RULES.items()}
    assert index == _index.RULES
    blocks = next(i for i, r in RULES.items() if r.action(Profile.REPO) is Action.BLOCK)
    warns = next(i for i, r in RULES.items() if r.action(Profile.REPO) is Action.WARN)
    renamed = {("ENV999" if i == blocks else i): v for i, v in index.items()}
    stale = {
        "a module left out": {i: v for i, v in index.items() if i != warns},
        "a module not there": {**index, "ENV999": ("ztsa.rules.env.env999_gone", "W/W/W")},
        "modules swapped": {**index, blocks: (index[warns][0], index[blocks][1]),
                            warns: (index[blocks][0], index[warns][1])},
        "another ID": renamed,
        "other actions": {**index, warns: (index[warns][0], "B/B/B")},
    }
    for case, rules in stale.items():
        monkeypatch.setattr(_index, "RULES", rules)
        assert gating_rules(Profile.REPO) is None, case
    monkeypatch.setattr(_index, "RULES", index)
    assert gating_rules(Profile.REPO) is not None


def test_docs_surfaces_md_is_current():
    from ztsa.surfaces import render

    assert (ROOT / "docs" / "surfaces.md").read_text() == render(), (
        "docs/surfaces.md is stale: run `python -m ztsa.surfaces > docs/surfaces.md`")
