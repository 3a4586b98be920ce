"""Policy in tiers: what `ztsa exec` may allow, from files as well as flags.

1. enterprise: /etc/ztsa/policy.toml ($ZTSA_SYSTEM_POLICY overrides the path);
2. user: $XDG_CONFIG_HOME/ztsa/policy.toml (else ~/.config/ztsa/policy.toml);
3. workspace: .ztsa.toml, else `[tool.ztsa]` of pyproject.toml. Under `untrusted`
   only what tightens counts: its allow entries are ignored and reported as ignored,
   because whoever wrote the repository wrote them;
then the command line; 4. default deny for everything no tier allows.

Allow entries add up across the tiers and the command line. What a tier forbids (a
`deny` list, `minimum_profile`) binds every tier below it and the command line: an
entry or flag that would loosen it is refused (exit 2) and the refusal names the entry
that forbids it, with its file and line. Every entry keeps its file and line
(`ztsa policy show`). A malformed file or an unknown key is an error naming the file,
line and key, never ignored. The schema is docs/policy-schema.json."""

from __future__ import annotations

import os
import re

from ztsa.records import NamedTuple
from ztsa.sandbox.presets import UnknownPreset, is_preset
from ztsa.sandbox.presets import expand as expand_preset

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from ztsa.sandbox.policy import IPNetwork

TIERS = ("enterprise", "user", "workspace")
PROFILES = ("repo", "dependency", "untrusted")  # from the least strict
# section -> key -> kind: "list" of strings, "ports" of integers, "profile", "names"
SCHEMA: dict[str, dict[str, str]] = {
    "net": {"allow": "list", "deny": "list", "unix": "list", "listen": "ports",
            "dns": "list"},
    "fs": {"allow_write": "list", "allow_read": "list", "deny_read": "list",
           "deny_write": "list"},
    "env": {"pass": "names", "deny": "names", "secret": "list"},
    "exec": {"agents": "list", "minimum_profile": "profile"},
    "rules": {"never_waive": "names"},
}
# what a workspace tier may say under untrusted: only what tightens
TIGHTENING = {("net", "deny"), ("fs", "deny_read"), ("fs", "deny_write"), ("env", "deny"),
              ("exec", "minimum_profile"), ("rules", "never_waive")}
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
RULE_ID = re.compile(r"[A-Z]{2,4}[0-9]{3}\Z")


class PolicyFileError(ValueError):
    """A policy file that cannot be used (exit 2): file, line and key in the message."""


class Entry(NamedTuple):
    value: str | int  # a Waiver for ("waiver", "")
    tier: str  # enterprise, user, workspace, or "command line"
    where: str  # FILE:LINE, or the flag
    ignored: str = ""  # why it does not count (a workspace allow under untrusted)
    binaries: tuple[str, ...] = ()  # a net.allow rule for these programs only
    preset: str = ""  # the network preset (@NAME) a net.allow or net.deny host came from

    def origin(self) -> str:
        return f"{self.where} ({self.tier})"


class Tiers(NamedTuple):
    """The merged policy: (section, key) -> its entries, highest tier first."""

    entries: dict[tuple[str, str], list[Entry]]
    files: list[tuple[str, str]]  # (tier, path) read

    def values(self, section: str, key: str) -> list[str | int]:
        return [e.value for e in self.entries.get((section, key), []) if not e.ignored]

    def strings(self, section: str, key: str) -> list[str]:
        return [str(v) for v in self.values(section, key)]

    def ignored(self) -> list[Entry]:
        return [e for es in self.entries.values() for e in es if e.ignored]


SYSTEM_POLICY = "/etc/ztsa/policy.toml"


def enterprise_paths() -> list[str]:
    """/etc/ztsa/policy.toml whenever it exists, and $ZTSA_SYSTEM_POLICY beside it: the
    variable (for tests) adds a file, it never takes the machine's away."""
    extra = os.environ.get("ZTSA_SYSTEM_POLICY")
    return list(dict.fromkeys([SYSTEM_POLICY, *([extra] if extra else [])]))


def user_path(environ: Mapping[str, str] | None = None) -> str:
    """The user policy file, of this process's environment or of `environ` (another's:
    the audited machine's); relative when that names neither XDG_CONFIG_HOME nor HOME."""
    if environ is None:
        environ, home = os.environ, os.path.expanduser("~")
    else:
        home = environ.get("HOME", "")
    base = environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    return os.path.join(base, "ztsa", "policy.toml")


POLICY_MAX = 1 << 20  # a policy file's size at most
MANIFEST_MAX = 8 << 20  # what of a pyproject.toml is searched for [tool.ztsa]


def workspace_path(workspace: str) -> tuple[str, bool] | None:
    """(.ztsa.toml, False), or (pyproject.toml, True) when it has [tool.ztsa]."""
    own = os.path.join(workspace, ".ztsa.toml")
    if os.path.lexists(own):
        return own, False
    pyproject = os.path.join(workspace, "pyproject.toml")
    import stat

    try:  # never blocking on a FIFO planted under the name (a link: _read refuses it)
        fd = os.open(pyproject, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            text = f.read(MANIFEST_MAX).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)
    # a table header on a line of its own (no newline inside the match: linear)
    return (pyproject, True) if re.search(r"^[ \t]*\[tool\.ztsa[.\]]", text, re.M) else None


def _read(path: str, follow: bool = True) -> str:
    """A policy file's text; a workspace's (follow False) only as a regular file of its
    own, never through a link."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK
                     | (0 if follow else os.O_NOFOLLOW))
    except OSError as exc:
        why = "a symbolic link" if exc.errno == 40 else exc.strerror
        raise PolicyFileError(f"{path}: cannot read: {why}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise PolicyFileError(f"{path}: not a regular file")
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(POLICY_MAX + 1)
    finally:
        os.close(fd)
    if len(data) > POLICY_MAX:  # cut, its last entries would be lost without a word
        raise PolicyFileError(f"{path}: larger than {POLICY_MAX >> 20} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise PolicyFileError(f"{path}: not UTF-8 text") from None


def _key_lines(text: str, prefix: str) -> dict[tuple[str, str], int]:
    """(section, key) -> the line defining it (1-based), for tables under PREFIX
    ("" for a policy file, "tool.ztsa." in pyproject.toml); dotted and inline forms
    too (`net.allow = [...]`, `net = {allow = [...]}`)."""
    lines: dict[tuple[str, str], int] = {}
    table = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        header = re.match(r"\[\s*([A-Za-z0-9_.\"' -]+?)\s*\]", line)
        if header and not line.startswith("[["):
            name = header.group(1).replace('"', "").replace("'", "").replace(" ", "")
            table = name[len(prefix):] if name.startswith(prefix) else (
                "" if prefix and name == prefix.rstrip(".") else None)
            if table:
                lines.setdefault((table, ""), number)
            continue
        key = re.match(r"([A-Za-z0-9_.\"'-]+)\s*=", line)
        if key is None or table is None:
            continue
        dotted = key.group(1).replace('"', "").replace("'", "")
        full = f"{table}.{dotted}" if table else dotted
        section, _, name = full.partition(".")
        lines.setdefault((section, name), number)
        if not name:  # `net = {allow = [...]}`
            for inner in re.findall(r"([A-Za-z0-9_]+)\s*=", line[key.end():]):
                lines.setdefault((section, inner), number)
    return lines


def _element_line(text: str, start: int, value: str | int) -> int:
    """The line of an array element VALUE at or after line START (its own line when
    the array spans several)."""
    import json

    needle = json.dumps(value) if isinstance(value, str) else str(value)
    plain = f"'{value}'" if isinstance(value, str) else needle
    for number, raw in enumerate(text.splitlines()[start - 1:], start):
        if needle in raw or plain in raw:
            return number
    return start


def parse(path: str, tier: str, in_pyproject: bool = False,
          workspace: str | None = None) -> dict[tuple[str, str], list[Entry]]:
    """One file's entries. PolicyFileError names the file, line and key."""
    from ztsa.parsing import ParseError, load_toml

    text = _read(path, follow=tier != "workspace")
    try:
        doc = load_toml(text, path)
    except ParseError as exc:  # tomllib names the line and column, or the end
        why = str(exc).split(": ", 1)[-1]
        at_line = re.search(r"at line (\d+)", why)
        line = int(at_line.group(1)) if at_line else len(text.splitlines()) or 1
        raise PolicyFileError(f"{path}:{line}: {why}") from None
    prefix = "tool.ztsa." if in_pyproject else ""
    if in_pyproject:
        tool = doc.get("tool", {})
        doc = tool.get("ztsa", {}) if isinstance(tool, dict) else {}
        if not isinstance(doc, dict):
            raise PolicyFileError(f"{path}: [tool.ztsa] is not a table")
    lines = _key_lines(text, prefix)

    def at(section: str, key: str = "") -> str:
        line = lines.get((section, key)) or lines.get((section, "")) or 1
        return f"{path}:{line}"

    out: dict[tuple[str, str], list[Entry]] = {}
    for section, table in doc.items():
        if section == "waiver":
            out[("waiver", "")] = _waivers(path, text, prefix, table, tier, workspace)
            continue
        if section not in SCHEMA:
            raise PolicyFileError(f"{at(section)}: unknown section [{prefix}{section}] "
                                  f"(known: {', '.join(SCHEMA)})")
        if not isinstance(table, dict):
            raise PolicyFileError(f"{at(section)}: {prefix}{section} must be a table")
        for key, value in table.items():
            kind = SCHEMA[section].get(key)
            where = at(section, key)
            if kind is None:
                raise PolicyFileError(f"{where}: unknown key {key!r} in [{prefix}{section}] "
                                      f"(known: {', '.join(SCHEMA[section])})")
            items = [value] if kind == "profile" else value
            if not isinstance(items, list):
                raise PolicyFileError(f"{where}: {section}.{key} must be an array")
            entries = []
            for item in items:
                binaries: tuple[str, ...] = ()
                if isinstance(item, dict) and (section, key) == ("net", "allow"):
                    line = _element_line(text, int(where.rsplit(":", 1)[1]),
                                         str(item.get("to", "")))
                    item, binaries = _program_rule(item, f"{path}:{line}")
                line = _element_line(text, int(where.rsplit(":", 1)[1]), item) if isinstance(
                    item, (str, int)) else int(where.rsplit(":", 1)[1])
                _check(kind, section, key, item, f"{path}:{line}")
                if section == "net" and key in ("allow", "deny") and is_preset(str(item)):
                    # a preset is its hosts from here on, each keeping the entry's line
                    entries += [Entry(spec, tier, f"{path}:{line}", binaries=binaries,
                                      preset=str(item)) for spec in expand_preset(str(item))]
                    continue
                try:
                    value_ = _expand(section, key, item, tier, workspace)
                except PolicyFileError as exc:
                    raise PolicyFileError(f"{path}:{line}: {exc}") from None
                entries.append(Entry(value_, tier, f"{path}:{line}", binaries=binaries))
            out[(section, key)] = entries
    return out


def _program_rule(item: dict[str, object], where: str) -> tuple[object, tuple[str, ...]]:
    """{to = "SPEC", binaries = ["/usr/bin/node", ...]}: (SPEC, the programs resolved as
    the kernel names an executable at exec)."""
    unknown = sorted(set(item) - {"to", "binaries"})
    if unknown:
        raise PolicyFileError(f"{where}: unknown key {unknown[0]!r} in a net.allow rule "
                              "(known: to, binaries)")
    progs = item.get("binaries")
    if not isinstance(progs, list) or not progs or not all(
            isinstance(p, str) and os.path.isabs(p) for p in progs):
        raise PolicyFileError(f"{where}: net.allow: binaries is a list of absolute paths")
    return item.get("to"), tuple(dict.fromkeys(os.path.realpath(str(p)) for p in progs))


def programs(t: Tiers, flags: list[str]) -> dict[str, tuple[str, ...]]:
    """The net.allow specs that are for listed programs only: those that every entry
    naming them restricts (a flag or an unrestricted entry opens the spec to all)."""
    out: dict[str, tuple[str, ...]] = {}
    open_ = {spec for flag in flags for spec in _flag_specs(flag)}
    for e in t.entries.get(("net", "allow"), []):
        if e.ignored:
            continue
        if not e.binaries:
            open_.add(str(e.value))
        else:
            out[str(e.value)] = tuple(dict.fromkeys([*out.get(str(e.value), ()), *e.binaries]))
    return {k: v for k, v in out.items() if k not in open_}


def _flag_specs(flag: str) -> tuple[str, ...]:
    """An --allow-net flag's specs: a preset's hosts (an unknown one, refused by
    merge_exec, as written)."""
    try:
        return expand_preset(flag)
    except UnknownPreset:
        return (flag,)


WAIVER_KEYS = {"rule", "path", "env", "package", "reason", "expires", "sha256"}


class Waiver(NamedTuple):
    """A [[waiver]]: RULE's findings covered by PATH (a glob), ENV or PACKAGE, for REASON,
    until EXPIRES (a date, the last day it holds); SHA256: the file as reviewed."""

    rule: str
    reason: str
    expires: object  # datetime.date
    path: str = ""
    env: str = ""
    package: str = ""
    sha256: str = ""


def _waivers(path: str, text: str, prefix: str, tables: object, tier: str,
             workspace: str | None) -> list[Entry]:
    import datetime

    headers = [n for n, raw in enumerate(text.splitlines(), 1)
               if re.match(rf"\s*\[\[\s*{re.escape(prefix)}waiver\s*\]\]", raw)]
    if not isinstance(tables, list):
        raise PolicyFileError(f"{path}:1: waiver must be an array of tables ([[waiver]])")
    out = []
    for i, w in enumerate(tables):
        where = f"{path}:{headers[i] if i < len(headers) else 1}"
        if not isinstance(w, dict):
            raise PolicyFileError(f"{where}: [[waiver]] must be a table")
        unknown = sorted(set(w) - WAIVER_KEYS)
        if unknown:
            raise PolicyFileError(f"{where}: unknown key {unknown[0]!r} in [[waiver]] "
                                  f"(known: {', '.join(sorted(WAIVER_KEYS))})")
        for key in ("rule", "reason", "expires"):
            if key not in w:
                raise PolicyFileError(f"{where}: [[waiver]] needs {key!r}")
        if not isinstance(w["rule"], str) or not RULE_ID.match(w["rule"]):
            raise PolicyFileError(f"{where}: waiver.rule: {w['rule']!r} is not a rule ID")
        if not isinstance(w["reason"], str) or not w["reason"].strip():
            raise PolicyFileError(f"{where}: waiver.reason: say why it is waived")
        if not isinstance(w["expires"], datetime.date) or isinstance(
                w["expires"], datetime.datetime):
            raise PolicyFileError(f"{where}: waiver.expires: a date (expires = 2027-03-01), "
                                  f"not {w['expires']!r}")
        covers = [k for k in ("path", "env", "package") if k in w]
        if len(covers) != 1:
            raise PolicyFileError(f"{where}: [[waiver]] covers exactly one of path, env or "
                                  "package")
        value = w[covers[0]]
        if not isinstance(value, str) or not value or "\0" in value:
            raise PolicyFileError(f"{where}: waiver.{covers[0]}: a non-empty string")
        if covers[0] == "env" and not NAME.match(value):
            raise PolicyFileError(f"{where}: waiver.env: {value!r} is not a variable name")
        sha = w.get("sha256", "")
        if sha and (covers[0] != "path" or not isinstance(sha, str)
                    or not re.fullmatch(r"[0-9a-f]{64}", sha)):
            raise PolicyFileError(f"{where}: waiver.sha256: 64 lowercase hex digits, for a "
                                  "path waiver")
        if covers[0] == "path" and tier != "workspace":
            value = os.path.expanduser(value)
        waiver = Waiver(w["rule"], w["reason"].strip(), w["expires"],
                        **{covers[0]: value}, sha256=sha)
        out.append(Entry(waiver, tier, where))  # type: ignore[arg-type]
    return out


def waivers(t: Tiers) -> list[Entry]:
    """The waivers that count; PolicyFileError for one of a rule a tier at or above
    its own forbids waiving (rules.never_waive)."""
    never = t.entries.get(("rules", "never_waive"), [])
    out = []
    for e in t.entries.get(("waiver", ""), []):
        if e.ignored:
            continue
        w: Waiver = e.value  # type: ignore[assignment]
        for n in never:
            if not n.ignored and n.value == w.rule and RANK[n.tier] <= RANK[e.tier]:
                raise PolicyFileError(f"{e.where} ({e.tier}) is refused: a waiver of "
                                      f"{w.rule}, which {n.origin()} says may never be "
                                      "waived")
        out.append(e)
    return out


def _check(kind: str, section: str, key: str, item: object, where: str) -> None:
    what = f"{where}: {section}.{key}"
    if kind == "ports":
        if not isinstance(item, int) or isinstance(item, bool) or not 0 < item < 65536:
            raise PolicyFileError(f"{what}: {item!r} is not a port (1-65535)")
        return
    if not isinstance(item, str) or not item or "\0" in item:
        raise PolicyFileError(f"{what}: {item!r} is not a non-empty string")
    if kind == "profile" and item not in PROFILES:
        raise PolicyFileError(f"{what}: {item!r} is not a profile ({', '.join(PROFILES)})")
    if kind == "names":
        pattern = RULE_ID if section == "rules" else NAME
        if not pattern.match(item):
            raise PolicyFileError(f"{what}: {item!r} is not a "
                                  f"{'rule ID' if section == 'rules' else 'variable name'}")
    if (section, key) == ("exec", "agents"):
        from ztsa.sandbox.agents import AGENTS

        if item not in AGENTS:
            raise PolicyFileError(f"{what}: {item!r} is not an agent ({', '.join(AGENTS)})")
    if section == "net" and key in ("allow", "deny"):
        from ztsa.sandbox.policy import PolicyError, parse_net

        try:
            if is_preset(item):
                expand_preset(item)
            else:
                parse_net(item, resolve_names=False)
        except (PolicyError, UnknownPreset) as exc:
            raise PolicyFileError(f"{what}: {exc}") from None
    if section == "net" and key == "dns":
        import ipaddress

        try:
            ipaddress.ip_address(item)
        except ValueError:
            raise PolicyFileError(f"{what}: {item!r} is not an IP address") from None
    if section == "env" and key == "secret":
        from ztsa.sandbox.secret import NAME as SECRET_NAME

        if not SECRET_NAME.match(item.partition("=")[0]):
            raise PolicyFileError(f"{what}: {item!r}: expected NAME[=env:|file:|cmd:...]")


def _expand(section: str, key: str, item: str | int, tier: str,
            workspace: str | None) -> str | int:
    """Paths: ~ is the caller's home; a relative path of a workspace tier is the
    workspace's, of another tier an error."""
    if section != "fs" and not (section == "net" and key == "unix"):
        return item
    text = str(item)
    if text.startswith("@"):  # an abstract Unix socket
        return text
    text = os.path.expanduser(text)
    if not os.path.isabs(text):
        if tier != "workspace" or workspace is None:
            raise PolicyFileError(f"{section}.{key}: {item!r}: write an absolute path or "
                                  "~/...")
        text = os.path.join(workspace, text)
    return os.path.normpath(text)


def load(workspace: str | None, profile: str | None) -> Tiers:
    """Every tier that exists, merged (highest first). profile: the run's, which decides
    what a workspace tier may say (None: show everything, ignore nothing)."""
    entries: dict[tuple[str, str], list[Entry]] = {}
    files: list[tuple[str, str]] = []
    sources: list[tuple[str, str, bool]] = [("enterprise", p, False)
                                            for p in enterprise_paths()]
    user = user_path()
    # a user file the tree could have written (in the workspace) is the repository's
    in_ws = workspace is not None and _inside(os.path.realpath(user),
                                              os.path.realpath(workspace))
    sources.append(("workspace" if in_ws else "user", user, False))
    found = workspace_path(workspace) if workspace else None
    if found:
        sources.append(("workspace", found[0], found[1]))
    for tier, path, in_pyproject in sources:
        if not os.path.lexists(path):
            continue
        files.append((tier, path))
        for k, es in parse(path, tier, in_pyproject, workspace).items():
            if tier == "workspace" and profile == "untrusted" and k not in TIGHTENING:
                es = [e._replace(ignored="untrusted: the repository's own policy may only "
                                 "tighten") for e in es]
            elif tier == "workspace" and k in (("env", "secret"), ("exec", "agents")):
                # a preset shows the agent's login to the tree
                es = [e._replace(ignored="a repository does not choose which of your "
                                 "credentials a run gets") for e in es]
            entries.setdefault(k, []).extend(es)
    return Tiers(entries, files)


def minimum_profile(t: Tiers) -> Entry | None:
    """The strictest minimum_profile any tier sets."""
    best = None
    for e in t.entries.get(("exec", "minimum_profile"), []):
        if not e.ignored and (best is None or PROFILES.index(str(e.value))
                              > PROFILES.index(str(best.value))):
            best = e
    return best


def check_profile(t: Tiers, profile: str) -> None:
    floor = minimum_profile(t)
    if floor is not None and PROFILES.index(profile) < PROFILES.index(str(floor.value)):
        raise PolicyFileError(f"--profile {profile} is below the minimum profile "
                              f"{floor.value!r} set by {floor.origin()}")


RANK = {"enterprise": 0, "user": 1, "workspace": 2, "command line": 3}
# exec's flags and the policy keys that add to them
FLAGS = {"allow_net": ("net", "allow", "--allow-net"),
         "allow_unix": ("net", "unix", "--allow-unix"),
         "allow_listen": ("net", "listen", "--allow-listen"),
         "dns": ("net", "dns", "--dns"),
         "allow_write": ("fs", "allow_write", "--allow-write"),
         "allow_read": ("fs", "allow_read", "--allow-read"),
         "env_specs": ("env", "pass", "--env"),
         "secrets": ("env", "secret", "--secret"),
         "agents": ("exec", "agents", "--agent")}


def _inside(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def _with_aliases(networks: tuple[IPNetwork, ...]) -> list[IPNetwork]:
    """The networks, and loopback for each that holds the unspecified address: a connect
    to 0.0.0.0 or :: reaches the host's own loopback."""
    import ipaddress

    out: list[IPNetwork] = list(networks)
    for n in networks:
        if n.version == 4 and ipaddress.ip_address("0.0.0.0") in n:
            out.append(ipaddress.ip_network("127.0.0.1/32"))
        elif n.version == 6 and (ipaddress.ip_address("::") in n
                                 or ipaddress.ip_address("::ffff:0.0.0.0") in n):
            out += [ipaddress.ip_network("::1/128"), ipaddress.ip_network("::ffff:127.0.0.1/128")]
    return out


def _net_conflict(allow: str, deny: str) -> bool:
    """Does the allow rule open what the deny entry forbids, as far as can be known
    before the run (names and wildcards are checked again as the tree resolves them)?"""
    from ztsa.sandbox.policy import parse_net

    a, d = parse_net(allow, resolve_names=False), parse_net(deny, resolve_names=False)
    if a.port is not None and d.port is not None and a.port != d.port:
        return False
    if a.networks and d.networks:
        return any(x.version == y.version and x.overlaps(y)
                   for x in _with_aliases(a.networks) for y in d.networks)
    if d.networks or not (a.name or a.suffix):
        return False  # an address rule against a name: decided as the tree resolves
    if d.name:
        return a.name == d.name
    suffix = d.suffix or ""
    return bool((a.name and a.name.endswith(suffix)) or (a.suffix and a.suffix.endswith(suffix)))


def merge_exec(t: Tiers, flags: dict[str, list[str]], workspace: str, home: str | None
               ) -> dict[str, list[str]]:
    """Exec's flags with every tier's entries added (highest tier first, the command
    line last), after refusing whatever a higher tier's deny forbids."""
    merged: dict[str, list[Entry]] = {}
    for flag, (section, key, name) in FLAGS.items():
        merged[flag] = [e for e in t.entries.get((section, key), []) if not e.ignored]
        for v in flags.get(flag, []):
            if flag == "allow_net" and is_preset(str(v)):
                try:  # --allow-net @NAME is its hosts from here on
                    merged[flag] += [Entry(spec, "command line", f"{name} {v}", preset=str(v))
                                     for spec in expand_preset(str(v))]
                except UnknownPreset as exc:
                    raise PolicyFileError(f"{name}: {exc}") from None
            else:
                merged[flag].append(Entry(v, "command line", f"{name} {v}"))

    def deny(section: str, key: str, below: Entry) -> list[Entry]:
        return [d for d in t.entries.get((section, key), [])
                if not d.ignored and RANK[d.tier] < RANK[below.tier]]

    def refuse(what: Entry, by: Entry, why: str) -> None:
        raise PolicyFileError(f"{what.where} ({what.tier}) is refused: {why} "
                              f"{by.value!r}, forbidden by {by.origin()}")

    def spellings(path: str) -> set[str]:
        """A path as written (normalised) and as it really is: a deny entry or a flag
        spelled through a link is both."""
        p = os.path.normpath(os.path.expanduser(path))
        return {p, os.path.realpath(p)}

    def meets(a: str, b: str) -> bool:  # either lies in the other
        return any(_inside(x, y) or _inside(y, x) for x in spellings(a) for y in spellings(b))

    for e in merged["allow_net"]:
        for d in deny("net", "deny", e):
            try:
                conflict = _net_conflict(str(e.value), str(d.value))
            except ValueError as exc:  # a malformed spec: the usage error it is
                raise PolicyFileError(f"{e.where}: {exc}") from None
            if conflict:
                refuse(e, d, "it opens")
    for flag in ("allow_write", "allow_read"):
        for e in merged[flag]:
            keys = ["deny_write"] if flag == "allow_write" else []
            for d in [d for k in [*keys, "deny_read"] for d in deny("fs", k, e)]:
                if meets(str(e.value), str(d.value)):
                    refuse(e, d, "it reaches")
    # the writable places a run always has: the workspace (a denied path may be neither
    # in it nor hold it) and --home
    for where, what in ((workspace, f"--workspace {workspace}"),
                        *(((home, f"--home {home}"),) if home else ())):
        place = Entry(where, "command line", what)
        for d in [*deny("fs", "deny_write", place), *deny("fs", "deny_read", place)]:
            if meets(where, str(d.value)):
                refuse(place, d, "it reaches")
    for flag in ("env_specs", "secrets"):
        for e in merged[flag]:
            name, _, source = str(e.value).partition("=")
            kind, _, arg = source.partition(":")
            for d in deny("env", "deny", e):
                if d.value in (name, arg if flag == "secrets" and kind == "env" else None):
                    refuse(e, d, "it passes")
            if flag == "secrets" and kind == "file":
                for d in deny("fs", "deny_read", e):
                    if meets(arg, str(d.value)):
                        refuse(e, d, "it reads")
            if flag == "secrets" and kind == "cmd":  # its output cannot be judged
                for d in [*deny("fs", "deny_read", e), *deny("env", "deny", e)]:
                    refuse(e, d, "a command's output could hold what a deny names:")
    return {flag: [str(e.value) for e in es] for flag, es in merged.items()}


def denied_env(t: Tiers) -> set[str]:
    return {str(v) for v in t.values("env", "deny")}


def denied_read(t: Tiers) -> list[str]:
    return t.strings("fs", "deny_read")


def show(t: Tiers) -> str:
    """Every entry with the file and line it came from, highest tier first."""
    out = [f"# {tier}: {path}" for tier, path in t.files] or ["# no policy file"]
    for (section, key), es in sorted(t.entries.items()):
        for e in es:
            note = f"  # ignored: {e.ignored}" if e.ignored else ""
            via = f", from {e.preset}" if e.preset else ""
            out.append(f"{section}.{key} = {e.value!r}  ({e.origin()}{via}){note}")
    return "\n".join(out) + "\n"


def check_net(t: Tiers, specs: list[str], where: str) -> None:
    """Refuse specs (added by WHERE, e.g. an agent preset) that a tier's deny forbids."""
    for spec in specs:
        for d in t.entries.get(("net", "deny"), []):
            if not d.ignored and _net_conflict(spec, str(d.value)):
                raise PolicyFileError(f"{where} ({spec}) is refused: it opens "
                                      f"{d.value!r}, forbidden by {d.origin()}")


def check_paths(t: Tiers, paths: list[tuple[str, str]]) -> None:
    """Refuse places a run shows its tree (an agent preset's state: (path, what)) that
    meet a path a tier denies reading or writing."""
    for path, what in paths:
        for d in [*t.entries.get(("fs", "deny_read"), []),
                  *t.entries.get(("fs", "deny_write"), [])]:
            if d.ignored:
                continue
            ours = {os.path.normpath(path), os.path.realpath(path)}
            theirs = {str(d.value), os.path.realpath(str(d.value))}
            if any(_inside(a, b) or _inside(b, a) for a in ours for b in theirs):
                raise PolicyFileError(f"{what} ({path}) is refused: it reaches "
                                      f"{d.value!r}, forbidden by {d.origin()}")
