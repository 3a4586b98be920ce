"""Under `ztsa exec`, the gate judges the environment CMD will run in.

An environment finding about ztsa's own process (root, no seccomp filter, no NoNewPrivs,
capabilities, a writable system, secrets in the environment, ...) says nothing about CMD
when the confinement that `ztsa exec` is about to apply removes it. Such a finding is
reported as `handled`, naming the control and keeping the rule's evidence, and does not
block; a finding the confinement does not remove still blocks, and so does one whose
control this kernel lacks (`Confinement.missing`: the controls controls.py names).
`ztsa check` alone judges the machine as it is, unchanged; its text report only says,
from the same handlers (`view`, with exec's defaults and this kernel's probe), which of
its findings about the machine `ztsa exec` would handle here, and why not the others."""

from __future__ import annotations

from ztsa.model import Category, Evidence, MachineView, Result, Status
from ztsa.records import NamedTuple
from ztsa.sandbox.controls import PIDNS_MISSING, USERNS_MISSING

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Handler = Callable[[Result, "Confinement"], "str | None"]


class Confinement(NamedTuple):
    """What the run will have (from the kernel probe and the command line)."""

    missing: list[str]  # controls.missing_controls(offer)
    keep_caps: list[str]  # --keep-cap
    env_names: list[str]  # variables --env passes or sets
    allow_unix: list[str]  # --allow-unix
    net_addresses: list[str]  # networks --allow-net rules open on every port
    wildcards: bool = False  # a *.domain rule: its addresses are learnt at run time
    writable: tuple[str, ...] = ()  # --allow-write and --home outside the workspace
    secrets: tuple[str, ...] = ()  # variables --secret gives CMD, deliberately
    shown: tuple[str, ...] = ()  # credential files --agent shows its agent, read-only
    # (network, port) of --allow-net rules that name one port: a rule for a test's own
    # listener on 127.0.0.1:PORT opens no other service of the host's loopback
    net_ports: tuple[tuple[str, int], ...] = ()

    @property
    def landlock(self) -> bool:
        return not any(m.startswith("Landlock (") for m in self.missing)

    @property
    def namespaces(self) -> bool:
        return USERNS_MISSING not in self.missing

    @property
    def pid_namespace(self) -> bool:
        return PIDNS_MISSING not in self.missing

    def allows_net(self, *networks: str, ports: frozenset[int] | None = None) -> bool:
        """Does an --allow-net rule open one of these networks (a wildcard may), on one
        of these ports (None: the finding does not say which, so any port counts)?"""
        if self.wildcards:
            return True
        import ipaddress  # only with --allow-net rules: off most runs' start-up

        rules = [*((a, None) for a in self.net_addresses), *self.net_ports]
        for literal, port in rules:
            try:
                net = ipaddress.ip_network(literal, strict=False)
            except ValueError:
                continue
            if port is not None and ports is not None and port not in ports:
                continue
            if any(net.version == n.version and net.overlaps(n)
                   for n in map(ipaddress.ip_network, networks)):
                return True
        return False



# connecting to the unspecified address reaches the host's own
LOOPBACK = ("127.0.0.0/8", "::1/128", "0.0.0.0/32", "::/128")
LINK_LOCAL = ("169.254.0.0/16", "fe80::/10", "fd00:ec2::/32")
ENV_EVIDENCE = "environment variable "
PASSED = ("PATH", "LANG", "TERM", "TZ", "USER", "HOME", "TMPDIR")  # run.BASE_ENV and ours


def _always(control: str) -> Handler:
    return lambda r, c: control


def _paths_of(r: Result) -> list[str]:
    out = [e.path for e in r.evidence if e.path and e.path.startswith("/")]
    out += [e.detail.split(" ", 1)[0] for e in r.evidence if e.detail.startswith("/")]
    return out


def _with(control: str, *needs: str, writes: bool = False) -> Handler:
    """needs: the controls it rests on; writes: it rests on what the tree cannot write,
    so a writable place (--allow-write, --home) on or above a path of the finding, or
    under one, gives it back."""
    def handler(r: Result, c: Confinement) -> str | None:
        have = {"landlock": c.landlock, "namespaces": c.namespaces,
                "pid_namespace": c.pid_namespace}
        if not all(have[n] for n in needs):
            return None
        if writes and any(w == p or p.startswith(w.rstrip("/") + "/")
                          or w.startswith(p.rstrip("/") + "/")
                          for w in c.writable for p in _paths_of(r)):
            return None
        return control
    return handler


def _environment(control: str, named_first: bool = False) -> Handler:
    """Variables CMD does not get (it gets PATH, LANG, LC_*, TERM, TZ, USER, its own
    HOME and TMPDIR, and --env): only when every finding is such a variable (evidence
    "environment variable NAME ...", or "NAME ..." for named_first), or one of test data
    the rule reports as advisory."""
    def handler(r: Result, c: Confinement) -> str | None:
        from ztsa.findings import ELSEWHERE_NOTE

        given = []
        for e in r.evidence:
            if e.detail.endswith(ELSEWHERE_NOTE):
                continue  # test data's, advisory (poetry's tests/fixtures sources)
            if named_first:
                name = e.detail.split(" ", 1)[0]
            elif e.detail.startswith(ENV_EVIDENCE):
                name = e.detail[len(ENV_EVIDENCE):].split(" ", 1)[0]
            else:
                return None  # a file (/etc/ld.so.preload, a repository's .npmrc)
            if name in c.secrets:
                given.append(name)
            elif name in c.env_names or name in PASSED or name.startswith("LC_"):
                return None
        if given:  # named on purpose: the person's choice, shown as such
            return (f"{control}, but for {', '.join(sorted(set(given)))}, given to CMD by "
                    "--secret (never logged; it reaches only the allowed hosts)")
        return control
    return handler


def _credentials(control: str) -> Handler:
    """FS002: the real home hidden; an agent's own login file shown to it read-only
    (--agent) is named as such."""
    base = _with(control, "namespaces", "landlock")

    def handler(r: Result, c: Confinement) -> str | None:
        done = base(r, c)
        import os.path

        shown = sorted({p for p in _paths_of(r) if os.path.realpath(p) in c.shown})
        if done is None or not shown:
            return done
        return (f"{done}, but for {', '.join(shown)}, shown read-only to the agent by "
                "--agent (egress only to its hosts and --allow-net)")
    return handler


def _capabilities(r: Result, c: Confinement) -> str | None:
    if c.keep_caps:
        return None
    return "every capability dropped before CMD runs, and NoNewPrivs"


# NET001's "port N listens on ...", NET003's "... listens on ADDR:N" ([::1]:N for IPv6)
_PORT = r"^port (\d{1,5})\b|:(\d{1,5})(?=\s|$)"


def _ports(r: Result) -> frozenset[int] | None:
    """The ports a listener finding names, or None when an item names none."""
    import re

    found: set[int] = set()
    for e in r.evidence:
        got = [int(a or b) for a, b in re.findall(_PORT, e.detail)]
        if not got:
            return None
        found.update(got)
    return frozenset(found)


def _net(control: str, *networks: str, by_port: bool = False) -> Handler:
    return lambda r, c: None if c.allows_net(
        *networks, ports=_ports(r) if by_port else None) else control


def _namespaces(r: Result, c: Confinement) -> str | None:
    """PID, IPC and mount namespaces of the tree's own; not the network's."""
    if not (c.namespaces and c.pid_namespace) or any(
            "network" in e.detail for e in r.evidence):
        return None
    return "PID, IPC and mount namespaces of the tree's own"


def _unix(r: Result, c: Confinement) -> str | None:
    if c.allow_unix:
        return None
    return ("Unix sockets outside the workspace refused (no --allow-unix), and the "
            "environment that names them not passed")


RO_VIEW = "the system read-only in the tree's mount namespace, and Landlock"
HANDLERS: dict[str, Handler] = {
    "ENV001": lambda r, c: None if c.writable else _with(
        "its capabilities dropped, NoNewPrivs, the system read-only and the real home "
        "hidden", "namespaces", "landlock")(r, c),
    "ENV002": _with("NoNewPrivs (no setuid program gains a group's power), devices beyond "
                    "the usual few unreadable, sockets outside the workspace refused",
                    "landlock"),
    "ENV003": _with("PID, IPC and mount namespaces of its own", "namespaces",
                    "pid_namespace"),
    "ENV004": _always("ztsa exec's seccomp filter"),
    "ENV005": _always("NoNewPrivs, set before CMD runs"),
    "ENV006": _capabilities,
    "ENV007": _with(RO_VIEW, "namespaces", "landlock", writes=True),
    "ENV008": _namespaces,
    "ENV009": _environment("the environment: CMD gets none of these variables"),
    "ENV011": _always("--max-procs and --max-memory"),
    "FS001": _unix,
    "FS002": _credentials("the real home hidden, and Landlock's read rules"),
    "FS003": _unix,
    "FS004": _with(RO_VIEW + " (system secrets unreadable)", "namespaces", "landlock",
                   "pid_namespace", writes=True),
    "FS006": _environment("the environment: CMD gets none of these variables",
                          named_first=True),
    "FS007": _with("Landlock: writes only in the workspace and the private HOME and "
                   "TMPDIR", "landlock", writes=True),
    "FS008": _with("the real home hidden, Landlock's read rules, and the environment",
                   "namespaces", "landlock"),
    "AGT007": _with("agent files read-only in the tree's mount namespace", "namespaces"),
    "NET001": _net("egress only to --allow-net destinations", *LOOPBACK, by_port=True),
    "NET003": _net("egress only to --allow-net destinations", *LOOPBACK, by_port=True),
    "NET004": _net("egress only to --allow-net destinations", *LINK_LOCAL),
    "SUP007": _environment("the environment: CMD gets none of these variables"),
}


def judge(results: tuple[Result, ...], confinement: Confinement) -> tuple[Result, ...]:
    """The results, with each finding the confinement removes marked handled."""
    out = []
    for r in results:
        handler = HANDLERS.get(r.id)
        control = handler(r, confinement) if handler and r.status in (
            Status.FAIL, Status.UNKNOWN) else None
        if control is None:
            out.append(r)
            continue
        out.append(r._replace(
            status=Status.HANDLED,
            message=f"handled by ztsa exec: {control} (on this machine: {r.message})",
            evidence=(*r.evidence, Evidence(f"handled by {control}"))))
    return tuple(out)


def default(missing: list[str]) -> Confinement:
    """The confinement `ztsa exec` gives with no options, on a kernel lacking MISSING."""
    return Confinement(missing=list(missing), keep_caps=[], env_names=[], allow_unix=[],
                       net_addresses=[])


EVERY_CONTROL = default([])
# the options that give a finding back, each with the confinement without it
OPTIONS: tuple[tuple[str, Callable[[Confinement], Confinement]], ...] = (
    ("--keep-cap", lambda c: c._replace(keep_caps=[])),
    ("--env", lambda c: c._replace(env_names=[])),
    ("--allow-unix", lambda c: c._replace(allow_unix=[])),
    ("--allow-net", lambda c: c._replace(net_addresses=[], wildcards=False)),
    ("--allow-write or --home", lambda c: c._replace(writable=())))


def _control(r: Result, c: Confinement) -> str | None:
    handler = HANDLERS.get(r.id)
    return handler(r, c) if handler else None


def _lacking(r: Result, c: Confinement) -> list[str]:
    """The missing controls R's handling rests on: each one that, alone missing, keeps
    the confinement from handling it."""
    groups: dict[str, list[str]] = {}
    for m in c.missing:  # Confinement.landlock: any "Landlock (" entry is Landlock's absence
        groups.setdefault("Landlock (" if m.startswith("Landlock (") else m, []).append(m)
    return [m for ms in groups.values() if _control(r, c._replace(missing=ms)) is None
            for m in ms]


def why_not(r: Result, c: Confinement) -> str:
    """Why the confinement C does not remove the finding R."""
    if _control(r, EVERY_CONTROL) is None:
        return "ztsa exec does not change this; fix it on the machine"
    if _control(r, c._replace(missing=[])) is not None:
        lacking = _lacking(r, c) or list(c.missing)
        return "this kernel lacks " + "; ".join(m.split(" (")[0] for m in lacking)
    given = [flag for flag, without in OPTIONS
             if _control(r, without(c._replace(missing=[]))) is not None]
    if len(given) == 1:
        return f"this run's {given[0]} gives it back to the command"
    return f"this run's {' and '.join(given) or 'options'} give it back to the command"


def about_machine(r: Result, workspace: str) -> bool:
    """Is R about the machine (the environment a command runs in), not the repository?
    What ztsa.output.about_machine says, and any finding this confinement would remove
    on a kernel with every control (a repository's agent files writable, AGT007)."""
    from ztsa.output import about_machine as outside

    return outside(r, workspace) or _control(r, EVERY_CONTROL) is not None


def view(results: tuple[Result, ...], c: Confinement, workspace: str, *, running: bool,
         strict: bool) -> MachineView:
    """What the confinement C does (running: in this run, whose results are judged) or
    would do (ztsa check) with each finding about the machine. strict: the profile needs
    every control (untrusted), so ztsa exec refuses to run where one is missing."""
    machine, handled, unhandled = set(), {}, {}
    for r in results:
        if r.status is Status.PASS or not about_machine(r, workspace):
            continue
        machine.add(r.id)
        if r.status not in (Status.FAIL, Status.UNKNOWN) or r.category is Category.EXEC:
            continue  # EXEC001 names what this kernel lacks itself
        control = None if running else _control(r, c)
        if control is not None:
            handled[r.id] = control
        else:
            unhandled[r.id] = why_not(r, c)
    return MachineView(running=running, machine=frozenset(machine), handled=handled,
                       unhandled=unhandled, missing=tuple(c.missing),
                       refuses=strict and bool(c.missing))
