"""GitHub Actions workflow commands: one annotation per finding that is not a pass
(`::error file=F,line=N,title=T::message`), then a notice with the verdict. A finding
about the machine (an environment rule, a path outside the workspace) carries no file:
GitHub would show it against a file that does not hold it."""

from __future__ import annotations

from ztsa.model import Report, Result, Status
from ztsa.output import repo_path
from ztsa.printable import printable


def _data(text: str) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return printable(text)  # and no escape sequence for the log's viewer


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _level(r: Result) -> str:
    if r.blocks:
        return "error"
    if r.status in (Status.FAIL, Status.UNKNOWN):
        return "warning"
    return "notice"  # waived, handled


def _where(r: Result, workspace: str) -> str:
    for e in r.evidence:
        path = repo_path(e.path, workspace)
        if path is not None:
            line = f",line={e.line}" if e.line else ""
            return f"file={_prop(path)}{line},"
    return ""


def render_github(report: Report) -> str:
    out = []
    for r in sorted(report.results, key=lambda r: (not r.blocks, r.id)):
        if r.status is Status.PASS:
            continue
        title = f"{r.id} {r.slug} ({r.status.value})"
        body = r.message + "".join(f"\n- {e.detail}" for e in r.evidence)
        if r.blocks:
            body += f"\nfix: {r.fix}"
        out.append(f"::{_level(r)} {_where(r, report.path)}title={_prop(title)}::{_data(body)}")
    verdict = "passed" if report.passed else "FAILED"
    counts = report.summary()
    line = f"gate {verdict} (profile {report.profile.value}): {counts['blocking']} blocking"
    out.append(f"::notice title=ztsa::{_data(line)}")
    return "\n".join(out) + "\n"
