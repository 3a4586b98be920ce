"""Run the rules of a profile and build a report."""

from __future__ import annotations

from ztsa import __version__
from ztsa.context import Context
from ztsa.host import ProbeError
from ztsa.model import Action, NotRun, Outcome, Report, Result, Status
from ztsa.registry import Rule, load_rules


def evaluate(rule: Rule, ctx: Context) -> Outcome:
    """Run one rule; its exception becomes ``unknown`` for that rule only."""
    try:
        outcome = rule.check(ctx)
    except ProbeError as exc:
        return Outcome.unknown(str(exc))
    except Exception as exc:  # a bug in one rule must not pass the gate or stop the others
        return Outcome.unknown(f"rule raised {type(exc).__name__}: {exc}")
    if not isinstance(outcome, Outcome):
        return Outcome.unknown(f"rule returned {type(outcome).__name__}, not an Outcome")
    return outcome


def run(ctx: Context, only: set[str] | None = None) -> Report:
    results: list[Result] = []
    not_run: list[NotRun] = []
    for rule in load_rules().values():
        if only is not None and rule.id not in only:
            continue
        action = rule.action(ctx.profile)
        if action is Action.OFF:
            continue
        if rule.opt_in and not ctx.options.get(rule.opt_in):
            flag = "--" + rule.opt_in.replace("_", "-")
            not_run.append(NotRun(rule.id, f"opt-in: run with {flag}"))
            continue
        outcome = evaluate(rule, ctx)
        results.append(
            Result(
                id=rule.id,
                slug=rule.slug,
                category=rule.category,
                title=rule.title,
                severity=rule.severity,
                action=action,
                status=outcome.status,
                gating=action is Action.BLOCK and not outcome.advisory,
                message=outcome.message,
                evidence=outcome.evidence,
                fix=rule.fix,
            )
        )
    return Report(
        tool_version=__version__,
        profile=ctx.profile,
        path=ctx.workspace,
        results=tuple(results),
        not_run=tuple(not_run),
    )


__all__ = ["Status", "evaluate", "run"]
