"""The JSON-lines audit log of `ztsa exec` (schema: docs/audit-schema.json)."""

from __future__ import annotations

import os
import time
from collections import Counter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any

SCHEMA = "ztsa.audit/v1"


class AuditLog:
    def __init__(self, stream: IO[str] | None) -> None:
        self.stream = stream
        self.counts: Counter[str] = Counter()
        # one ID per run in every line, so that the logs of many runs can share a file
        self.run = os.urandom(8).hex()
        self.pid = os.getpid()
        # the first denials ztsa itself decided, for the summary line: (call, what, rule)
        self.first_denials: list[tuple[str, str, str]] = []
        if stream is not None:  # json's import is paid only by runs that write a log
            import json

            self._dumps = json.JSONEncoder(separators=(",", ":")).encode

    @property
    def enabled(self) -> bool:
        """Is anyone reading the details? (Counts are kept either way.)"""
        return self.stream is not None

    def note_denial(self, call: str, what: str, rule: str) -> None:
        if len(self.first_denials) < 3:
            self.first_denials.append((call, what, rule))

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
        self.stream.write(self._dumps(record) + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.stream is not None:
            self.stream.close()
