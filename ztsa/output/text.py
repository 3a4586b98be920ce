"""Human-readable report, for a person: first the repository (its findings and its
verdict under the profile), then the machine, split into what the confinement of
`ztsa exec` handles here and what it cannot (and why), then one verdict line that says
what blocks and why the rest does not.

Which findings are about the machine, and what `ztsa exec` does with them, come with
the report (model.MachineView, from ztsa.sandbox.handled.view): this module decides
nothing, it only says what it was given."""

from __future__ import annotations

from ztsa.model import MachineView, Nature, Report, Result, Status
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


def _n(count: int, singular: str, plural: str | None = None) -> str:
    return f"{count} {singular if count == 1 else (plural or singular + 's')}"


def _ids(results: list[Result]) -> str:
    return " ".join(r.id for r in results)


def _finding(out: list[str], r: Result, color: bool, *, note: str = "",
             fix: bool = True, most: int | None = None) -> None:
    """most: show at most this many items of evidence, and how many more there are."""
    label, col = _label(r)
    out.append(f"{_paint(label.ljust(6), col, color)} {_paint(r.id, 'bold', color)} "
               f"{r.title}: {printable(r.message)}")
    evidence = r.evidence
    if r.status is Status.HANDLED:  # the control is in the message already
        evidence = tuple(e for e in evidence if not e.detail.startswith("handled by "))
    total = len(evidence)
    if most is not None and total > most:
        evidence = evidence[:most]
    for e in evidence:
        where = ""
        if e.line:
            where = f" ({printable(e.path or '')}:{e.line})"
        elif e.path and e.path not in e.detail:
            where = f" ({printable(e.path)})"
        out.append(f"         - {printable(e.detail)}{where}")
    if evidence and len(evidence) < total:
        out.append(f"         - and {total - len(evidence)} more "
                   "(--format json lists them all)")
    if note:
        out.append(f"         {note}")
    if fix and r.status not in (Status.WAIVED, Status.HANDLED) and r.fix:
        out.append(f"         fix: {_first_paragraph(r.fix)}")


def _not_blocking(results: list[Result]) -> list[str]:
    """Why each finding that does not block does not: a clause per kind."""
    warned = [r for r in results if r.status in (Status.FAIL, Status.UNKNOWN)
              and not r.gating]
    waived = [r for r in results if r.status is Status.WAIVED]
    handled = [r for r in results if r.status is Status.HANDLED]
    out = []
    if warned:
        out.append(f"{_n(len(warned), 'finding does', 'findings do')} not block under "
                   f"this profile (warnings: {_ids(warned)})")
    if waived:
        out.append(f"{_n(len(waived), 'finding is', 'findings are')} waived by a policy "
                   f"file ({_ids(waived)})")
    if handled:
        out.append(f"{_n(len(handled), 'finding is', 'findings are')} handled by the "
                   f"confinement of ztsa exec ({_ids(handled)})")
    return out


def render_warnings(report: Report, *, color: bool = False) -> str:
    """What `ztsa exec` says on stderr when its gate passes: the repository's hygiene
    warnings (the rules it ran for them; nothing of the machine), or nothing."""
    # the generated index names each rule's nature: loading every rule module to learn
    # it would cost each `ztsa exec` the imports its gate avoided
    from ztsa.rules._index import RULES as index

    warned = [r for r in report.results if r.status in (Status.FAIL, Status.UNKNOWN)
              and not r.gating and r.id in index
              and index[r.id][2] == Nature.HYGIENE.value]
    if not warned:
        return ""
    # a line each: this is said before every command, and `ztsa check` has the rest
    out = [f"ztsa: the gate passed (profile {report.profile.value}); "
           f"{_n(len(warned), 'warning')} about the repository, which never block "
           "(`ztsa check` shows the evidence and the fix):"]
    for r in warned:
        _finding(out, r, color, fix=False, most=0)
    return "\n".join(out) + "\n"


def render_text(report: Report, *, color: bool = False,
                machine: MachineView | None = None) -> str:
    out: list[str] = []
    order = {Status.FAIL: 0, Status.UNKNOWN: 0, Status.WAIVED: 1, Status.HANDLED: 1,
             Status.PASS: 2}
    ranked = sorted(report.results, key=lambda r: (not r.blocks, order[r.status], r.id))
    shown = [r for r in ranked if r.status is not Status.PASS]
    profile = report.profile.value

    def about(r: Result) -> bool:
        if machine is not None:
            return r.id in machine.machine
        from ztsa.output import about_machine

        return about_machine(r, report.path)

    def heading(text: str) -> None:
        out.append(_paint(text, "bold", color))

    # 1. the repository
    repo = [r for r in shown if not about(r)]
    heading(f"The repository ({printable(report.path)}), under profile {profile}:")
    for r in repo:
        _finding(out, r, color)
    repo_blocking = [r for r in repo if r.blocks]
    if repo_blocking:
        out.append(f"repository: FAILED under profile {profile}: "
                   f"{_n(len(repo_blocking), 'blocking finding')} ({_ids(repo_blocking)})")
    else:
        why = _not_blocking(repo)
        out.append(f"repository: passes under profile {profile}: "
                   + ("; ".join(why) if why else "no finding"))

    # 2. the machine: what ztsa exec handles here, and what it cannot
    mach = [r for r in shown if about(r)]
    out.append("")
    if machine is None:
        heading("This machine (the environment a command runs in here):")
        for r in mach:
            _finding(out, r, color)
        if not mach:
            out.append("  no finding")
        handled: list[Result] = []
    else:
        handled = [r for r in mach if r.status is Status.HANDLED or r.id in machine.handled]
        cannot = [r for r in mach if r not in handled]
        if machine.running:
            heading("This machine: handled by the confinement of this ztsa exec run "
                    "(the command does not run with these):")
        else:
            heading("This machine: what ztsa exec would handle here (its confinement "
                    "removes these for the command it runs):")
        for r in handled:
            control = machine.handled.get(r.id)
            _finding(out, r, color, note=f"under ztsa exec: {control}" if control else "",
                     fix=False, most=3)
        if not handled:
            out.append("  nothing")
        heading("This machine: what ztsa exec cannot handle here:")
        if machine.missing and not machine.running:  # else EXEC001 says it
            out.append("  this kernel lacks: " + "; ".join(machine.missing))
            if machine.refuses:
                out.append(f"  so under profile {profile} ztsa exec refuses to run here "
                           "(EXEC001); --profile dependency or repo runs without them")
        for r in cannot:
            reason = machine.unhandled.get(r.id)
            _finding(out, r, color, note=f"why: {reason}" if reason else "")
        if not cannot:
            out.append("  nothing")

    passed = [r.id for r in ranked if r.status is Status.PASS]
    out.append("")
    if passed:
        out.append(_paint(f"pass   {' '.join(passed)}", "dim", color))
    for n in report.not_run:
        out.append(_paint(f"not run {n.id}: {printable(n.reason)}", "dim", color))

    # 3. the verdict: what blocks, and why the rest does not
    where = f"(profile {profile}, {printable(report.path)})"
    if report.passed:
        why = _not_blocking(shown)
        out.append(f"{_paint('gate PASSED', 'green', color)} {where}: nothing blocks"
                   + ("; " + "; ".join(why) if why else ""))
        return "\n".join(out) + "\n"
    mach_blocking = [r for r in mach if r.blocks]
    parts = [f"{_n(len(repo_blocking), 'blocking finding')} in the repository"
             if repo_blocking else "nothing in the repository blocks"]
    if mach_blocking:
        text = f"{_n(len(mach_blocking), 'blocking finding')} about this machine"
        if machine is not None and not machine.running:
            would = [r for r in mach_blocking if r.id in machine.handled]
            if machine.refuses:
                text += (f" (ztsa exec would handle {len(would)} of them, but under profile "
                         f"{profile} it refuses to run on this kernel: EXEC001)")
            elif len(would) == len(mach_blocking) and not repo_blocking:
                text += (" (ztsa exec would handle all of them here: run your agent and "
                         "commands under `ztsa exec`, where this gate passes)")
            elif len(would) == len(mach_blocking):
                text += " (ztsa exec would handle all of them here)"
            elif would:
                text += f" (ztsa exec would handle {len(would)} of them here)"
            else:
                text += " (ztsa exec would handle none of them here)"
        parts.append(text)
    else:
        parts.append("nothing about this machine blocks")
    if machine is not None and machine.running and handled:
        parts.append(f"ztsa exec handles {_n(len(handled), 'other finding')} about this "
                     "machine in this run")
    warned = [r for r in shown if r.status in (Status.FAIL, Status.UNKNOWN) and not r.gating]
    if warned:
        parts.append(f"{_n(len(warned), 'warning does', 'warnings do')} not block under "
                     "this profile")
    out.append(f"{_paint('gate FAILED', 'red', color)} {where}: " + "; ".join(parts))
    return "\n".join(out) + "\n"
