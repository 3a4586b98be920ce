"""`ztsa policy suggest AUDIT.jsonl`: the smallest policy that would have let a run pass.

Reads an audit log (docs/audit-schema.json) and turns each denial into the entry that
allows it, with a comment naming the process that needed it:
- a refused name (a `deny` of `syscall: dns`) -> `net.allow` of the name (any port: the
  port is not known when the name never resolved); names that are hosts of a network
  preset (ztsa.sandbox.presets) -> that preset (`"@pypi"`), which also opens the hosts
  of it the run had not reached yet (a run refused pypi.org never asks for
  files.pythonhosted.org), on port 443 only;
- a refused connect or send to an address -> `net.allow` of that address and port, for
  the program that made it (`binaries`, from the run's exec lines); never for a
  connection refused at its first bytes (`first_flight`: an address rule would open a
  name's address to every name), which is a comment;
- a refused Unix socket -> `net.unix`;
- a write refused outside the writable places -> `fs.allow_write` of that path itself
  (the file a create names), never a directory above it;
- a read the kernel refused -> `fs.allow_read`.
It never widens: a file-system path is left out, with a comment saying why, when it is
`/`, a home, a credential path, a shell start-up or other persistence file, a directory
holding one of those, or a system directory (or anything under /etc, /usr, ...), and
when the call failed anyway (its result in a --trace-syscalls line; else its directory
does not exist, or a name it would make was there before it). What stays protected
whatever a policy says (agent files, git control files) is listed as a comment, never
suggested. The output is TOML for a policy file (docs/policy.md); `ztsa policy check`
reads it."""

from __future__ import annotations

import ast
import bisect
import json
import os
import stat

from ztsa.printable import printable
from ztsa.rules.fs.fs007_persistence_files_writable import IN_HOME as PERSISTENCE
from ztsa.sandbox.agents import AGENTS
from ztsa.sandbox.landlock import CREDENTIALS
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


# What a suggestion never names, whatever the log says. Relative to a home: the
# credential paths ztsa keeps unreadable (landlock.CREDENTIALS, FS002's list) and the
# agents' whole state directories and copied files (their logins and settings); the
# shell's start-up files; the other files FS007 names, which run code later.
HOME_CREDENTIALS = tuple(dict.fromkeys(
    [*CREDENTIALS, *(a.state for a in AGENTS.values()),
     *(c for a in AGENTS.values() for c in a.copies)]))
SHELL_STARTUP = (".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
                 ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".kshrc",
                 ".mkshrc", ".cshrc", ".tcshrc", ".login", ".logout", ".config/fish")
HOME_PERSISTENCE = tuple(p for p in PERSISTENCE if p not in SHELL_STARTUP)
# never anything beneath these; nor these directories themselves
SYSTEM_TREES = ("/etc", "/usr", "/boot", "/proc", "/sys", "/dev", "/bin", "/sbin", "/lib",
                "/lib32", "/lib64", "/libx32")
SYSTEM_DIRS = ("/var", "/var/tmp", "/var/lib", "/var/log", "/var/cache", "/var/spool",
               "/var/mail", "/tmp", "/run", "/run/user", "/root", "/home", "/opt", "/srv",
               "/mnt", "/media", "/snap")
# calls that make the name they are given: EEXIST when it is there already
MAKES = ("mkdir", "mkdirat", "mknod", "mknodat", "symlink", "symlinkat", "link", "linkat")
SLACK = 1.0  # seconds: a file's ctime (coarse clock) against an event's time


def _homes(events: list[dict[str, Any]]) -> set[str]:
    """The user's home ($HOME and the password database's), root's, and each HOME an
    event of the run names (the tree's private one)."""
    homes = {os.environ.get("HOME", ""), os.path.expanduser("~"), "/root",
             *(str(e.get("home", "")) for e in events if e.get("event") == "env")}
    try:
        import pwd

        homes.add(pwd.getpwuid(os.getuid()).pw_dir)
    except (ImportError, KeyError):
        pass
    out = set()
    for h in homes:
        if os.path.isabs(h) and os.path.normpath(h) != "/":
            out |= {os.path.normpath(h), os.path.realpath(h)}
    return out


def _under(rel: str, entry: str) -> bool:
    return rel == entry or rel.startswith(entry + "/")


def _sensitive(path: str, homes: set[str]) -> str | None:
    """Why an entry for path (normal and absolute) would widen the policy, or None."""
    if path == "/":
        return "the root directory"
    for tree in SYSTEM_TREES:
        if path == tree:
            return "a system directory"
        if path.startswith(tree + "/"):
            return f"under {tree}, a system directory"
    parent = os.path.dirname(path)
    if path in SYSTEM_DIRS or parent == "/run/user":
        return "a system directory"
    candidates = set(homes)
    if parent == "/home" or path.startswith("/home/"):
        candidates.add("/".join(path.split("/")[:3]))
    for home in sorted(candidates, key=len, reverse=True):
        if path == home:
            return "a home directory"
        if not path.startswith(home + "/"):
            continue
        rel = path[len(home) + 1:]
        for entries, what in ((HOME_CREDENTIALS, "a credential path"),
                              (SHELL_STARTUP, "a shell start-up file"),
                              (HOME_PERSISTENCE, "a file that runs code later (FS007)")):
            if any(_under(rel, entry) for entry in entries):
                return what
        for entry in (*HOME_CREDENTIALS, *SHELL_STARTUP, *HOME_PERSISTENCE):
            if entry.startswith(rel + "/"):
                return f"a directory holding {home}/{entry}"
    for home in sorted(candidates):
        if home.startswith(path + "/"):
            return f"a directory holding the home {home}"
    return None


def why_not(path: str, homes: set[str]) -> str | None:
    """Why path is never suggested: as spelt, as read without its dots, and where its
    symbolic links lead."""
    normal = os.path.normpath(path)
    why = _sensitive(normal, homes)
    if why:
        return why
    real = os.path.realpath(normal)
    why = _sensitive(real, homes) if real != normal else None
    return f"it leads to {real}, {why}" if why else None


def _string_args(args: object) -> list[str]:
    """The paths of a --trace-syscalls line: its quoted arguments, whole (not cut)."""
    out = []
    for a in args if isinstance(args, list) else []:
        if isinstance(a, str) and a[:1] in ("'", '"') and a[-1:] == a[:1]:
            try:
                value = ast.literal_eval(a)
            except (ValueError, SyntaxError):
                continue
            if isinstance(value, str):
                out.append(value)
    return out


class _Traced:
    """--trace-syscalls lines: the result of the call a deny line is about, which is
    the first call of the same process and name logged after it (among the next few)
    that names the path (relative: by its last name)."""

    NEXT = 64  # calls of the same process and name looked at after a deny line

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.calls: dict[tuple[object, str], list[tuple[int, object, object]]] = {}
        for i, e in enumerate(events):
            if e.get("event") == "syscall":
                key = (e.get("pid"), str(e.get("name", "")))
                self.calls.setdefault(key, []).append((i, e.get("args"), e.get("result")))

    def result(self, index: int, pid: object, call: str, path: str) -> object:
        """The call's result (a number, or "-ENAME"), or None when no line is found."""
        calls = self.calls.get((pid, call), [])
        start = bisect.bisect_right(calls, index, key=lambda c: c[0])
        for _, args, result in calls[start:start + self.NEXT]:
            for a in _string_args(args):
                if a == path or (not a.startswith("/")
                                 and os.path.basename(a.rstrip("/"))
                                 == os.path.basename(path.rstrip("/"))):
                    return result
        return None


def _there_before(path: str, st: os.stat_result, when: float) -> bool:
    """path was there before `when`: its own ctime is older, or, for a directory, that
    of something it holds (a directory too large to read counts as older)."""
    if st.st_ctime < when - SLACK:
        return True
    if not stat.S_ISDIR(st.st_mode):
        return False
    try:
        with os.scandir(path) as it:
            for n, entry in enumerate(it):
                if n >= 4096 or entry.stat(follow_symlinks=False).st_ctime < when - SLACK:
                    return True
    except OSError:
        return True
    return False


def _failed(e: dict[str, Any], index: int, call: str, path: str, made: set[str],
            traced: _Traced) -> str | None:
    """Why a refused write is no need of the run's: the call failed anyway (or its name
    is one a suggestion would widen by), or None."""
    audited = e.get("enforced") is False  # --audit-only: the call went on after the line
    result = traced.result(index, e.get("pid"), call, path) if audited else None
    if isinstance(result, int):
        return None  # it succeeded: the run needed it
    if isinstance(result, str) and result.startswith("-"):
        return f"the call failed anyway: {result[1:]}"
    normal = os.path.normpath(path)
    parent = os.path.dirname(normal)
    if not os.path.isdir(parent) and parent not in made:
        return "the call failed anyway: ENOENT, its directory does not exist"
    try:
        st = os.lstat(normal)
    except OSError:
        return None
    when = e.get("time")
    if isinstance(when, bool) or not isinstance(when, (int, float)):
        return None
    if not _there_before(normal, st, float(when)):
        return None
    if call in MAKES:
        return "the call failed anyway: EEXIST, the name was there before it"
    if stat.S_ISDIR(st.st_mode):
        return ("a directory there before the run: an entry would open all it holds; "
                "name what the run needs in it")
    return None


def _toml(s: str) -> str:
    return json.dumps(s)  # a TOML basic string is a JSON string for these


def suggest(path: str, run: str | None = None) -> str:
    events = _events(path, run)
    programs: dict[int, str] = {}
    for e in events:
        if e.get("event") == "exec" and isinstance(e.get("pid"), int) and e.get("executable"):
            programs[e["pid"]] = str(e["executable"])
    net: dict[str, tuple[set[str], list[str]]] = {}  # spec -> (programs, why)
    refused_names: set[str] = set()  # the specs of net that are refused names (DNS)
    unix: dict[str, list[str]] = {}
    write: dict[str, list[str]] = {}
    read: dict[str, list[str]] = {}
    kept: list[str] = []
    left: dict[str, str] = {}  # path -> why it is not suggested
    homes = _homes(events)
    traced = _Traced(events)
    made: set[str] = set()  # the directories the run's refused calls would have made
    for index, e in enumerate(events):
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
            refused_names.add(str(e["name"]))
        elif e.get("first_flight"):
            # refused at its first bytes: an address rule for it would open that address
            # (a CDN's, say) to every name; the name it sent is no rule's there
            sent = e.get("server_name")
            kept.append(f"{e.get('address')}: its first bytes "
                        + (f"named {sent}" if sent else f"were {e['first_flight']}")
                        + ", not a name the rules allow there (an address rule would open "
                        "it to every name; a name's HOST:PORT/raw rule lets another "
                        "protocol through)")
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
            if ("protected" in rule or "agent file" in rule or "git" in rule
                    or "on the way to the workspace" in rule):
                kept.append(f"{p}: {rule} (stays protected)")
            elif rule.startswith("unreadable"):
                kept.append(f"{p}: {rule} (ztsa keeps it unreadable)")
            elif e.get("access") == "read" or (
                    "access" not in e and ("read" in call or ("Landlock" in rule
                                                              and "read" in rule))):
                why = (why_not(p, homes) if os.path.isabs(p)
                       else "a relative path: the log does not say where it was")
                if why:
                    left.setdefault(p, why)
                else:
                    read.setdefault(p, []).append(who)
            else:
                # a rename or link the helper refused is one line: "old -> new"
                names = [p]
                if " -> " in p and call.startswith(("rename", "link")):
                    old, _, new = p.partition(" -> ")
                    names = [old, new] if call.startswith("rename") else [new]
                for name in names:
                    why = (why_not(name, homes) if os.path.isabs(name)
                           else "a relative path: the log does not say where it was")
                    why = why or _failed(e, index, call, name, made, traced)
                    if why:
                        left.setdefault(name, why)
                        continue
                    # fs.allow_write takes directories (a Landlock rule on a path that
                    # does not exist grants nothing): a file's own directory, judged
                    # again, so that it is never /, a home or a system directory
                    where = (name if call.startswith("mkdir") or os.path.isdir(name)
                             else os.path.dirname(name))
                    why = why_not(where, homes) if where != name else None
                    if why:
                        left.setdefault(name, f"its directory {where}: {why}")
                        continue
                    write.setdefault(where, []).append(who)
                    if call.startswith("mkdir"):
                        made.add(os.path.normpath(name))
    left = {p: why for p, why in left.items() if p not in write and p not in read}
    return _render(path, run, net, unix, write, read, kept, left, refused_names)


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


def _presets(net: dict[str, tuple[set[str], list[str]]], names: set[str]
             ) -> list[tuple[str, list[str]]]:
    """The network presets (ztsa.sandbox.presets) whose hosts are among the refused
    NAMES, as allow entries (each comment names its hosts and what was refused); the
    names they cover leave NET. Names of no preset stay as they are."""
    from ztsa.sandbox import presets

    found: dict[str, list[str]] = {}  # preset -> its refused hosts
    for name in sorted(names):
        for p in presets.of_host(name):
            found.setdefault(p.name, []).append(name)
    out = []
    for preset, refused in sorted(found.items()):
        p = presets.PRESETS[preset]
        why = [f"{', '.join(h.name for h in p.hosts)} (port {presets.PORT} only): "
               + "; ".join(f"{n}: {w}" for n in refused for w in dict.fromkeys(net[n][1]))]
        out.append((_toml(f"@{preset}"), why))
    for name in {n for ns in found.values() for n in ns}:
        del net[name]
    return out


def _render(path: str, run: str | None, net: dict[str, tuple[set[str], list[str]]],
            unix: dict[str, list[str]], write: dict[str, list[str]],
            read: dict[str, list[str]], kept: list[str], left: dict[str, str],
            refused_names: set[str] | None = None) -> str:
    out = [f"# suggested by `ztsa policy suggest {printable(path)}`"
           + (f" (run {printable(run)})" if run else "")
           + ": what the run's denials would have needed; review each entry"]
    net = dict(net)
    allow = _presets(net, refused_names or set())
    for spec, (progs, why) in sorted(net.items()):
        names = ", ".join(map(_toml, sorted(progs)))
        allow.append((f"{{to = {_toml(spec)}, binaries = [{names}]}}" if progs
                      else _toml(spec), why))
    if allow or unix:
        out.append("[net]")
    out += _array("allow", allow)
    out += _array("unix", _strings(unix))
    if write or read:
        out.append("[fs]")
    out += _array("allow_write", _strings(write))
    out += _array("allow_read", _strings(read))
    for k in dict.fromkeys(kept):
        out.append(f"# not suggested: {printable(k)}")
    for p, reason in left.items():
        out.append(f"# left out: {printable(p)} ({printable(reason)})")
    if len(out) == 1:
        out.append("# nothing was denied")
    return "\n".join(out) + "\n"
