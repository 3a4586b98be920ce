"""The text report, for a person: the repository first, then the machine (what ztsa
exec handles here and what it cannot, and why), then a verdict line that is true."""

from __future__ import annotations

from ztsa.model import Action, Category, Evidence, Profile, Report, Result, Severity, Status
from ztsa.output.text import render_text
from ztsa.sandbox.controls import PIDNS_MISSING, USERNS_MISSING
from ztsa.sandbox.handled import default, judge, view

WS = "/work/repo"


def result(rule_id: str, category: Category, *evidence: Evidence, gating: bool = True,
           status: Status = Status.FAIL) -> Result:
    return Result(id=rule_id, slug="s", category=category, title=f"{rule_id} title",
                  severity=Severity.HIGH, action=Action.BLOCK if gating else Action.WARN,
                  status=status, gating=gating, message=f"{rule_id} message",
                  evidence=evidence, fix=f"{rule_id} fix")


SECCOMP = result("ENV004", Category.ENV, Evidence("Seccomp: 0", path="/proc/self/status"))
ROOT = result("ENV001", Category.ENV, Evidence("Uid: real=0", path="/proc/self/status"))
PATH_HIJACK = result("ENV010", Category.ENV, Evidence("/opt/bin is writable", path="/opt/bin"))
AGENT_FILES = result("AGT007", Category.AGT, Evidence(".git/config is writable",
                                                      path=".git/config"))
TOKEN = result("FS005", Category.FS, Evidence("a token", path=".npmrc", line=1))
NO_LOCK = result("SUP001", Category.SUP, Evidence("no lockfile", path="package.json"),
                 gating=False)
PASSING = result("SUP002", Category.SUP, status=Status.PASS)


def report(*results: Result, profile: Profile = Profile.UNTRUSTED) -> Report:
    return Report(tool_version="0", profile=profile, path=WS, results=results)


def check_text(rep: Report, missing: list[str] | None = None) -> list[str]:
    """What `ztsa check` prints: the view of ztsa exec's defaults on this kernel."""
    machine = view(rep.results, default(missing or []), WS, running=False,
                   strict=rep.profile is Profile.UNTRUSTED)
    return render_text(rep, machine=machine).splitlines()


def test_the_repository_comes_first_then_the_machine_then_the_verdict():
    lines = check_text(report(SECCOMP, TOKEN, AGENT_FILES, NO_LOCK, PASSING))
    assert lines[0] == f"The repository ({WS}), under profile untrusted:"
    assert lines[1].startswith("BLOCK  FS005 FS005 title: FS005 message")
    at = {ln.split()[1]: i for i, ln in enumerate(lines) if ln.startswith(("BLOCK", "WARN"))}
    machine = lines.index("This machine: what ztsa exec would handle here (its confinement "
                          "removes these for the command it runs):")
    assert at["FS005"] < at["SUP001"] < machine < at["AGT007"] and machine < at["ENV004"]
    assert ("repository: FAILED under profile untrusted: 1 blocking finding (FS005)"
            in lines[:machine])
    # the repository's agent files writable: the process's access, which ztsa exec removes
    assert "         under ztsa exec: agent files read-only in the tree's mount namespace" \
        in lines
    assert lines[-2] == "pass   SUP002"
    assert lines[-1] == (f"gate FAILED (profile untrusted, {WS}): 1 blocking finding in the "
                         "repository; 2 blocking findings about this machine (ztsa exec "
                         "would handle all of them here); 1 warning does not block under "
                         "this profile")


def test_a_machine_only_failure_reads_as_handled_by_ztsa_exec():
    lines = check_text(report(SECCOMP, ROOT, PASSING))
    assert "repository: passes under profile untrusted: no finding" in lines
    cannot = lines.index("This machine: what ztsa exec cannot handle here:")
    assert lines[cannot + 1] == "  nothing"
    assert "         under ztsa exec: ztsa exec's seccomp filter" in lines[:cannot]
    assert not any(ln.lstrip().startswith("fix:") for ln in lines)  # exec is the fix
    assert lines[-1] == (f"gate FAILED (profile untrusted, {WS}): nothing in the repository "
                         "blocks; 2 blocking findings about this machine (ztsa exec would "
                         "handle all of them here: run your agent and commands under `ztsa "
                         "exec`, where this gate passes)")


def test_what_ztsa_exec_cannot_handle_says_why():
    lines = check_text(report(SECCOMP, ROOT, PATH_HIJACK), [USERNS_MISSING, PIDNS_MISSING])
    cannot = lines.index("This machine: what ztsa exec cannot handle here:")
    assert lines[cannot + 1].startswith("  this kernel lacks: user namespaces (")
    assert lines[cannot + 2] == ("  so under profile untrusted ztsa exec refuses to run here "
                                 "(EXEC001); --profile dependency or repo runs without them")
    tail = lines[cannot:]
    assert "         why: this kernel lacks user namespaces" in tail  # ENV001
    assert "         why: ztsa exec does not change this; fix it on the machine" in tail
    assert "         fix: ENV010 fix" in tail
    assert any(ln.startswith("BLOCK  ENV004") for ln in lines[:cannot])  # the filter is
    assert lines[-1].endswith("3 blocking findings about this machine (ztsa exec would "
                              "handle 1 of them, but under profile untrusted it refuses to "
                              "run on this kernel: EXEC001)")
    # under dependency it runs with what there is: no refusal, a count that is true
    lines = check_text(report(SECCOMP, ROOT, PATH_HIJACK, profile=Profile.DEPENDENCY),
                       [USERNS_MISSING, PIDNS_MISSING])
    assert not any("refuses" in ln for ln in lines)
    assert lines[-1].endswith("(ztsa exec would handle 1 of them here)")


def test_a_passing_gate_with_failing_findings_says_why_they_do_not_block():
    warned = [r._replace(gating=False, action=Action.WARN) for r in (SECCOMP, ROOT, TOKEN)]
    waived = NO_LOCK._replace(status=Status.WAIVED)
    rep = report(*warned, waived, PASSING, profile=Profile.REPO)
    assert rep.passed
    lines = check_text(rep)
    assert ("repository: passes under profile repo: 1 finding does not block under this "
            "profile (warnings: FS005); 1 finding is waived by a policy file (SUP001)") in lines
    assert lines[-1] == (f"gate PASSED (profile repo, {WS}): nothing blocks; 3 findings do "
                         "not block under this profile (warnings: ENV001 ENV004 FS005); 1 "
                         "finding is waived by a policy file (SUP001)")
    assert any(ln.startswith("WARN   ENV004") for ln in lines)
    clean = render_text(report(PASSING), machine=view((PASSING,), default([]), WS,
                                                      running=False, strict=True))
    assert clean.splitlines()[-1] == f"gate PASSED (profile untrusted, {WS}): nothing blocks"


def test_ztsa_exec_s_own_report_says_what_this_run_handles_and_what_gives_it_back():
    conf = default([])._replace(keep_caps=["NET_RAW"])
    results = (*judge((SECCOMP, ROOT._replace(id="ENV006")), conf), TOKEN)
    rep = report(*results)
    lines = render_text(rep, machine=view(rep.results, conf, WS, running=True,
                                          strict=True)).splitlines()
    assert ("This machine: handled by the confinement of this ztsa exec run (the command "
            "does not run with these):") in lines
    assert any(ln.startswith("HANDLED ENV004") for ln in lines)
    assert not any(ln.startswith("         - handled by") for ln in lines)  # said once
    assert "         why: this run's --keep-cap gives it back to the command" in lines
    assert lines[-1] == (f"gate FAILED (profile untrusted, {WS}): 1 blocking finding in the "
                         "repository; 1 blocking finding about this machine; ztsa exec "
                         "handles 1 other finding about this machine in this run")


def test_which_findings_are_the_machines():
    env_npmrc = result("SUP007", Category.SUP, Evidence("environment variable NPM_CONFIG_"
                                                        "REGISTRY is set"))
    repo_npmrc = result("SUP007", Category.SUP, Evidence("registry=...", path=".npmrc"))
    home_settings = result("AGT001", Category.AGT,
                           Evidence("Bash(*)", path="/root/.claude/settings.json"))
    machine = view((env_npmrc, AGENT_FILES, home_settings, TOKEN, NO_LOCK), default([]),
                   WS, running=False, strict=True)
    assert machine.machine == {"SUP007", "AGT007", "AGT001"}
    assert view((repo_npmrc,), default([]), WS, running=False, strict=True).machine == set()


def test_without_a_view_nothing_is_claimed_for_ztsa_exec():
    text = render_text(report(SECCOMP, TOKEN))
    assert "This machine (the environment a command runs in here):" in text
    assert "ztsa exec" not in text
    assert text.splitlines()[-1] == (f"gate FAILED (profile untrusted, {WS}): 1 blocking "
                                     "finding in the repository; 1 blocking finding about "
                                     "this machine")
