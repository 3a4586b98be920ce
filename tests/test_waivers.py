"""Waivers in policy files, judged through `ztsa check` on real files: what they cover,
when they stop holding, and that nothing is remembered between runs."""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ztsa.model import Evidence, Result, Status
from ztsa.tiers import Entry, Waiver
from ztsa.waivers import apply

SETTINGS = '{"permissions": {"allow": ["Bash(*)"]}}\n'


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    (ws / ".claude" / "settings.json").write_text(SETTINGS)
    (tmp_path / "xdg" / "ztsa").mkdir(parents=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("ZTSA_SYSTEM_POLICY", str(tmp_path / "enterprise.toml"))
    return {"ws": ws, "user": tmp_path / "xdg" / "ztsa" / "policy.toml",
            "enterprise": tmp_path / "enterprise.toml"}


def check(ws: Path, profile: str = "dependency") -> tuple[int, dict, str]:
    done = subprocess.run([sys.executable, "-m", "ztsa", "check", "--profile", profile,
                           "--format", "json", str(ws)], capture_output=True, text=True,
                          timeout=60, env=dict(os.environ))
    doc = json.loads(done.stdout) if done.stdout.startswith("{") else {}
    return done.returncode, {r["id"]: r for r in doc.get("results", [])}, done.stderr


def waiver(rule: str = "AGT001", expires: str = "2999-01-01", **covers: str) -> str:
    lines = [f'rule = "{rule}"', 'reason = "reviewed: our own VM"', f"expires = {expires}"]
    lines += [f'{k} = "{v}"' for k, v in covers.items()]
    return "[[waiver]]\n" + "\n".join(lines) + "\n"


def test_a_reviewed_file_is_waived_until_it_changes_and_every_run_judges_afresh(world):
    settings = world["ws"] / ".claude" / "settings.json"
    digest = hashlib.sha256(settings.read_bytes()).hexdigest()
    world["user"].write_text(waiver(path=".claude/settings.json", sha256=digest))
    code, results, _ = check(world["ws"])
    agt = results["AGT001"]
    assert agt["status"] == "waived" and "reviewed: our own VM" in agt["message"]
    assert agt["evidence"][-1]["detail"] == f"waived by {world['user']}:1"
    assert agt["evidence"][0]["path"] == ".claude/settings.json"  # still shown, whole
    # the same file changed: the next run judges it again, and says why it is back
    settings.write_text(SETTINGS.replace('"Bash(*)"', '"Bash(*)", "Write"'))
    code, results, _ = check(world["ws"])
    assert results["AGT001"]["status"] == "fail" and code == 3
    assert "as reviewed (sha256 " + digest[:12] in results["AGT001"]["message"]
    settings.write_text(SETTINGS)  # and back as reviewed: waived again
    assert check(world["ws"])[1]["AGT001"]["status"] == "waived"


def test_an_expired_waiver_turns_the_finding_back(world):
    world["user"].write_text(waiver(path=".claude/*", expires="2001-01-01"))
    code, results, _ = check(world["ws"])
    assert code == 3 and results["AGT001"]["status"] == "fail"
    assert "expired on 2001-01-01" in results["AGT001"]["message"]


def test_a_waiver_covers_a_finding_only_whole():
    r = Result(id="SUP003", slug="s", category="SUP", title="t", severity="high",  # type: ignore[arg-type]
               action="block", status=Status.FAIL, gating=True, message="m", fix="f",  # type: ignore[arg-type]
               evidence=(Evidence("esbuild@0.19.2 runs postinstall", path="package-lock.json"),
                         Evidence("sharp@0.33.0 runs install", path="package-lock.json")))
    one = Entry(Waiver("SUP003", "esbuild reviewed", datetime.date(2999, 1, 1),
                       package="esbuild"), "user", "p.toml:3")
    assert apply((r,), [one], "/w")[0].status is Status.FAIL
    two = Entry(Waiver("SUP003", "sharp reviewed", datetime.date(2999, 1, 1),
                       package="sharp"), "user", "p.toml:9")
    out = apply((r,), [one, two], "/w")[0]
    assert out.status is Status.WAIVED and "esbuild reviewed" in out.message
    assert "sharp reviewed" in out.message
    # a name inside another is not it
    other = Entry(Waiver("SUP003", "x", datetime.date(2999, 1, 1), package="build"),
                  "user", "p.toml:1")
    assert apply((r,), [other], "/w")[0].status is Status.FAIL
    env = Result(id="ENV009", slug="s", category="ENV", title="t", severity="high",  # type: ignore[arg-type]
                 action="block", status=Status.FAIL, gating=True, message="m", fix="f",  # type: ignore[arg-type]
                 evidence=(Evidence("environment variable LD_PRELOAD is set"),))
    by_env = Entry(Waiver("ENV009", "our profiler", datetime.date(2999, 1, 1),
                          env="LD_PRELOAD"), "user", "p.toml:1")
    assert apply((env,), [by_env], "/w")[0].status is Status.WAIVED


def test_a_rule_the_enterprise_says_never_to_waive_cannot_be_waived(world):
    world["enterprise"].write_text('[rules]\nnever_waive = ["AGT001"]\n')
    world["user"].write_text(waiver(path=".claude/settings.json"))
    code, _, err = check(world["ws"])
    assert code == 2
    assert f"{world['user']}:1 (user) is refused: a waiver of AGT001" in err
    assert f"{world['enterprise']}:2 (enterprise)" in err


def test_a_repositorys_own_waiver_counts_only_where_it_is_trusted(world):
    (world["ws"] / ".ztsa.toml").write_text(waiver(path=".claude/settings.json"))
    assert check(world["ws"], "dependency")[1]["AGT001"]["status"] == "waived"
    code, results, _ = check(world["ws"], "untrusted")
    assert code == 3 and results["AGT001"]["status"] == "fail"


@pytest.mark.parametrize(("text", "says"), [
    ('[[waiver]]\nrule = "AGT001"\nexpires = 2999-01-01\npath = "x"\n', "needs 'reason'"),
    ('[[waiver]]\nrule = "AGT001"\nreason = "r"\nexpires = "soon"\npath = "x"\n',
     "waiver.expires: a date"),
    ('[[waiver]]\nrule = "AGT001"\nreason = "r"\nexpires = 2999-01-01\n',
     "exactly one of path, env or package"),
    ('[[waiver]]\nrule = "AGT001"\nreason = "r"\nexpires = 2999-01-01\npath = "x"\n'
     'env = "Y"\n', "exactly one of path, env or package"),
    ('[net]\nallow = []\n\n[[waiver]]\nrule = "AGT001"\nreason = "r"\nexpires = 2999-01-01\n'
     'path = "x"\nowner = "me"\n', "unknown key 'owner' in [[waiver]]"),
    ('[[waiver]]\nrule = "AGT001"\nreason = "r"\nexpires = 2999-01-01\nenv = "A"\n'
     'sha256 = "00"\n', "waiver.sha256"),
])
def test_a_malformed_waiver_is_an_error_naming_its_table(world, text, says):
    world["user"].write_text(text)
    code, _, err = check(world["ws"])
    line = text.splitlines().index("[[waiver]]") + 1
    assert code == 2 and f"{world['user']}:{line}: " in err and says in err, err


def test_a_package_waiver_is_for_that_package_only():
    r = Result(id="SUP003", slug="s", category="SUP", title="t", severity="high",  # type: ignore[arg-type]
               action="block", status=Status.FAIL, gating=True, message="m", fix="f",  # type: ignore[arg-type]
               evidence=(Evidence("node_modules/lodash.evil (package-lock.json:3) has an "
                                  "install script and is not allowlisted"),))
    for name in ("lodash", "install", "script"):
        w = Entry(Waiver("SUP003", "r", datetime.date(2999, 1, 1), package=name), "user",
                  "p.toml:1")
        assert apply((r,), [w], "/w")[0].status is Status.FAIL, name
    w = Entry(Waiver("SUP003", "r", datetime.date(2999, 1, 1), package="lodash.evil"),
              "user", "p.toml:1")
    assert apply((r,), [w], "/w")[0].status is Status.WAIVED
