"""Which findings the confinement of `ztsa exec` removes (the escape suite runs the
gate under real runs: integration/escapes/test_gate_under_exec.py)."""

from ztsa.model import Action, Category, Evidence, Result, Severity, Status
from ztsa.sandbox.controls import PIDNS_MISSING, USERNS_MISSING
from ztsa.sandbox.handled import Confinement, judge


def result(rule_id: str, *details: str, status: Status = Status.FAIL) -> Result:
    return Result(id=rule_id, slug="s", category=Category.ENV, title="t",
                  severity=Severity.HIGH, action=Action.BLOCK, status=status, gating=True,
                  message="m", evidence=tuple(Evidence(d) for d in details), fix="f")


def conf(**kw) -> Confinement:
    base = dict(missing=[], keep_caps=[], env_names=[], allow_unix=[], net_addresses=[])
    return Confinement(**{**base, **kw})


def status(r: Result, c: Confinement) -> Status:
    return judge((r,), c)[0].status


def test_what_the_confinement_removes_is_handled_and_does_not_block():
    for rid in ("ENV001", "ENV004", "ENV005", "ENV006", "ENV007", "FS004", "FS007",
                "AGT007", "NET001", "NET003"):
        out = judge((result(rid, "x"),), conf())[0]
        assert out.status is Status.HANDLED and not out.blocks, rid
        assert out.evidence[0].detail == "x"  # the rule's own evidence is kept
        assert out.evidence[-1].detail.startswith("handled by ")


def test_a_missing_control_makes_its_findings_block_again():
    no_ns = conf(missing=[USERNS_MISSING, PIDNS_MISSING])
    for rid in ("ENV001", "ENV003", "ENV007", "FS002", "FS004", "AGT007"):
        assert status(result(rid, "x"), no_ns) is Status.FAIL, rid
    no_landlock = conf(missing=["Landlock (writes outside the workspace cannot be blocked)"])
    assert status(result("FS007", "x"), no_landlock) is Status.FAIL
    assert status(result("ENV004", "x"), no_ns) is Status.HANDLED  # the filter is always


def test_what_the_command_line_gives_back_is_not_handled():
    assert status(result("ENV006", "CapEff: CAP_NET_RAW"), conf(keep_caps=["NET_RAW"])) \
        is Status.FAIL
    assert status(result("FS006", "GITHUB_TOKEN holds a value shaped like a token"),
                  conf(env_names=["GITHUB_TOKEN"])) is Status.FAIL
    assert status(result("FS006", "GITHUB_TOKEN holds a value shaped like a token"),
                  conf()) is Status.HANDLED
    assert status(result("FS001", "/var/run/docker.sock"),
                  conf(allow_unix=["/var/run/docker.sock"])) is Status.FAIL
    assert status(result("NET003", "5432 on 127.0.0.1"), conf(net_addresses=["127.0.0.1"])) \
        is Status.FAIL
    assert status(result("NET004", "169.254.169.254"), conf(net_addresses=["10.0.0.0/8"])) \
        is Status.HANDLED


def test_only_evidence_the_confinement_covers_is_handled():
    # a system-wide preload reaches CMD too; a variable does not
    assert status(result("ENV009", "environment variable LD_PRELOAD is set"), conf()) \
        is Status.HANDLED
    assert status(result("ENV009", "environment variable LD_PRELOAD is set",
                         "/etc/ld.so.preload is not empty"), conf()) is Status.FAIL
    assert status(result("ENV009", "environment variable PATH is set"), conf()) \
        is Status.FAIL  # CMD gets PATH
    assert status(result("ENV008", "host PID namespace: pid 1 is systemd"), conf()) \
        is Status.HANDLED
    assert status(result("ENV008", "host network interfaces present: eth0"), conf()) \
        is Status.FAIL
    assert status(result("SUP007", "registry in .npmrc"), conf()) is Status.FAIL
    # beside the variable, test data's overrides, advisory (poetry's tests/fixtures)
    from ztsa.findings import ELSEWHERE_NOTE

    fixture = "[[tool.poetry.source]] https://foo.bar/simple/" + ELSEWHERE_NOTE
    assert status(result("SUP007", "environment variable PIP_FIND_LINKS is set", fixture),
                  conf()) is Status.HANDLED
    assert status(result("SUP007", "environment variable PIP_FIND_LINKS is set",
                         "[[tool.poetry.source]] https://foo.bar/simple/"), conf()) \
        is Status.FAIL  # the root's own: it blocks


def test_rules_the_confinement_does_not_touch_stay_as_they_are():
    for rid in ("ENV010", "AGT009", "SUP001", "NET002"):
        assert status(result(rid, "x"), conf()) is Status.FAIL
    assert status(result("ENV004", status=Status.PASS), conf()) is Status.PASS


def test_whatever_the_command_line_opens_again_is_not_handled():
    assert status(result("FS006", "LC_TOKEN holds a value shaped like a token"), conf()) \
        is Status.FAIL  # every LC_* variable reaches CMD
    for net in ("127.0.0.1/32", "0.0.0.0/32", "::/128"):  # localhost, the unspecified
        assert status(result("NET003", "x"), conf(net_addresses=[net])) is Status.FAIL, net
    assert status(result("NET004", "x"), conf(wildcards=True)) is Status.FAIL
    wrote = conf(writable=("/proc/sys/kernel",))
    assert status(result("ENV007", "/proc/sys/kernel/core_pattern is writable"), wrote) \
        is Status.FAIL
    assert status(result("FS007", "/root/.bashrc is writable"), conf(writable=("/root",))) \
        is Status.FAIL
    assert status(result("FS004", "/etc is writable"), conf(writable=("/etc/app",))) \
        is Status.FAIL
    assert status(result("FS004", "/etc is writable"), conf(writable=("/srv/data",))) \
        is Status.HANDLED
    assert status(result("ENV001", "Uid: 0"), conf(writable=("/srv/data",))) is Status.FAIL


def test_a_secret_and_an_agents_login_are_named_as_given_on_purpose(tmp_path):
    token = "GITHUB_TOKEN holds a value shaped like a token"
    out = judge((result("FS006", token),), conf(secrets=("GITHUB_TOKEN",)))[0]
    assert out.status is Status.HANDLED and "GITHUB_TOKEN, given to CMD by --secret" \
        in out.message
    # --env gives it back as an ordinary variable: that still blocks
    assert status(result("FS006", token), conf(env_names=["GITHUB_TOKEN"],
                                               secrets=("OTHER",))) is Status.FAIL
    cred = tmp_path / ".claude" / ".credentials.json"
    r = Result(id="FS002", slug="s", category=Category.FS, title="t",
               severity=Severity.HIGH, action=Action.BLOCK, status=Status.FAIL,
               gating=True, message="m", fix="f",
               evidence=(Evidence("~/.claude/.credentials.json is readable", path=str(cred)),))
    out = judge((r,), conf(shown=(str(cred),)))[0]
    assert out.status is Status.HANDLED and "shown read-only to the agent" in out.message
    out = judge((r,), conf())[0]
    assert out.status is Status.HANDLED and "shown" not in out.message


def test_a_rule_for_one_loopback_port_leaves_the_others_handled():
    """--allow-net 127.0.0.1:PORT (a test's own listener) opens that port only: another
    service of the host's loopback stays unreachable, so its finding stays handled."""
    one = conf(net_ports=(("127.0.0.1/32", 8080),))
    wild = result("NET001", "port 2024 listens on 0.0.0.0:2024 (owner not visible)")
    pg = result("NET003", "PostgreSQL listens on 127.0.0.1:5432")
    pg6 = result("NET003", "PostgreSQL listens on [::1]:5432")
    for r in (wild, pg):
        assert status(r, one) is Status.HANDLED, r.id
    assert status(pg6, conf(net_ports=(("::1/128", 1),))) is Status.HANDLED  # not ":1]"
    assert status(wild, conf(net_ports=(("127.0.0.1/32", 2024),))) is Status.FAIL
    assert status(pg, conf(net_ports=(("127.0.0.0/8", 5432),))) is Status.FAIL
    # an item that names no port: any port of a loopback rule counts
    assert status(result("NET003", "x"), one) is Status.FAIL
