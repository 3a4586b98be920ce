"""The ``ztsa.report/v1`` JSON document (schema: docs/report-schema.json)."""

from __future__ import annotations

import json

from ztsa.model import Report, Result

SCHEMA = "ztsa.report/v1"


def result_dict(r: Result) -> dict[str, object]:
    return {
        "id": r.id,
        "slug": r.slug,
        "category": r.category.value,
        "title": r.title,
        "status": r.status.value,
        "gating": r.gating,
        "action": r.action.value,
        "severity": r.severity.value,
        "message": r.message,
        "evidence": [e.as_dict() for e in r.evidence],
    }


def report_dict(report: Report) -> dict[str, object]:
    return {
        "schema": SCHEMA,
        "tool": {"name": "ztsa", "version": report.tool_version},
        "profile": report.profile.value,
        "path": report.path,
        "passed": report.passed,
        "results": [result_dict(r) for r in report.results],
        "not_run": [{"id": n.id, "reason": n.reason} for n in report.not_run],
        "summary": report.summary(),
    }


def render_json(report: Report) -> str:
    return json.dumps(report_dict(report), indent=2) + "\n"
