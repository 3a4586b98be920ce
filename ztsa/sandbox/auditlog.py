"""The JSON-lines audit log of `ztsa exec` (schema: docs/audit-schema.json)."""

from __future__ import annotations

import os
import time
from collections import Counter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any

SCHEMA = "ztsa.audit/v1"


TOLD_MAX = 64  # destinations said at once; the summary names the rest (as the helper)


class AuditLog:
    def __init__(self, stream: IO[str] | None,
                 secrets: dict[str, str] | None = None, ocsf: bool = False) -> None:
        """secrets: --secret's NAME -> value; a value (of 4 bytes or more) in any string
        of a line is written as "[secret NAME]". ocsf (--audit-format ocsf): the lines
        (ztsa's and the helper's) go to a memfd of ztsa's own, and `stream` gets them as
        OCSF events when the run ends (ztsa.output.ocsf)."""
        self.ocsf_to = stream if ocsf else None
        if stream is not None and ocsf:
            import fcntl

            fd = os.memfd_create("ztsa-audit", os.MFD_CLOEXEC)
            # every line appended, whatever offset ztsa's buffered file or the helper,
            # which writes to the same open file, last left
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_APPEND)
            stream = os.fdopen(fd, "w+", encoding="utf-8")
        self.stream = stream
        self.secrets = {v: f"[secret {k}]" for k, v in (secrets or {}).items() if len(v) >= 4}
        self.counts: Counter[str] = Counter()
        # one ID per run in every line, so that the logs of many runs can share a file
        self.run = os.urandom(8).hex()
        self.pid = os.getpid()
        # the first denials ztsa itself decided, for the summary line: (call, what, rule)
        self.first_denials: list[tuple[str, str, str]] = []
        self.tell = False  # say a refused destination on stderr at once (not --quiet)
        self.told: set[str] = set()
        if stream is not None:  # json's import is paid only by runs that write a log
            import json

            self._dumps = json.JSONEncoder(separators=(",", ":")).encode

    @property
    def enabled(self) -> bool:
        """Is anyone reading the details? (Counts are kept either way.)"""
        return self.stream is not None

    def note_denial(self, call: str, what: str, rule: str) -> None:
        """A denial ztsa itself decided: among the summary's first few (each destination
        or path once), and a refused destination said on stderr at once, the first time
        (run.tell_refused)."""
        if len(self.first_denials) < 3 and all(d[1] != what for d in self.first_denials):
            self.first_denials.append((call, what, rule))
        if self.tell and what not in self.told and len(self.told) < TOLD_MAX and (
                call in ("connect", "dns") or call.startswith("send")) and not \
                what.startswith("unix:"):
            self.told.add(what)
            from ztsa.sandbox.run import tell_refused

            tell_refused(call, self.redact(what), self.redact(rule))

    def count(self, kind: str) -> None:
        self.counts[kind] += 1

    def event(self, kind: str, **fields: Any) -> None:
        self.counts[kind] += 1
        if fields.get("decision") == "deny":
            self.counts["denied"] += 1
        if self.stream is None:
            return
        record = {"schema": SCHEMA, "time": round(time.time(), 6), "run": self.run,
                  "event": kind, **fields}
        record.setdefault("pid", self.pid)  # a run-level event: ztsa's own
        line = self._dumps(record)
        if self.secrets and any(v in line or self._dumps(v)[1:-1] in line
                                for v in self.secrets):
            line = self._dumps(self.redact(record))
        self.stream.write(line + "\n")
        self.stream.flush()

    def redact(self, value: Any) -> Any:
        """VALUE with every secret's value in its strings replaced by its name."""
        if isinstance(value, str):
            for secret, name in self.secrets.items():
                value = value.replace(secret, name)
            return value
        if isinstance(value, list):
            return [self.redact(v) for v in value]
        if isinstance(value, dict):
            return {k: self.redact(v) for k, v in value.items()}
        return value

    def close(self) -> None:
        if self.stream is not None and self.ocsf_to is not None:
            from ztsa import __version__
            from ztsa.output.ocsf import convert_lines

            self.stream.flush()
            self.stream.seek(0)
            lines = convert_lines(self.stream.readlines(), __version__, os.uname().nodename)
            self.ocsf_to.write("".join(line + "\n" for line in lines))
            self.ocsf_to.close()
        if self.stream is not None:
            self.stream.close()
