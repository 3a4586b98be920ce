"""SARIF 2.1.0, one run, rules with their help text from the rule docs.

A finding in one of the repository's files is a result, located in that file (relative
to %SRCROOT%). A finding with no such file (the machine's: the environment, the
kernel, ztsa's own confinement) is a tool execution notification of the run's
invocation, naming its rule: code scanning requires every result to have a file
location, and a fake one would show an alert in a file the finding is not about."""

from __future__ import annotations

import json
from urllib.parse import quote

from ztsa.model import Report, Status
from ztsa.output import repo_path

_LEVEL = {Status.FAIL: "error", Status.UNKNOWN: "warning", Status.WAIVED: "note",
          Status.HANDLED: "note"}


def render_sarif(report: Report) -> str:
    from ztsa.registry import load_rules

    rules = load_rules()
    used = [r for r in report.results if r.status is not Status.PASS]
    ids = sorted({r.id for r in used})
    driver_rules = []
    for rid in ids:
        rule = rules.get(rid)
        if rule is None:  # EXEC001: a finding of ztsa exec, not a catalogue rule
            r0 = next(r for r in used if r.id == rid)
            driver_rules.append({
                "id": rid, "name": r0.slug, "shortDescription": {"text": r0.title},
                "help": {"text": r0.fix},
                "properties": {"category": r0.category.value, "severity": r0.severity.value},
            })
            continue
        driver_rules.append({
            "id": rid,
            "name": rule.slug,
            "shortDescription": {"text": rule.title},
            "fullDescription": {"text": rule.section("What it checks")},
            "help": {"text": rule.section("How to fix"),
                     "markdown": rule.doc.split("\n", 1)[-1].strip()},
            "properties": {"category": rule.category.value, "severity": rule.severity.value},
        })
    results, notes = [], []
    for r in used:
        # the repository's files only, relative to its root; a finding about the
        # machine has no file location (code scanning would show a file it is not in)
        locations = [
            {"physicalLocation": {
                "artifactLocation": {"uri": quote(path), "uriBaseId": "%SRCROOT%"},
                **({"region": {"startLine": e.line}} if e.line else {}),
            }}
            for e in r.evidence if (path := repo_path(e.path, report.path)) is not None
        ]
        level = (_LEVEL[r.status] if r.gating or r.status in (Status.WAIVED, Status.HANDLED)
                 else "warning")
        message = {"text": r.message + "".join(f"\n- {e.detail}" for e in r.evidence)}
        properties = {"status": r.status.value, "gating": r.gating}
        if not locations:
            notes.append({"associatedRule": {"id": r.id, "index": ids.index(r.id)},
                          "level": level, "message": message, "properties": properties})
            continue
        results.append({
            "ruleId": r.id,
            "ruleIndex": ids.index(r.id),
            "level": level,
            "message": message,
            "locations": locations,
            "properties": properties,
        })
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "ztsa", "version": report.tool_version,
                                "rules": driver_rules}},
            "results": results,
            "invocations": [{"executionSuccessful": True,
                             "toolExecutionNotifications": notes}],
            "properties": {"profile": report.profile.value, "passed": report.passed},
        }],
    }
    return json.dumps(doc, indent=2) + "\n"
