"""The command-line contract: formats, exit codes, errors."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from ztsa import __version__, cli
from ztsa.context import Context
from ztsa.engine import evaluate
from ztsa.host import Host
from ztsa.model import Category, Severity, Status
from ztsa.registry import Rule, parse_actions

SCHEMA = json.loads((Path(__file__).parent.parent / "docs" / "report-schema.json").read_text())


def ztsa(*args: str, env: dict[str, str] | None = None, **kw) -> subprocess.CompletedProcess:
    # from / by default: the installed ztsa, with its native module (the checkout's own
    # has none when it was installed with `pip install .`)
    kw.setdefault("cwd", "/")
    return subprocess.run([sys.executable, "-m", "ztsa", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=60, **kw)


def test_json_report_follows_schema_and_exit_code(tmp_path):
    proc = ztsa("check", "--format", "json", str(tmp_path))
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["profile"] == "untrusted" and doc["path"] == str(tmp_path)
    assert proc.returncode == (0 if doc["passed"] else 3)
    assert doc["passed"] == (doc["summary"]["blocking"] == 0)
    ids = [r["id"] for r in doc["results"]]
    assert "ENV001" in ids and ids == sorted(ids)


def _sections(stdout: str) -> tuple[list[str], list[str], list[str], list[str]]:
    """The text report's parts: the repository, what ztsa exec would handle here, what
    it cannot, and the rest (pass, not run, the verdict)."""
    lines = stdout.splitlines()
    at = [lines.index(h) for h in (
        next(ln for ln in lines if ln.startswith("The repository (")),
        next(ln for ln in lines if ln.startswith("This machine: what ztsa exec would")),
        "This machine: what ztsa exec cannot handle here:")]
    rest = next(i for i in range(at[2], len(lines)) if lines[i] == "")
    return ([ln for ln in lines[:at[1]] if ln], lines[at[1]:at[2]], lines[at[2]:rest],
            lines[rest:])


def test_failing_gate_exits_3_and_text_leads_with_the_repository(tmp_path):
    """The repository's findings and verdict first, blocking first; then the machine's;
    the verdict line last."""
    (tmp_path / ".npmrc").write_text("//registry.npmjs.org/:_authToken=npm_" + "a1B2" * 9
                                     + "\n")
    proc = ztsa("check", str(tmp_path), env={"LD_PRELOAD": "/nonexistent.so", "NO_COLOR": "1"})
    assert proc.returncode == 3
    repo, handled, _cannot, rest = _sections(proc.stdout)
    assert repo[0] == f"The repository ({tmp_path}), under profile untrusted:"
    assert repo[1].startswith("BLOCK  FS005")
    assert any(ln.startswith("repository: FAILED under profile untrusted: 1 blocking "
                             "finding (FS005)") for ln in repo)
    assert not [ln for ln in repo if ln.startswith(("BLOCK  ENV", "WARN   ENV"))]
    # the environment's LD_PRELOAD: what ztsa exec removes (CMD never gets it)
    env009 = handled.index(next(ln for ln in handled if ln.startswith("BLOCK  ENV009")))
    note = next(ln for ln in handled[env009:] if ln.startswith("         under ztsa exec"))
    assert note == ("         under ztsa exec: the environment: CMD gets none of these "
                    "variables")
    assert "fix:" in proc.stdout
    assert rest[-1].startswith(f"gate FAILED (profile untrusted, {tmp_path}): 1 blocking "
                               "finding in the repository; ")
    assert "about this machine (ztsa exec would handle " in rest[-1]
    assert "\x1b[" not in proc.stdout


def test_a_machine_only_failure_reads_as_handled_by_ztsa_exec(tmp_path):
    proc = ztsa("check", "--profile", "dependency", str(tmp_path),
                env={"LD_PRELOAD": "/nonexistent.so", "NO_COLOR": "1"})
    assert proc.returncode == 3  # what blocks, and the exit code, are the gate's as before
    repo, handled, cannot, rest = _sections(proc.stdout)
    assert repo[-1] == "repository: passes under profile dependency: no finding"
    assert any(ln.startswith("BLOCK  ENV009") for ln in handled)
    assert not any("ENV009" in ln for ln in cannot)
    verdict = rest[-1]
    assert verdict.startswith(f"gate FAILED (profile dependency, {tmp_path}): nothing in the "
                              "repository blocks; ")
    blocking = [ln.split()[1] for ln in handled + cannot if ln.startswith("BLOCK")]
    handled_ids = [ln.split()[1] for ln in handled if ln.startswith("BLOCK")]
    assert f"{len(blocking)} blocking finding" in verdict
    if handled_ids == blocking and "refuses" not in verdict:
        assert ("(ztsa exec would handle all of them here: run your agent and commands "
                "under `ztsa exec`, where this gate passes)") in verdict
    # the same gate under JSON: the same verdict, no new field
    doc = json.loads(ztsa("check", "--profile", "dependency", "--format", "json",
                          str(tmp_path), env={"LD_PRELOAD": "/nonexistent.so"}).stdout)
    assert doc["passed"] is False and doc["summary"]["blocking"] == len(blocking)
    assert set(doc) == {"schema", "tool", "profile", "path", "passed", "results", "not_run",
                        "summary"}


def test_a_passing_gate_with_failing_findings_says_why_they_do_not_block(tmp_path):
    proc = ztsa("check", "--profile", "repo", str(tmp_path),
                env={"LD_PRELOAD": "/nonexistent.so", "NO_COLOR": "1"})
    assert proc.returncode == 0, proc.stdout
    verdict = proc.stdout.splitlines()[-1]
    assert verdict.startswith(f"gate PASSED (profile repo, {tmp_path}): nothing blocks; ")
    warned = verdict.split("(warnings: ")[1].rstrip(")").split()
    assert "ENV009" in warned
    assert f"{len(warned)} finding" in verdict and "not block under this profile" in verdict
    assert "0 blocking" not in proc.stdout and " fail," not in proc.stdout


def test_repo_profile_only_warns_for_env009(tmp_path):
    proc = ztsa("check", "--profile", "repo", "--format", "json", str(tmp_path),
                env={"LD_PRELOAD": "/nonexistent.so"})
    doc = json.loads(proc.stdout)
    env009 = next(r for r in doc["results"] if r["id"] == "ENV009")
    assert env009["status"] == "fail" and env009["gating"] is False
    assert env009["action"] == "warn"
    # ENV002 is off in the repo profile
    assert "ENV002" not in [r["id"] for r in doc["results"]]


def test_output_file_and_sarif(tmp_path):
    out = tmp_path / "report.sarif"
    proc = ztsa("check", "--format", "sarif", "--output", str(out), str(tmp_path),
                env={"LD_PRELOAD": "x"})
    assert proc.stdout == ""
    doc = json.loads(out.read_text())
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    # the machine's finding: a notification of the run, no result in a file
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert any(n["associatedRule"]["id"] == "ENV009" for n in notes)
    assert not any(r["ruleId"] == "ENV009" for r in run["results"])
    rule = next(r for r in run["tool"]["driver"]["rules"] if r["id"] == "ENV009")
    assert "env -u" in rule["help"]["text"]


def _escalating_repo(tmp_path: Path) -> Path:
    ws = tmp_path / "repo"
    (ws / ".claude").mkdir(parents=True)
    (ws / ".claude" / "settings.json").write_text(
        '{\n  "permissions": {"allow": ["Bash(*)"]}\n}\n')
    return ws


def test_github_annotations_name_the_file_and_line_and_never_a_machine_path(tmp_path):
    ws = _escalating_repo(tmp_path)
    proc = ztsa("check", "--format", "github", str(ws), env={"LD_PRELOAD": "x"})
    assert proc.returncode == 3
    lines = proc.stdout.splitlines()
    assert all(line.startswith(("::error ", "::warning ", "::notice ")) for line in lines)
    agt = next(line for line in lines if "title=AGT001" in line)
    assert agt.startswith("::error file=.claude/settings.json,line=2,title=AGT001 ")
    assert "\n" not in agt and "%0A- permissions.allow" in agt  # one line, escaped
    env = next(line for line in lines if "title=ENV009" in line)
    assert "file=" not in env  # the machine's, not the repository's
    assert lines[-1].startswith("::notice title=ztsa::gate FAILED (profile untrusted): ")


def test_sarif_locations_are_the_repositorys_files_only(tmp_path):
    ws = _escalating_repo(tmp_path)
    proc = ztsa("check", "--format", "sarif", str(ws), env={"LD_PRELOAD": "x"})
    results = json.loads(proc.stdout)["runs"][0]["results"]
    agt = next(r for r in results if r["ruleId"] == "AGT001")
    loc = agt["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": ".claude/settings.json", "uriBaseId": "%SRCROOT%"}
    assert loc["region"] == {"startLine": 2}
    assert all(r["locations"] for r in results)
    assert not [r for r in results if r["ruleId"].startswith("ENV")]


@pytest.mark.parametrize("args", [
    ("check", "/nonexistent/dir"),
    ("check", "--profile", "yolo", "."),
    ("check", "--format", "xml", "."),
    ("explain", "NOPE999"),
    ("frobnicate",),
])
def test_usage_errors_exit_2(args):
    proc = ztsa(*args)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr


def test_unwritable_output_is_a_usage_error(tmp_path):
    proc = ztsa("check", "--output", str(tmp_path / "no" / "such" / "file"), str(tmp_path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_version_and_help():
    assert ztsa("--version").stdout.strip() == f"ztsa, version {__version__}"
    help_text = ztsa("--help").stdout
    for code in ("0 ", "3 ", "2 ", "125"):
        assert code in help_text


@pytest.mark.parametrize("columns", [50, 100])
def test_help_is_wrapped_to_columns(columns):
    """argparse's width comes from ztsa (COLUMNS, else the terminal, else 80), as
    shutil.get_terminal_size would give it."""
    text = ztsa("exec", "--help", env={"COLUMNS": str(columns)}).stdout
    options = text[text.index("options:"):text.index("Exit codes")]
    assert "--allow-net SPEC" in options
    assert max(len(line) for line in options.splitlines()) <= columns - 2
    assert max(len(line) for line in options.splitlines()) > columns - 20


def test_building_the_parser_looks_up_no_catalogue():
    """argparse's messages are not looked up in gettext catalogues (a search under
    /usr/share/locale per message, with locale's import), and read as written whatever
    the locale; nor is shutil imported for the terminal width. gettext itself is the
    real module, unchanged for others."""
    code = ("import sys, gettext\n"
            "looked_up = []\n"
            "gettext.find = lambda *a, **k: looked_up.append(a)\n"
            "from ztsa import cli\n"
            "cli.build_parser().parse_args(['exec', '--profile', 'repo'])\n"
            "print(sorted({'locale', 'shutil'} & set(sys.modules)), looked_up)\n"
            "import argparse\n"
            "print(gettext.ngettext is not argparse.ngettext, gettext.__file__ is not None)\n"
            "p = argparse.ArgumentParser(prog='x')\n"
            "p.add_argument('--n', type=int)\n"
            "try: p.parse_args(['--n', 'a'])\n"
            "except SystemExit: pass\n"
            "print('locale' in sys.modules, looked_up)\n")
    # -S, as the installed command starts: site's .pth files may import anything
    proc = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True,
                          env={**os.environ, "LANG": "de_DE.UTF-8", "LANGUAGE": "de"},
                          timeout=60, cwd=Path(__file__).parent.parent)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:3] == ["[] []", "True True", "False []"]
    assert "error: argument --n: invalid int value: 'a'" in proc.stderr  # as written


def test_rules_and_explain():
    doc = json.loads(ztsa("rules", "--format", "json").stdout)
    env006 = next(r for r in doc if r["id"] == "ENV006")
    assert env006["slug"] == "dangerous-capabilities"
    assert env006["actions"] == {"repo": "warn", "dependency": "block", "untrusted": "block"}
    assert env006["nature"] == "env-escape"
    sup012 = next(r for r in doc if r["id"] == "SUP012")  # hygiene: never blocks
    assert sup012["nature"] == "hygiene" and set(sup012["actions"].values()) == {"warn"}
    text = ztsa("rules", "--profile", "repo").stdout
    assert "ENV002" in text and "off" in text
    explained = ztsa("explain", "env006").stdout
    for section in ("## What it checks", "## Why it matters", "## How to fix"):
        assert section in explained
    assert ztsa("explain", "running-as-root").stdout.startswith("ENV001 running-as-root")


def test_colour_only_on_a_terminal_and_never_with_no_color(tmp_path):
    def on_tty(extra_env: dict[str, str]) -> str:
        leader, follower = pty.openpty()
        env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
        env.update(extra_env, LD_PRELOAD="x")
        proc = subprocess.Popen([sys.executable, "-m", "ztsa", "check", str(tmp_path)],
                                stdout=follower, stderr=subprocess.DEVNULL, env=env)
        os.close(follower)
        chunks = []
        while True:
            try:
                data = os.read(leader, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        proc.wait(timeout=60)
        os.close(leader)
        return b"".join(chunks).decode()

    assert "\x1b[31m" in on_tty({})
    assert "\x1b[" not in on_tty({"NO_COLOR": "1"})


def test_internal_error_is_125_and_one_line(monkeypatch, capsys, tmp_path):
    import ztsa.engine

    def broken(ctx, **kw):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(ztsa.engine, "run", broken)
    assert cli.main(["check", str(tmp_path)]) == 125
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "ztsa: internal error: RuntimeError: disk on fire (run with --debug for a traceback)"]
    assert cli.main(["--debug", "check", str(tmp_path)]) == 125
    assert "Traceback" in capsys.readouterr().err


def _rule(check) -> Rule:
    return Rule(id="ENV999", slug="broken", category=Category.ENV, title="t",
                severity=Severity.LOW, actions=parse_actions("B/B/B"), doc="", check=check,
                module=__name__)


def test_a_rule_that_raises_is_unknown(tmp_path):
    def boom(ctx):
        return {}["missing"]

    out = evaluate(_rule(boom), Context(Host(), str(tmp_path)))
    assert out.status is Status.UNKNOWN and "KeyError" in out.message


def test_a_rule_that_returns_garbage_is_unknown(tmp_path):
    out = evaluate(_rule(lambda ctx: True), Context(Host(), str(tmp_path)))
    assert out.status is Status.UNKNOWN


@pytest.mark.parametrize(("args", "usage", "hint"), [
    (("exec", "--bogus", "--", "true"), "usage: ztsa exec", False),
    (("exec", "--profile", "repo", "true"), "usage: ztsa exec", True),
    (("check", "--bogus", "."), "usage: ztsa check", False),
    (("rules", "--bogus"), "usage: ztsa rules", False),
])
def test_unknown_arguments_get_the_commands_own_usage(args, usage, hint):
    proc = ztsa(*args)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(usage), proc.stderr
    assert "unrecognized arguments:" in proc.stderr
    assert ("CMD goes after --" in proc.stderr) == hint


def test_a_file_or_an_unreadable_directory_says_what_it_is(tmp_path):
    f = tmp_path / "file.txt"
    f.write_text("x")
    proc = ztsa("check", str(f))
    assert proc.returncode == 2 and "is not a directory" in proc.stderr


@pytest.mark.parametrize("spec,says", [
    ("10.0.0.300", "not a valid IP address or network"),
    ("10.0.0.0/33", "not a valid IP address or network"),
    ("http://example.com/x", "drop the scheme"),
    ("::1:80", "write [::1]:80 for a port"),
    ("2001:db8::1:443", "ambiguous"),
])
def test_allow_net_mistakes_are_usage_errors_without_a_lookup(tmp_path, spec, says):
    proc = ztsa("exec", "--profile", "repo", "--workspace", str(tmp_path),
                f"--allow-net={spec}", "--", "true")
    assert proc.returncode == 2, proc.stderr
    assert says in proc.stderr


def test_explain_exec001_and_debug_after_the_subcommand():
    proc = ztsa("explain", "EXEC001")
    assert proc.returncode == 0 and "confinement-incomplete" in proc.stdout
    assert "How to fix" in proc.stdout
    assert ztsa("rules", "--debug").returncode == 0


@pytest.mark.parametrize("env,colour", [
    ({"NO_COLOR": ""}, True), ({"NO_COLOR": "1"}, False), ({"TERM": "dumb"}, False)])
def test_colour_follows_no_color_and_term(tmp_path, env, colour):
    leader, follower = pty.openpty()
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    proc = subprocess.Popen([sys.executable, "-m", "ztsa", "check", str(tmp_path)],
                            stdout=follower, stderr=subprocess.DEVNULL,
                            env={**base, "TERM": "xterm", **env})
    os.close(follower)
    out = b""
    while True:  # read as it comes: a full terminal buffer would stop the writer
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the writer closed its side
            break
        if not chunk:
            break
        out += chunk
    os.close(leader)
    assert proc.wait(timeout=60) in (0, 3)
    assert (b"\x1b[" in out) is colour


def test_doctor_names_the_controls_and_what_each_profile_does():
    proc = ztsa("doctor", "--format", "json", cwd="/")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    c = doc["controls"]
    assert isinstance(c["landlock_abi"], int) and c["seccomp_user_notification"] is True
    assert set(doc["profiles"]) == {"untrusted", "dependency", "repo"}
    assert doc["profiles"]["untrusted"].startswith(
        "refuses" if c["missing"] else "runs with every control")
    assert c["network_namespace"] == c["user_namespaces"]
    assert isinstance(doc["hints"], list)
    text = ztsa("doctor", cwd="/").stdout
    assert "Landlock ABI" in text and "--profile untrusted:" in text
    assert "a network namespace for the tree" in text
    # root may always make the tree a cgroup beneath its own in a v1 hierarchy
    v1 = os.path.isdir("/sys/fs/cgroup/memory") and os.path.isdir("/sys/fs/cgroup/pids")
    assert c["tree_cgroup"].startswith(
        "cgroup v" if c["root"] and v1 else ("cgroup v", "rlimits only ("))
    assert "the tree's memory and process totals" in text
    # the set-up: ztsa-ns where this installation has one (a source tree's `python -m
    # ztsa` has none); AppArmor's advice only where it restricts user namespaces
    ns = c["ztsa_ns"]
    assert ns is None or (os.path.isabs(ns) and os.access(ns, os.X_OK)), ns
    assert ("the set-up (namespaces, helper): " + (
        f"ztsa-ns, {ns}" if ns else "a fork of ztsa (no ztsa-ns installed)")) in text
    assert (c["apparmor"] is None) == (not c["apparmor_restricts_user_namespaces"])


def test_the_pre_commit_hook_runs_the_repo_gate(tmp_path):
    import shlex

    import yaml

    hooks = yaml.safe_load((Path(__file__).parents[1] / ".pre-commit-hooks.yaml").read_text())
    hook = next(h for h in hooks if h["id"] == "ztsa-check")
    assert hook["pass_filenames"] is False and hook["language"] == "python"
    argv = shlex.split(hook["entry"])
    assert argv[:3] == ["ztsa", "check", "--profile"] and argv[3] == "repo"
    ws = _escalating_repo(tmp_path)
    # run as pre-commit runs it: the entry, in the repository, with no file names
    done = subprocess.run([sys.executable, "-m", "ztsa", *argv[1:]], cwd=ws,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "WARN   AGT001" in done.stdout  # your own repository
    (ws / ".npmrc").write_text("//registry.npmjs.org/:_authToken=npm_" + "a1B2" * 9 + "\n")
    done = subprocess.run([sys.executable, "-m", "ztsa", *argv[1:]], cwd=ws,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 3 and "BLOCK  FS005" in done.stdout, done.stdout


def test_what_the_repository_or_the_environment_names_cannot_forge_the_report(tmp_path):
    """A path or a value holding a newline, an escape sequence or a bidi override is
    shown escaped: no forged line, no hidden text, no terminal title or colour change."""
    ws = tmp_path / "repo\x1b]0;owned\x07\ngate PASSED (profile untrusted)\u202e"
    ws.mkdir()
    forged = "x.so\n\x1b[2K\x1b[32mgate PASSED\x1b[0m"
    for fmt in ("text", "github"):
        proc = ztsa("check", "--format", fmt, str(ws), env={"LD_PRELOAD": forged})
        assert proc.returncode == 3, proc.stderr
        for bad in ("\x1b", "\x07", "\u202e"):
            assert bad not in proc.stdout, (fmt, bad)
        lines = proc.stdout.splitlines()
        assert not any(line.startswith(("gate PASSED", "\\x1b")) for line in lines), fmt
        assert "gate FAILED" in lines[-1]
        if fmt == "text":
            assert "repo\\x1b]0;owned\\x07\\ngate PASSED" in proc.stdout  # shown, escaped
