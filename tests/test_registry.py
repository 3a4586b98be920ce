"""Every rule is declared, named, documented and tested the same way."""

from __future__ import annotations

from pathlib import Path

import pytest

from ztsa.model import Action, Nature, Profile
from ztsa.registry import (
    DOC_SECTIONS,
    NATURES,
    RULE_ID,
    SLUG,
    format_actions,
    load_rules,
    parse_actions,
)

ROOT = Path(__file__).resolve().parent.parent
RULES = load_rules()


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


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_actions_follow_from_the_nature(rule_id):
    """The one principle: a rule's actions are its nature's (registry.NATURES), so no
    rule's actions are chosen on their own and a new rule cannot drift. The rule files
    are the catalogue of record (../shared/RULES.md's action columns are history)."""
    rule = RULES[rule_id]
    assert rule.nature is not None, f"{rule_id} declares no nature"
    assert format_actions(rule.actions) == NATURES[rule.nature].actions, (
        f"{rule_id}: actions {format_actions(rule.actions)} are not those of its nature "
        f"{rule.nature.value} ({NATURES[rule.nature].actions})")


def test_every_nature_is_explained_and_the_principle_holds():
    """Every nature has its actions and its reasons; hygiene never blocks, and every
    attack blocks where the repository is not trusted."""
    assert set(NATURES) == set(Nature)
    for nature, spec in NATURES.items():
        assert len(spec.what) > 30 and len(spec.why) > 30, nature
        parse_actions(spec.actions)
    hygiene = parse_actions(NATURES[Nature.HYGIENE].actions)
    assert Action.BLOCK not in hygiene.values()
    for nature in (Nature.ATTACK, Nature.SUPPLY_ATTACK, Nature.CREDENTIAL):
        assert parse_actions(NATURES[nature].actions)[Profile.UNTRUSTED] is Action.BLOCK
    # what the repository installs is not trusted under dependency
    assert parse_actions(NATURES[Nature.SUPPLY_ATTACK].actions)[Profile.DEPENDENCY] \
        is Action.BLOCK


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
        hygiene = {i for i, r in rules.items() if r.nature is Nature.HYGIENE}
        got = gating_rules(profile, frozenset({Nature.HYGIENE}))
        assert got is not None and set(got) == want | hygiene and hygiene, profile


def test_an_index_that_disagrees_with_the_rules_is_not_trusted(monkeypatch):
    """A stale index makes the caller load every rule: a rule module it does not name, a
    module it names that is not there, a rule whose module or actions are not the ones
    it lists."""
    from ztsa.registry import format_actions, gating_rules
    from ztsa.rules import _index

    index = {i: (r.module, format_actions(r.actions), r.nature.value)
             for i, r in RULES.items()}
    assert index == _index.RULES
    blocks = next(i for i, r in RULES.items() if r.action(Profile.REPO) is Action.BLOCK)
    warns = next(i for i, r in RULES.items() if r.action(Profile.REPO) is Action.WARN)
    renamed = {("ENV999" if i == blocks else i): v for i, v in index.items()}
    stale = {
        "a module left out": {i: v for i, v in index.items() if i != warns},
        "a module not there": {**index, "ENV999": ("ztsa.rules.env.env999_gone", "W/W/W",
                                                   "hygiene")},
        "modules swapped": {**index, blocks: (index[warns][0], *index[blocks][1:]),
                            warns: (index[blocks][0], *index[warns][1:])},
        "another ID": renamed,
        "other actions": {**index, warns: (index[warns][0], "B/B/B", index[warns][2])},
        "another nature": {**index, blocks: (*index[blocks][:2], "hygiene")},
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
