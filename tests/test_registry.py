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
        got = "/".join(symbol[rule.action(p)] for p in
                       (Profile.REPO, Profile.DEPENDENCY, Profile.UNTRUSTED))
        assert got == spec[rule_id], rule_id


def test_docs_rules_md_is_current():
    from ztsa.rulesdoc import render

    assert (ROOT / "docs" / "rules.md").read_text() == render(), (
        "docs/rules.md is stale: run `python -m ztsa.rulesdoc > docs/rules.md`")


def test_every_declaration_reads_from_the_source_as_the_module_declares_it():
    from ztsa.registry import _rule_modules, declared_actions

    rules = load_rules()
    for module, path in _rule_modules():
        declared = declared_actions(path)
        assert declared is not None, f"{path}: write @rule(id=\"...\", ..., actions=\"...\")"
        rule_id, actions = declared
        assert rules[rule_id].module == module and rules[rule_id].actions == actions


def test_gating_rules_are_the_blocking_ones_of_each_profile():
    from ztsa.model import Action, Profile
    from ztsa.registry import gating_rules

    rules = load_rules()
    for profile in Profile:
        want = {i for i, r in rules.items() if r.action(profile) is Action.BLOCK}
        got = gating_rules(profile)
        assert got is not None and set(got) == want, profile


def test_a_declaration_that_is_not_plain_literals_is_not_read(tmp_path):
    from ztsa.registry import declared_actions

    cases = {
        "constant.py": 'A = "W/B/B"\n@rule(id="ENV001", slug="x", actions=A)\ndef f(c): ...\n',
        "two.py": '@rule(id="ENV001", actions="W/B/B")\ndef f(c): ...\n'
                  '@rule(id="ENV002", actions="B/B/B")\ndef g(c): ...\n',
        "no_id.py": '@rule(\n    id="ENV001", actions="W/B/B")\ndef f(c): ...\n',
        "indented.py": '  @rule(id="ENV001", actions="W/B/B")\ndef f(c): ...\n',
        "elsewhere.py": 'A = "W/B/B"\n@rule(id="ENV001", actions=A)\ndef f(c):\n'
                        '    """actions="B/B/B"."""\n',
        "bad.py": b'\xff\xfe@rule(id="ENV001", actions="W/B/B")\n',
    }
    for name, text in cases.items():
        p = tmp_path / name
        p.write_bytes(text if isinstance(text, bytes) else text.encode())
        assert declared_actions(str(p)) is None, name
    ok = tmp_path / "ok.py"
    ok.write_text('@rule(id="ENV001", slug="x",\n      actions="W/B/-")\ndef f(c): ...\n')
    assert declared_actions(str(ok)) is not None
    assert declared_actions(str(tmp_path / "absent.py")) is None
