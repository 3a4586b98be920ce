"""Run the rules of a profile and build a report."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable

from ztsa import __version__
from ztsa.context import Context
from ztsa.host import ProbeError
from ztsa.model import Action, Category, Nature, NotRun, Outcome, Report, Result, Status
from ztsa.registry import Rule, gating_rules, load_rules


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


def run(ctx: Context, only: set[str] | None = None, *, warnings_if_blocked: bool = False,
        verdict: Callable[[tuple[Result, ...]], tuple[Result, ...]] | None = None,
        shown: frozenset[Nature] = frozenset()) -> Report:
    """Run the profile's rules. warnings_if_blocked, for a caller that shows the report
    only when the gate fails (`ztsa exec`): the rules that can block run first, and the
    others, whose results can only be warnings, run only if one of them blocks, so that
    a report that is shown is always whole. A passing report then holds the gating
    rules alone; its verdict is the same, since no warning can fail a gate.
    verdict: how the caller will rewrite the results before judging them (waivers,
    `ztsa exec`'s handled findings); a gating phase that blocks only before it is a
    pass. The results returned are not rewritten. shown: the natures whose rules run in
    the first phase too, though they cannot block (`ztsa exec` shows the hygiene
    warnings of a gate that passes)."""
    # The audit builds hundreds of thousands of small objects (a 3,000-package lockfile is
    # 40,000 YAML nodes) and frees them by reference counting; the cycle collector would
    # rescan them dozens of times for nothing, so it waits.
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        return _run(ctx, only, warnings_if_blocked, verdict, shown)
    finally:
        if gc_was_on:
            gc.enable()


def _run(ctx: Context, only: set[str] | None, warnings_if_blocked: bool,
         verdict: Callable[[tuple[Result, ...]], tuple[Result, ...]] | None,
         shown: frozenset[Nature]) -> Report:
    results: list[Result] = []
    not_run: list[NotRun] = []

    def wanted(r: Rule) -> bool:
        return (only is None or r.id in only) and r.action(ctx.profile) is not Action.OFF

    first: list[Rule] | None = None  # the rules that can block, when they go first
    if warnings_if_blocked:
        # only their modules are imported, unless the rule index is stale
        gating = gating_rules(ctx.profile, shown)
        if gating is None:
            gating = {r.id: r for r in load_rules().values()
                      if r.action(ctx.profile) is Action.BLOCK or r.nature in shown}
        first = [r for r in gating.values() if wanted(r)]
    try:
        if first is not None:
            _run_phase(ctx, first, results, not_run)
        judged = verdict(tuple(results)) if verdict is not None else results
        if first is not None and not any(r.blocks for r in judged):
            active = first  # the gate passed: the rest could only warn, and is not shown
        else:
            active = [r for r in load_rules().values() if wanted(r)]
            done = {r.id for r in first or ()}
            _run_phase(ctx, [r for r in active if r.id not in done], results, not_run)
    finally:
        if "parse_cache" in ctx.cache:  # opened by a rule that read a manifest
            from ztsa.manifests.project import parse_cache

            parse_cache(ctx).close()
    order = {r.id: i for i, r in enumerate(sorted(active, key=lambda r: r.id))}
    return Report(
        tool_version=__version__,
        profile=ctx.profile,
        path=ctx.workspace,
        results=tuple(sorted(results, key=lambda r: order[r.id])),
        not_run=tuple(sorted(not_run, key=lambda n: order[n.id])),
    )


def _run_phase(ctx: Context, rules: list[Rule], results: list[Result],
               not_run: list[NotRun]) -> None:
    if any(r.category is Category.SUP for r in rules):
        from ztsa.manifests.locks import prefetch

        # large lockfiles: from the parse cache, or parsed by workers meanwhile; it is
        # only a speed-up, so a failure in it leaves the parsing to the rules
        with contextlib.suppress(Exception):
            prefetch(ctx)
    _run_rules(ctx, rules, results, not_run)


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
