"""The run plan as a pure function: plan.make(request, offer, site) for the main cases,
compared with golden plans (tests/sandbox/golden/*.json), as codex tests its bwrap
arguments. A changed decision shows as a diff of a golden file in review.

Regenerate after a deliberate change: ZTSA_UPDATE_GOLDEN=1 python -m pytest -q
tests/sandbox/test_plan_golden.py (then read the diff).

Every input is a real tree under a temporary directory (written as $TMP in the golden
files); the host's offer is given, never probed, so one machine's kernel and user
cannot change a golden plan, and a tripwire test shows that make asks the host
nothing."""

import json
import os
from pathlib import Path

import pytest

from ztsa import gitlayout
from ztsa.sandbox import landlock, plan, protect, resources
from ztsa.sandbox import native as nat
from ztsa.sandbox.filter import build
from ztsa.sandbox.offer import HostOffer
from ztsa.sandbox.policy import Policy, parse_net
from ztsa.sandbox.request import ExecRequest

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("ZTSA_UPDATE_GOLDEN") == "1"

INOTIFY = (128, 65536)  # the user's inotify limits (instances, watches)
ROOT = HostOffer(euid=0, userns=True, pidns=True, landlock_abi=7, inotify_limits=INOTIFY)
USER = HostOffer(euid=1000, userns=True, pidns=True, landlock_abi=7, inotify_limits=INOTIFY)
NO_USERNS = HostOffer(euid=1000, userns=False, pidns=False, landlock_abi=7,
                      inotify_limits=INOTIFY)
# a container's root under the runtime's default capabilities (no CAP_SYS_ADMIN): no
# mount namespace of its own making, a user namespace as an ordinary user's
ROOT_NO_ADMIN = ROOT._replace(root_mountns=False)
NO_LANDLOCK = HostOffer(euid=1000, userns=True, pidns=True, landlock_abi=0,
                        inotify_limits=INOTIFY)
ONLINK = ((4, bytes([192, 168, 1, 0]), bytes([255, 255, 255, 0])),)


def ruleset(abi: int, writable: list[str]) -> landlock.Plan:
    """The first ruleset as landlock.plan makes it, but for reads: writes in
    `writable` only (no walk of the host's directories)."""
    handled, missing = landlock.handled_rights(abi)
    write = handled & ~landlock.READ
    return landlock.Plan(abi, handled, [(w, write) for w in writable], missing,
                         landlock.scope(abi, missing))


class Tree:
    """A workspace, a real home with credentials, the run's private directories and a
    program, all under one temporary directory."""

    def __init__(self, tmp: Path) -> None:
        self.top = os.path.realpath(tmp)
        t = Path(self.top)
        self.ws = t / "ws"
        (self.ws / ".git" / "hooks").mkdir(parents=True)
        (self.ws / ".git" / "config").write_text("[core]\n\tbare = false\n")
        (self.ws / "AGENTS.md").write_text("be good\n")
        (self.ws / "src").mkdir()
        self.home = t / "home"
        (self.home / ".ssh").mkdir(parents=True)
        (self.home / "proj").mkdir()  # a workspace in the real home
        (self.home / ".claude").mkdir()
        self.private = t / "runs" / "ztsa-run-1"
        (self.private / "home").mkdir(parents=True)
        (self.private / "tmp").mkdir()
        self.bin = t / "prefix" / "bin"
        self.bin.mkdir(parents=True)
        (t / "prefix" / "lib").mkdir()
        self.program = self.bin / "tool"
        self.program.write_text("#!/bin/sh\n")
        self.program.chmod(0o755)

    def request(self, **changes: object) -> ExecRequest:
        req = ExecRequest(argv=("tool", "--flag"), cwd=str(self.ws), workspace=str(self.ws),
                          profile="repo")
        return req._replace(**changes)

    def site(self, offer: HostOffer, req: ExecRequest, **changes: object) -> plan.Site:
        writable = [req.workspace, str(self.private)]
        env = {"PATH": f"{self.bin}:/usr/bin", "HOME": str(self.private / "home"),
               "TMPDIR": str(self.private / "tmp"), "LANG": "C.UTF-8"}
        policy = Policy(list(req.net), list(req.allow_unix), req.workspace,
                        [], req.allow_listen, list(req.deny))
        policy._onlink = ONLINK  # the host's routes, given
        fs = ruleset(offer.landlock_abi, writable)
        site = plan.Site(
            program=str(self.program), env=tuple(env.items()), fs=fs,
            writable=tuple(writable),
            # landlock.audit_plan grants writes on "/"; here on the workspace, so that
            # the second ruleset's walk down to it stays in the temporary tree
            audit_fs=ruleset(offer.landlock_abi, [str(self.ws)]) if req.audit_only else None,
            unreadable=(str(self.home / ".ssh"), str(self.home / ".aws")),
            real_home=str(self.home), also_homes=(str(self.private.parent),),
            net=policy.net_plan(), run_id="golden", git=gitlayout.find(str(self.ws)),
            private_dir=str(self.private))
        return site._replace(**changes)


def plain(value: object, top: str) -> object:
    """A plan as JSON: records as objects, enums by name, bytes as hex, $TMP for the
    temporary directory."""
    if hasattr(value, "_asdict"):
        return {k: plain(v, top) for k, v in value._asdict().items()}
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return value
    if hasattr(value, "name") and isinstance(value, int):
        return value.name
    if isinstance(value, int):
        return value
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, str):
        return value.replace(top, "$TMP")
    if isinstance(value, (list, tuple)):
        return [plain(v, top) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v, top) for k, v in value.items()}
    raise TypeError(type(value))


def outcome(req: ExecRequest, offer: HostOffer, site: plan.Site, top: str) -> object:
    """The plan (its filter as the options it was built with), or the refusal."""
    try:
        run = plan.make(req, offer, site)
    except plan.Refusal as no:
        return {"refused": no.code, "message": plain(no.message, top)}
    assert run.filter == build(**run.filter_options._asdict())
    if run.protection is not None:  # the catalogue's names (ztsa.surfaces) as one word:
        # a new surface is no change of the plan's decisions
        entries = [e for e in run.protection.entries if e not in protect.AGENT_FILES]
        run = run._replace(protection=run.protection._replace(
            entries=["(the agent files of ztsa.surfaces)", *entries]))
    shown = plain(run._replace(filter=b""), top)
    assert isinstance(shown, dict)
    del shown["filter"]
    return shown


def check(name: str, got: object) -> None:
    path = GOLDEN / f"{name}.json"
    text = json.dumps(got, indent=1, sort_keys=True) + "\n"
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"no golden plan {path.name}: run with ZTSA_UPDATE_GOLDEN=1"
    assert json.loads(path.read_text()) == got, (
        f"{path.name} differs: a decision changed (ZTSA_UPDATE_GOLDEN=1 rewrites it; "
        "read the diff)")


def net(*specs: str) -> tuple:
    return tuple(parse_net(s, resolve_names=False) for s in specs)


def cases(t: Tree) -> dict[str, tuple[ExecRequest, HostOffer, plan.Site]]:
    out: dict[str, tuple[ExecRequest, HostOffer, plan.Site]] = {}

    def case(name: str, offer: HostOffer, req: ExecRequest, **site: object) -> None:
        out[name] = (req, offer, t.site(offer, req, **site))

    log = str(t.ws / "audit.jsonl")
    Path(log).write_text("")
    case("root_default", ROOT, t.request())
    case("root_without_cap_sys_admin", ROOT_NO_ADMIN, t.request())
    case("user_with_userns", USER, t.request())
    case("user_without_userns", NO_USERNS, t.request())
    case("user_without_userns_untrusted", NO_USERNS, t.request(profile="untrusted"))
    case("user_without_userns_log", NO_USERNS, t.request(audit_log=log),
         log_fd=3, log_path=log)
    case("user_without_userns_wildcard", NO_USERNS, t.request(net=net("*.example.com:443")))
    case("root_with_log_in_workspace", ROOT, t.request(audit_log=log), log_fd=3,
         log_path=log)
    case("root_audit_only", ROOT, t.request(audit_only=True, audit_log=log), log_fd=3,
         log_path=log)
    case("user_without_userns_audit_only", NO_USERNS, t.request(audit_only=True))
    case("user_without_userns_deny_read", NO_USERNS._replace(landlock_abi=0),
         t.request(deny_read=(str(t.home / "secret"),)))
    agent = net("api.anthropic.com:443", "statsig.anthropic.com:443")
    # as agents.prepare makes them: the state directory in the private home, its entries
    # bound there, the kept ones writable (the kept-state layer: plan.kept)
    claude, own = t.home / ".claude", t.private / "home" / ".claude"
    own.mkdir(exist_ok=True)
    (own / "session-env").mkdir(exist_ok=True)  # a private entry: writable to the tree
    (t.private / "home" / ".claude.json").write_text("{}\n")
    entries = (("settings.json", False), ("projects", True), ("history.jsonl", True))
    for entry, _ in entries:
        for d in (claude, own):
            if entry.endswith((".json", ".jsonl")):
                (d / entry).touch()
            else:
                (d / entry).mkdir(exist_ok=True)
    case("root_agent_claude", ROOT,
         t.request(agents=("claude",), net=agent,
                   agent_hosts=tuple(r.spec for r in agent)),
         binds=tuple((str(claude / e), str(own / e), rw) for e, rw in entries),
         kept=tuple(str(own / e) for e, rw in entries if rw))
    case("user_allow_net_names", USER,
         t.request(net=net("example.com:443", "*.npmjs.org", "192.0.2.7:22"),
                   allow_listen=(8080,)))
    case("user_address_rules_only", USER, t.request(net=net("192.0.2.0/24:443")))
    case("user_without_userns_address_rules_only", NO_USERNS,
         t.request(net=net("192.0.2.0/24:443")))
    case("user_landlock_missing", NO_LANDLOCK, t.request())
    in_home = str(t.home / "proj")
    case("user_landlock_missing_workspace_in_home", NO_LANDLOCK,
         t.request(workspace=in_home, cwd=in_home))
    case("root_quiet_limits", ROOT,
         t.request(quiet=True, max_procs=64, max_memory=512 << 20, max_disk=32 << 20,
                   keep_cap_mask=1 << 10, pass_fds=(5,)), own_session=True,
         secrets=(("TOKEN", "s3cret"),))
    # --keep-tmp: the private HOME and TMPDIR on the host's disk, to be kept
    case("user_keep_tmp", USER, t.request(keep_tmp=True))
    # ztsa-ns installed: the set-up is its exec, whatever else the offer says
    ns = str(t.bin / "ztsa-ns")
    case("user_ztsa_ns", USER._replace(ns=ns), t.request())
    case("root_ztsa_ns", ROOT._replace(ns=ns), t.request())
    # AppArmor restricts user namespaces and no ztsa-ns may make them: none, as
    # without user namespaces (EXEC001 names what is missing)
    case("user_apparmor_without_ztsa_ns", NO_USERNS._replace(apparmor_userns=True),
         t.request())
    return out


@pytest.fixture
def tree(tmp_path):
    return Tree(tmp_path)


CASES = ["root_default", "root_without_cap_sys_admin", "user_with_userns", "user_without_userns",
         "user_without_userns_untrusted", "user_without_userns_log",
         "user_without_userns_wildcard", "root_with_log_in_workspace", "root_audit_only",
         "user_without_userns_audit_only", "user_without_userns_deny_read",
         "root_agent_claude", "user_allow_net_names", "user_address_rules_only",
         "user_without_userns_address_rules_only", "user_landlock_missing",
         "user_landlock_missing_workspace_in_home",
         "root_quiet_limits", "user_keep_tmp", "user_ztsa_ns", "root_ztsa_ns",
         "user_apparmor_without_ztsa_ns"]


def test_the_cases_are_the_golden_files(tree):
    assert sorted(cases(tree)) == sorted(CASES)
    if not UPDATE:
        assert sorted(p.stem for p in GOLDEN.glob("*.json")) == sorted(CASES)


@pytest.mark.parametrize("name", CASES)
def test_golden_plan(tree, name):
    req, offer, site = cases(tree)[name]
    check(name, outcome(req, offer, site, tree.top))


def test_the_same_inputs_make_the_same_plan(tree):
    for req, offer, site in cases(tree).values():
        assert outcome(req, offer, site, tree.top) == outcome(req, offer, site, tree.top)


def test_the_plan_asks_the_host_nothing(tree, monkeypatch):
    """With every probe and the process's own identity made to fail, and the
    environment emptied, make gives the same plans: it decides from the offer, which
    here says the opposite of this host in half the cases."""
    expected = {name: outcome(*c, tree.top) for name, c in cases(tree).items()}

    def tripwire(*_: object) -> None:
        raise AssertionError("plan.make asked the host")

    for name in ("userns_available", "pidns_available", "landlock_abi", "spawn"):
        monkeypatch.setattr(nat, name, tripwire)
    monkeypatch.setattr(resources, "inotify_limits", tripwire)
    for name in ("geteuid", "getuid", "getegid", "getpid", "tcgetpgrp"):
        monkeypatch.setattr(os, name, tripwire)
    monkeypatch.setattr(os, "environ", {})
    for name, (req, offer, site) in cases(tree).items():
        assert outcome(req, offer, site, tree.top) == expected[name], name


def test_an_offer_decides_against_the_host(tree):
    """The same request on two offers: the plan follows each offer, whoever runs it."""
    req = tree.request()
    as_root = plan.make(req, ROOT, tree.site(ROOT, req))
    as_user = plan.make(req, NO_USERNS, tree.site(NO_USERNS, req))
    assert as_root.drop_caps and as_root.namespaces == plan.Namespaces.MOUNT
    assert as_root.netns and as_root.connects == plan.Connects.HELPER and as_root.helper
    assert not as_user.drop_caps and as_user.namespaces == plan.Namespaces.NONE
    assert not as_user.netns and as_user.connects == plan.Connects.LOOP
    assert not as_user.helper and as_user.home is None
