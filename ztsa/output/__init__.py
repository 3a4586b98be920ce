"""Formatters: pure functions from a Report to a string."""

from __future__ import annotations

import enum
import os

from ztsa.model import Category, MachineView, Report, Result, Status


class Format(str, enum.Enum):
    TEXT = "text"
    JSON = "json"
    SARIF = "sarif"
    GITHUB = "github"


def render(report: Report, fmt: Format, *, color: bool = False,
           machine: MachineView | None = None) -> str:
    """machine: what ztsa exec does with the findings about the machine (text only)."""
    if fmt is Format.JSON:
        from ztsa.output.json import render_json

        return render_json(report)
    if fmt is Format.SARIF:
        from ztsa.output.sarif import render_sarif

        return render_sarif(report)
    if fmt is Format.GITHUB:
        from ztsa.output.github import render_github

        return render_github(report)
    from ztsa.output.text import render_text

    return render_text(report, color=color, machine=machine)


def repo_path(path: str | None, workspace: str) -> str | None:
    """PATH relative to the workspace, or None for a path of the machine's (outside the
    workspace): a report shows no file for a finding that is not in the repository."""
    if not path:
        return None
    if not os.path.isabs(path):
        return path
    real, top = os.path.realpath(path), os.path.realpath(workspace)
    return os.path.relpath(real, top) if real.startswith(top + os.sep) else None


def about_machine(r: Result, workspace: str) -> bool:
    """Is R about the machine (the environment a command runs in here), not the
    repository: an environment, network or ztsa exec finding, one ztsa exec handled, or
    one whose files all lie outside the workspace. (ztsa.sandbox.handled.about_machine
    adds the findings its confinement removes.)"""
    if r.status is Status.HANDLED or r.category in (Category.ENV, Category.NET,
                                                      Category.EXEC):
        return True
    paths = [e.path for e in r.evidence if e.path]
    return bool(paths) and all(repo_path(p, workspace) is None for p in paths)
