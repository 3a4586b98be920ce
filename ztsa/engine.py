"""Run the rules of a profile and build a report."""

from __future__ import annotations

import contextlib
import gc

from ztsa import __version__
from ztsa.context import Context
from ztsa.host import ProbeError
from ztsa.model import Action, Category, NotRun, Outcome, Report, Result, Status
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
    # The audit builds hundreds of thousands of small objects (a 3,000-package lockfile is
    # 40,000 YAML nodes) and frees them by reference counting; the cycle collector would
    # rescan them dozens of times for nothing (a third of the parse time), so it waits.
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        return _run(ctx, only)
    finally:
        if gc_was_on:
            gc.enable()


def _run(ctx: Context, only: set[str] | None) -> Report:
    results: list[Result] = []
    not_run: list[NotRun] = []
    active = [r for r in load_rules().values()
              if (only is None or r.id in only) and r.action(ctx.profile) is not Action.OFF]
    if any(r.category is Category.SUP for r in active):
        from ztsa.manifests.locks import prefetch

        # large lockfiles: from the parse cache, or parsed by workers meanwhile; it is
        # only a speed-up, so a failure in it leaves the parsing to the rules
        with contextlib.suppress(Exception):
            prefetch(ctx)
    try:
        _run_rules(ctx, active, results, not_run)
    finally:
        from ztsa.manifests.project import parse_cache

        if "parse_cache" in ctx.cache:
            parse_cache(ctx).close()
    return Report(
        tool_version=__version__,
        profile=ctx.profile,
        path=ctx.workspace,
        results=tuple(results),
        not_run=tuple(not_run),
    )


def _run_rules(ctx: Context, active: list[Rule], results: list[Result],
               not_run: list[NotRun]) -> None:
    for rule in active:
        action = rule.action(ctx.profile)
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


__all__ = ["Status", "evaluate", "run"]
