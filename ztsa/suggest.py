"""`ztsa policy suggest AUDIT.jsonl`: the smallest policy that would have let a run pass.

Reads an audit log (docs/audit-schema.json) and turns each denial into the entry that
allows it, with a comment naming the process that needed it:
- a refused name (a `deny` of `syscall: dns`) -> `net.allow` of the name (any port: the
  port is not known when the name never resolved);
- a refused connect or send to an address -> `net.allow` of that address and port, for
  the program that made it (`binaries`, from the run's exec lines);
- a refused Unix socket -> `net.unix`;
- a write refused outside the writable places -> `fs.allow_write` of the nearest
  existing directory;
- a read the kernel refused -> `fs.allow_read`.
What stays protected whatever a policy says (agent files, git control files) is listed
as a comment, never suggested. The output is TOML for a policy file (docs/policy.md);
`ztsa policy check` reads it."""

from __future__ import annotations

import json
import os

from ztsa.printable import printable
from ztsa.sandbox.policy import is_host_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class SuggestError(ValueError):
    pass


def _events(path: str, run: str | None) -> list[dict[str, Any]]:
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    e = json.loads(line)
                except ValueError:
                    raise SuggestError(f"{path}:{number}: not a JSON line") from None
                if not isinstance(e, dict) or e.get("schema") != "ztsa.audit/v1":
                    raise SuggestError(f"{path}:{number}: not a ztsa audit event")
                out.append(e)
    except OSError as exc:
        raise SuggestError(f"cannot read {path}: {exc.strerror}") from None
    runs = list(dict.fromkeys(e.get("run") for e in out))
    if run is None and len(runs) > 1:
        raise SuggestError(f"{path} holds {len(runs)} runs; choose one with --run "
                           f"({', '.join(str(r) for r in runs)})")
    return [e for e in out if run is None or e.get("run") == run]


def _existing_dir(path: str) -> str:
    d = os.path.dirname(path.rstrip("/")) or "/"
    while not os.path.isdir(d) and d != "/":
        d = os.path.dirname(d)
    return d


def _toml(s: str) -> str:
    return json.dumps(s)  # a TOML basic string is a JSON string for these


def suggest(path: str, run: str | None = None) -> str:
    events = _events(path, run)
    programs: dict[int, str] = {}
    for e in events:
        if e.get("event") == "exec" and isinstance(e.get("pid"), int) and e.get("executable"):
            programs[e["pid"]] = str(e["executable"])
    net: dict[str, tuple[set[str], list[str]]] = {}  # spec -> (programs, why)
    unix: dict[str, list[str]] = {}
    write: dict[str, list[str]] = {}
    read: dict[str, list[str]] = {}
    kept: list[str] = []
    for e in events:
        if e.get("event") != "deny":
            continue
        call, pid = str(e.get("syscall", "")), e.get("pid")
        prog = programs.get(pid) if isinstance(pid, int) else None
        who = f"{call} by pid {pid}" + (f" ({prog})" if prog else "")
        rule = str(e.get("rule", ""))
        if call == "dns" and e.get("name"):
            if "denied by" in rule or "policy denies" in rule:
                kept.append(f"{e['name']}: {rule}")
                continue
            if not is_host_name(str(e["name"])):
                kept.append(f"{e['name']}: an address asked as a name (a rule for it "
                            "would open that address on every port)")
                continue
            net.setdefault(str(e["name"]), (set(), []))[1].append(f"{who}, {e.get('type')}")
        elif e.get("family") in ("inet", "inet6") and e.get("address"):
            entry = net.setdefault(str(e["address"]), (set(), []))
            if prog:
                entry[0].add(os.path.realpath(prog))
            entry[1].append(who)
        elif e.get("family") == "unix" and e.get("address"):
            address = str(e["address"])
            unix.setdefault(address if address.startswith(("/", "@")) else f"@{address}",
                            []).append(who)
        elif e.get("path"):
            p = str(e["path"])
            if "protected" in rule or "agent file" in rule or "git" in rule:
                kept.append(f"{p}: {rule} (stays protected)")
            elif rule.startswith("unreadable"):
                kept.append(f"{p}: {rule} (ztsa keeps it unreadable)")
            elif e.get("access") == "read" or (
                    "access" not in e and ("read" in call or ("Landlock" in rule
                                                              and "read" in rule))):
                read.setdefault(p, []).append(who)
            elif os.path.isabs(p):
                write.setdefault(_existing_dir(p), []).append(f"{who}: {p}")
    return _render(path, run, net, unix, write, read, kept)


def _array(key: str, entries: list[tuple[str, list[str]]]) -> list[str]:
    """KEY = [...] with one commented line per (TOML item, why), in the order given."""
    if not entries:
        return []
    return [f"{key} = [",
            *(f"  {item},  # {printable('; '.join(dict.fromkeys(why))[:300])}"
              for item, why in entries),
            "]"]


def _strings(entries: dict[str, list[str]]) -> list[tuple[str, list[str]]]:
    return [(_toml(p), why) for p, why in sorted(entries.items())]


def _render(path: str, run: str | None, net: dict[str, tuple[set[str], list[str]]],
            unix: dict[str, list[str]], write: dict[str, list[str]],
            read: dict[str, list[str]], kept: list[str]) -> str:
    out = [f"# suggested by `ztsa policy suggest {printable(path)}`"
           + (f" (run {printable(run)})" if run else "")
           + ": what the run's denials would have needed; review each entry"]
    allow = []
    for spec, (progs, why) in sorted(net.items()):
        names = ", ".join(map(_toml, sorted(progs)))
        allow.append((f"{{to = {_toml(spec)}, binaries = [{names}]}}" if progs
                      else _toml(spec), why))
    if net or unix:
        out.append("[net]")
    out += _array("allow", allow)
    out += _array("unix", _strings(unix))
    if write or read:
        out.append("[fs]")
    out += _array("allow_write", _strings(write))
    out += _array("allow_read", _strings(read))
    for k in dict.fromkeys(kept):
        out.append(f"# not suggested: {printable(k)}")
    if len(out) == 1:
        out.append("# nothing was denied")
    return "\n".join(out) + "\n"
