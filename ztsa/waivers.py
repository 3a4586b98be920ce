"""Waivers: a finding a person reviewed and accepted, kept visible as `waived`.

A waiver ([[waiver]] in a policy file, ztsa.tiers) names a rule and what it covers: a
path or glob, an environment variable, or a package. A finding is waived only when
every item of its evidence is covered by a waiver that holds: not expired, and, for a
waiver with a sha256, the file still as it was reviewed. A waiver that no longer holds
turns the finding back and the report says why. Nothing is remembered between runs:
every check judges every file afresh."""

from __future__ import annotations

import datetime
import fnmatch
import os
import re

from ztsa.model import Evidence, Result, Status

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ztsa.tiers import Entry, Waiver


def _sha256(path: str) -> str | None:
    import hashlib

    try:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except AttributeError:  # Python 3.10
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def _relative(path: str, workspace: str) -> str:
    if not os.path.isabs(path):
        return path
    real, top = os.path.realpath(path), os.path.realpath(workspace)
    return os.path.relpath(real, top) if real.startswith(top + os.sep) else real


def _covers(w: Waiver, e: Evidence, workspace: str) -> str | None:
    """The file whose hash decides (for a path waiver), "" when none does, None when the
    waiver does not cover this evidence."""
    if w.path:
        if not e.path:
            return None
        rel = _relative(e.path, workspace)
        pattern = w.path if os.path.isabs(w.path) else w.path.removeprefix("./")
        return rel if fnmatch.fnmatchcase(rel, pattern) or rel == pattern else None
    text = e.detail
    if w.env:
        hit = re.search(rf"(?<![\w@/.$-]){re.escape(w.env)}(?![\w-])", text)
    else:  # a package as rules name one: node_modules/NAME, .pnpm/NAME@1, 'NAME', NAME@1
        hit = re.search(rf"(?:(?<=node_modules/)|(?<=\.pnpm/)|(?<=['\"`])|^)"
                        rf"{re.escape(w.package)}(?=[@'\"`\s(]|$)", text)
    return "" if hit else None


def apply(results: tuple[Result, ...], entries: list[Entry], workspace: str,
          today: datetime.date | None = None) -> tuple[Result, ...]:
    """RESULTS with what the waivers cover marked waived (and why not, where one no
    longer holds)."""
    if not entries:
        return results
    today = today or datetime.date.today()
    out = []
    for r in results:
        mine = [e for e in entries if e.value.rule == r.id]  # type: ignore[union-attr]
        if not mine or r.status not in (Status.FAIL, Status.UNKNOWN) or not r.evidence:
            out.append(r)
            continue
        used: list[Entry] = []
        lapsed: list[str] = []
        whole = True
        for ev in r.evidence:
            held = None
            for e in mine:
                w: Waiver = e.value  # type: ignore[assignment]
                target = _covers(w, ev, workspace)
                if target is None:
                    continue
                if w.expires < today:  # type: ignore[operator]
                    lapsed.append(f"the waiver at {e.where} expired on {w.expires}")
                    continue
                if w.sha256 and target:
                    path = target if os.path.isabs(target) else os.path.join(workspace, target)
                    digest = _sha256(path)
                    if digest != w.sha256:
                        lapsed.append(f"the waiver at {e.where} was for {target} as reviewed "
                                      f"(sha256 {w.sha256[:12]}...); it is now "
                                      f"{digest[:12] + '...' if digest else 'unreadable'}")
                        continue
                held = e
                break
            if held is None:
                whole = False
            elif held not in used:
                used.append(held)
        if whole and used:
            why = "; ".join(f"{e.value.reason} ({e.where}, until "  # type: ignore[union-attr]
                            f"{e.value.expires})" for e in used)  # type: ignore[union-attr]
            out.append(r._replace(status=Status.WAIVED, message=f"waived: {why} (was: "
                                  f"{r.message})",
                                  evidence=(*r.evidence, *(Evidence(f"waived by {e.where}")
                                                          for e in used))))
        elif lapsed:
            note = "; ".join(dict.fromkeys(lapsed))
            out.append(r._replace(message=f"{r.message} (not waived: {note})",
                                  evidence=(*r.evidence, Evidence(f"not waived: {note}"))))
        else:
            out.append(r)
    return tuple(out)
