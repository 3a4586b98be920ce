"""Human-readable report: what blocks first, then warnings, then one summary line."""

from __future__ import annotations

from ztsa.model import Report, Result, Status
from ztsa.printable import printable

_COLORS = {"red": "31", "yellow": "33", "green": "32", "dim": "2", "bold": "1"}


def _paint(text: str, color: str, on: bool) -> str:
    return f"\x1b[{_COLORS[color]}m{text}\x1b[0m" if on else text


def _label(r: Result) -> tuple[str, str]:
    if r.status is Status.UNKNOWN:
        return ("BLOCK?" if r.gating else "WARN?"), ("red" if r.gating else "yellow")
    if r.status is Status.FAIL:
        return ("BLOCK" if r.gating else "WARN"), ("red" if r.gating else "yellow")
    if r.status is Status.WAIVED:
        return "WAIVED", "dim"
    if r.status is Status.HANDLED:
        return "HANDLED", "dim"
    return "PASS", "green"


def _first_paragraph(text: str) -> str:
    return " ".join(text.strip().split("\n\n")[0].split())


def render_text(report: Report, *, color: bool = False) -> str:
    out: list[str] = []
    order = {Status.FAIL: 0, Status.UNKNOWN: 0, Status.WAIVED: 1, Status.HANDLED: 1,
             Status.PASS: 2}
    ranked = sorted(report.results, key=lambda r: (not r.blocks, order[r.status], r.id))
    for r in ranked:
        if r.status is Status.PASS:
            continue
        label, col = _label(r)
        out.append(f"{_paint(label.ljust(6), col, color)} {_paint(r.id, 'bold', color)} "
                   f"{r.title}: {printable(r.message)}")
        for e in r.evidence:
            where = ""
            if e.line:
                where = f" ({printable(e.path or '')}:{e.line})"
            elif e.path and e.path not in e.detail:
                where = f" ({printable(e.path)})"
            out.append(f"         - {printable(e.detail)}{where}")
        if r.status not in (Status.WAIVED, Status.HANDLED) and r.fix:
            out.append(f"         fix: {_first_paragraph(r.fix)}")
    passed = [r.id for r in ranked if r.status is Status.PASS]
    if passed:
        out.append(_paint(f"pass   {' '.join(passed)}", "dim", color))
    for n in report.not_run:
        out.append(_paint(f"not run {n.id}: {printable(n.reason)}", "dim", color))
    s = report.summary()
    verdict = (_paint("gate PASSED", "green", color) if report.passed
               else _paint("gate FAILED", "red", color))
    out.append(
        f"{verdict} (profile {report.profile.value}, {printable(report.path)}): "
        f"{s['blocking']} blocking, "
        f"{s['fail']} fail, {s['unknown']} unknown, {s['waived']} waived, "
        + (f"{s['handled']} handled by ztsa exec, " if s["handled"] else "")
        + f"{s['pass']} pass"
    )
    return "\n".join(out) + "\n"
