"""Formatters: pure functions from a Report to a string."""

from __future__ import annotations

import enum

from ztsa.model import Report


class Format(str, enum.Enum):
    TEXT = "text"
    JSON = "json"
    SARIF = "sarif"


def render(report: Report, fmt: Format, *, color: bool = False) -> str:
    if fmt is Format.JSON:
        from ztsa.output.json import render_json

        return render_json(report)
    if fmt is Format.SARIF:
        from ztsa.output.sarif import render_sarif

        return render_sarif(report)
    from ztsa.output.text import render_text

    return render_text(report, color=color)
