"""Policy tiers (ztsa/tiers.py): real files in temporary trees, read through the CLI where
the person would, and the merge of exec's flags with them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ztsa import tiers


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    ent = tmp_path / "etc" / "policy.toml"
    ent.parent.mkdir()
    xdg = tmp_path / "xdg"
    (xdg / "ztsa").mkdir(parents=True)
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.setenv("ZTSA_SYSTEM_POLICY", str(ent))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    return {"enterprise": ent, "user": xdg / "ztsa" / "policy.toml", "ws": ws}


def ztsa(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ztsa", *args], capture_output=True,
                          text=True, timeout=60, cwd=cwd, env=dict(os.environ))


def test_every_entry_keeps_its_file_and_line(world):
    world["enterprise"].write_text('[net]\ndeny = ["203.0.113.0/24"]\n')
    world["user"].write_text('# mine\n[fs]\nallow_read = [\n  "~/.config/tool",\n]\n')
    (world["ws"] / ".ztsa.toml").write_text('net.allow = ["example.org:443"]\n')
    t = tiers.load(str(world["ws"]), "repo")
    assert [e.where for e in t.entries[("net", "deny")]] == [f"{world['enterprise']}:2"]
    assert t.entries[("fs", "allow_read")][0].where == f"{world['user']}:4"
    assert t.entries[("fs", "allow_read")][0].value == os.path.expanduser("~/.config/tool")
    assert t.entries[("net", "allow")][0].where == f"{world['ws'] / '.ztsa.toml'}:1"
    shown = ztsa("policy", "show", "--workspace", str(world["ws"]), "--format", "json")
    doc = json.loads(shown.stdout)
    assert [f["tier"] for f in doc["files"]] == ["enterprise", "user", "workspace"]
    assert {(e["section"], e["key"], e["tier"]) for e in doc["entries"]} == {
        ("net", "deny", "enterprise"), ("fs", "allow_read", "user"),
        ("net", "allow", "workspace")}


def test_pyproject_tool_ztsa_is_the_workspace_tier(world):
    (world["ws"] / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.ztsa.env]\npass = ["CI"]\n')
    t = tiers.load(str(world["ws"]), "repo")
    assert t.entries[("env", "pass")] == [
        tiers.Entry("CI", "workspace", f"{world['ws'] / 'pyproject.toml'}:5")]


@pytest.mark.parametrize(("text", "line", "says"), [
    ('[net]\nallw = ["x"]\n', 2, "unknown key 'allw' in [net]"),
    ('[nett]\nallow = ["x"]\n', 1, "unknown section [nett]"),
    ('[net]\nallow = [\n  "ok.test",\n  "http://x",\n]\n', 4, "drop the scheme"),
    ('[net]\nallow = "x"\n', 2, "must be an array"),
    ('[net]\nlisten = [0]\n', 2, "is not a port"),
    ('[env]\npass = ["A-B"]\n', 2, "is not a variable name"),
    ('[exec]\nminimum_profile = "strict"\n', 2, "is not a profile"),
    ('[exec]\nagents = ["cursor"]\n', 2, "is not an agent"),
    ('[rules]\nnever_waive = ["agt001"]\n', 2, "is not a rule ID"),
    ('[fs]\nallow_write = ["relative/dir"]\n', 2, "write an absolute path"),
    ('[[waiver]]\nrule = "SUP003"\n', 1, "[[waiver]] needs 'reason'"),
])
def test_a_wrong_file_is_an_error_naming_file_line_and_key(world, text, line, says):
    world["user"].write_text(text)
    done = ztsa("policy", "check", str(world["user"]))
    assert done.returncode == 2, done.stdout
    assert done.stderr.startswith(f"ztsa: error: {world['user']}:{line}: "), done.stderr
    assert says in done.stderr
    # and exec refuses to run with it, before anything starts
    ran = ztsa("exec", "--profile", "repo", "--", "true", cwd=world["ws"])
    assert ran.returncode == 2 and says in ran.stderr


def test_invalid_toml_names_the_line(world):
    world["enterprise"].write_text('[net]\nallow = [\n')
    done = ztsa("policy", "show", "--workspace", str(world["ws"]))
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"ztsa: error: {world['enterprise']}:2: not valid TOML")
    world["enterprise"].write_text('[net]\nallow = ["a"]\nallow = ["b"]\n[fs]\n')
    done = ztsa("policy", "show", "--workspace", str(world["ws"]))
    assert done.stderr.startswith(f"ztsa: error: {world['enterprise']}:3: "), done.stderr


def test_a_workspace_may_only_tighten_under_untrusted(world):
    (world["ws"] / ".ztsa.toml").write_text(
        '[net]\nallow = ["example.org:443"]\ndeny = ["198.51.100.0/24"]\n'
        '[exec]\nminimum_profile = "untrusted"\n')
    t = tiers.load(str(world["ws"]), "untrusted")
    assert t.values("net", "allow") == [] and t.values("net", "deny") == ["198.51.100.0/24"]
    assert [e.value for e in t.ignored()] == ["example.org:443"]
    assert tiers.load(str(world["ws"]), "repo").values("net", "allow") == ["example.org:443"]
    # its minimum profile holds, as any tier's
    done = ztsa("check", "--profile", "dependency", str(world["ws"]))
    assert done.returncode == 2 and "below the minimum profile 'untrusted'" in done.stderr


def test_what_a_higher_tier_forbids_no_lower_tier_or_flag_opens(world):
    world["enterprise"].write_text(
        '[net]\ndeny = ["203.0.113.0/24", "*.evil.test"]\n[fs]\ndeny_read = ["/srv/vault"]\n'
        'deny_write = ["/srv"]\n[env]\ndeny = ["AWS_SECRET_ACCESS_KEY"]\n')
    world["user"].write_text('[net]\nallow = ["a.evil.test:443"]\n')
    t = tiers.load(str(world["ws"]), "repo")
    with pytest.raises(tiers.PolicyFileError, match=r"policy.toml:2 \(user\) is refused: "
                       r"it opens '\*.evil.test', forbidden by .*etc/policy.toml:2"):
        tiers.merge_exec(t, {}, str(world["ws"]), None)
    world["user"].write_text("")
    t = tiers.load(str(world["ws"]), "repo")
    for flags in ({"allow_net": ["0.0.0.0/0"]}, {"allow_net": ["*.x.evil.test"]},
                  {"allow_read": ["/srv/vault/keys"]}, {"allow_write": ["/srv/data"]},
                  {"allow_read": ["/"]}, {"env_specs": ["AWS_SECRET_ACCESS_KEY=x"]},
                  {"secrets": ["AWS_SECRET_ACCESS_KEY"]}):
        with pytest.raises(tiers.PolicyFileError, match="forbidden by"):
            tiers.merge_exec(t, flags, str(world["ws"]), None)
    merged = tiers.merge_exec(t, {"allow_net": ["example.org:443", "*.other.test"]},
                              str(world["ws"]), None)
    assert merged["allow_net"] == ["example.org:443", "*.other.test"]
    with pytest.raises(tiers.PolicyFileError, match=r"--workspace /srv/repo .* it reaches"):
        tiers.merge_exec(t, {}, "/srv/repo", None)
    done = ztsa("exec", "--profile", "repo", "--allow-net", "203.0.113.9:443", "--", "true",
                cwd=world["ws"])
    assert done.returncode == 2 and "forbidden by" in done.stderr


def test_the_policy_adds_to_the_flags(world):
    os.makedirs(world["ws"] / "out")
    world["user"].write_text('[net]\nallow = ["example.org:443"]\nlisten = [8080]\n'
                             f'[fs]\nallow_write = ["{world["ws"] / "out"}"]\n'
                             '[exec]\nagents = ["claude"]\n[env]\nsecret = ["K"]\n')
    t = tiers.load(str(world["ws"]), "repo")
    merged = tiers.merge_exec(t, {"allow_net": ["b.test"], "allow_listen": [9090]},
                              str(world["ws"]), None)
    assert merged["allow_net"] == ["example.org:443", "b.test"]
    assert merged["allow_listen"] == ["8080", "9090"]
    assert merged["agents"] == ["claude"] and merged["secrets"] == ["K"]
    assert merged["allow_write"] == [str(world["ws"] / "out")]


def test_the_json_schema_in_docs_says_what_the_parser_accepts(world):
    import jsonschema

    from ztsa.parsing import load_toml

    schema = json.loads((Path(__file__).parents[1] / "docs" / "policy-schema.json").read_text())
    good = ('[net]\nallow = ["example.org:443"]\ndeny = ["203.0.113.0/24"]\nlisten = [8080]\n'
            '[fs]\ndeny_read = ["/srv/vault"]\n[env]\npass = ["CI"]\n[exec]\n'
            'agents = ["codex"]\nminimum_profile = "dependency"\n[rules]\n'
            'never_waive = ["AGT001"]\n')
    jsonschema.validate(load_toml(good, "good"), schema)
    world["user"].write_text(good)
    assert ztsa("policy", "check", str(world["user"])).returncode == 0
    for bad in ('[net]\nallw = ["x"]\n', '[exec]\nagents = ["cursor"]\n',
                '[net]\nlisten = [70000]\n'):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(load_toml(bad, "bad"), schema)
        world["user"].write_text(bad)
        assert ztsa("policy", "check", str(world["user"])).returncode == 2
    assert set(schema["properties"]) == {*tiers.SCHEMA, "waiver"}
    assert set(schema["properties"]["waiver"]["items"]["properties"]) == tiers.WAIVER_KEYS
    for section, keys in tiers.SCHEMA.items():
        assert set(schema["properties"][section]["properties"]) == set(keys)


def test_a_rule_for_listed_programs(world, tmp_path):
    node = tmp_path / "bin" / "node"
    node.parent.mkdir()
    node.write_text("")
    link = tmp_path / "bin" / "nodejs"
    os.symlink(node, link)
    world["user"].write_text(
        f'[net]\nallow = [\n  {{to = "registry.npmjs.org:443", binaries = ["{link}"]}},\n'
        '  "example.org:443",\n]\n')
    t = tiers.load(str(world["ws"]), "repo")
    e = t.entries[("net", "allow")][0]
    assert e.value == "registry.npmjs.org:443" and e.binaries == (str(node),)  # resolved
    assert e.where == f"{world['user']}:3"
    assert tiers.programs(t, []) == {"registry.npmjs.org:443": (str(node),)}
    # the same spec as a flag is open to every program
    assert tiers.programs(t, ["registry.npmjs.org:443"]) == {}
    for bad, says in (('{to = "a.test", binaries = ["node"]}', "absolute paths"),
                      ('{to = "a.test", binaries = []}', "absolute paths"),
                      ('{to = "a.test", programs = ["/x"]}', "unknown key 'programs'")):
        world["user"].write_text(f"[net]\nallow = [{bad}]\n")
        done = ztsa("policy", "check", str(world["user"]))
        assert done.returncode == 2 and says in done.stderr, done.stderr


def test_what_an_attack_review_found_is_refused(world, tmp_path, monkeypatch):
    """Spellings and side doors around an enterprise deny (each was a way through)."""
    secret_dir = tmp_path / "srv" / "secret"
    secret_dir.mkdir(parents=True)
    link = tmp_path / "srvlink"
    os.symlink(tmp_path / "srv", link)
    world["enterprise"].write_text(
        f'[fs]\ndeny_write = ["{link}/secret"]\ndeny_read = ["{secret_dir}"]\n'
        '[env]\ndeny = ["AWS_SECRET_ACCESS_KEY"]\n')
    t = tiers.load(str(world["ws"]), "repo")
    ws = str(world["ws"])
    cases = [
        {"allow_write": [str(secret_dir)]},                      # the deny spelt by a link
        {"secrets": ["A=env:AWS_SECRET_ACCESS_KEY"]},            # the value under a new name
        {"secrets": [f"F=file:{secret_dir}/key"]},               # a denied file as a secret
        {"secrets": ["C=cmd:cat /dev/null"]},                    # output nobody can judge
    ]
    for flags in cases:
        with pytest.raises(tiers.PolicyFileError, match="forbidden by"):
            tiers.merge_exec(t, flags, ws, None)
    with pytest.raises(tiers.PolicyFileError, match="forbidden by"):  # holds a denied path
        tiers.merge_exec(t, {}, str(tmp_path), None)
    with pytest.raises(tiers.PolicyFileError, match="forbidden by"):  # --home by a link
        tiers.merge_exec(t, {}, ws, f"{link}/secret/../secret")
    # a malformed flag beside a deny is a usage error, not a crash
    world["enterprise"].write_text('[net]\ndeny = ["203.0.113.0/24"]\n')
    done = ztsa("exec", "--profile", "repo", "--allow-net", "*.test", "--", "true",
                cwd=world["ws"])
    assert done.returncode == 2, done.stderr


def test_the_machines_policy_is_read_whatever_the_variable_says(world, monkeypatch):
    monkeypatch.setattr(tiers, "SYSTEM_POLICY", str(world["enterprise"]))
    world["enterprise"].write_text('[net]\ndeny = ["203.0.113.0/24"]\n')
    monkeypatch.setenv("ZTSA_SYSTEM_POLICY", str(world["ws"] / "absent.toml"))
    t = tiers.load(str(world["ws"]), "repo")
    assert t.values("net", "deny") == ["203.0.113.0/24"]


def test_a_user_tier_inside_the_workspace_is_the_repositorys(world, monkeypatch):
    config = world["ws"] / ".config"
    (config / "ztsa").mkdir(parents=True)
    (config / "ztsa" / "policy.toml").write_text('[net]\nallow = ["example.org:443"]\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    assert tiers.load(str(world["ws"]), "untrusted").values("net", "allow") == []
    assert tiers.load(str(world["ws"]), "repo").entries[("net", "allow")][0].tier == "workspace"


def test_a_repository_chooses_no_secret_and_reads_no_policy_through_a_link(world, tmp_path):
    (world["ws"] / ".ztsa.toml").write_text('[env]\nsecret = ["AWS_SECRET_ACCESS_KEY"]\n')
    assert tiers.load(str(world["ws"]), "repo").values("env", "secret") == []
    (world["ws"] / ".ztsa.toml").unlink()
    elsewhere = tmp_path / "elsewhere.toml"
    elsewhere.write_text('[project]\nname = "x"\n[tool.ztsa.net]\nallow = ["0.0.0.0/0"]\n')
    os.symlink(elsewhere, world["ws"] / "pyproject.toml")
    with pytest.raises(tiers.PolicyFileError, match="symbolic link"):
        tiers.load(str(world["ws"]), "repo")
    (world["ws"] / "pyproject.toml").unlink()
    (world["ws"] / "pyproject.toml").write_text(
        'tool = "x"\ndescription = """\n[tool.ztsa]\n"""\n')
    assert tiers.load(str(world["ws"]), "repo").entries == {}  # no crash, no table


def test_suggest_reads_only_audit_logs_and_one_run_at_a_time(tmp_path):
    log = tmp_path / "a.jsonl"
    line = {"schema": "ztsa.audit/v1", "time": 1.0, "event": "deny", "pid": 5,
            "syscall": "openat", "path": "/ws/.claude/settings.json",
            "rule": "protected agent file"}
    log.write_text("\n".join(json.dumps({**line, "run": r}) for r in ("a" * 16, "b" * 16)))
    done = ztsa("policy", "suggest", str(log))
    assert done.returncode == 2 and "--run" in done.stderr
    done = ztsa("policy", "suggest", str(log), "--run", "a" * 16)
    assert done.returncode == 0 and "allow_write" not in done.stdout
    assert "# not suggested: /ws/.claude/settings.json" in done.stdout
    log.write_text("not json\n")
    done = ztsa("policy", "suggest", str(log))
    assert done.returncode == 2 and f"{log}:1: not a JSON line" in done.stderr


def test_a_planted_pyproject_neither_hangs_nor_stalls_nor_cuts_a_policy(world, tmp_path):
    """A FIFO under the name would block a plain open for ever; a million blank lines
    made the old pattern quadratic; a policy past the size limit lost its tail."""
    import time
    os.mkfifo(world["ws"] / "pyproject.toml")
    start = time.monotonic()
    assert tiers.load(str(world["ws"]), "repo").entries == {}
    assert time.monotonic() - start < 5
    (world["ws"] / "pyproject.toml").unlink()
    (world["ws"] / "pyproject.toml").write_text("\n" * 1_000_000 + "x = 1\n")
    start = time.monotonic()
    assert tiers.load(str(world["ws"]), "repo").entries == {}
    assert time.monotonic() - start < 5
    world["user"].write_text('[net]\nallow = ["a.test"]\n' + "#" * tiers.POLICY_MAX + "\n")
    with pytest.raises(tiers.PolicyFileError, match="larger than"):
        tiers.load(str(world["ws"]), "repo")


def test_a_denied_path_cannot_write_entries_into_the_suggestion(tmp_path):
    """The tree chooses the paths it is denied: a newline in one ended the comment that
    names it, and the next line became an entry of the suggested policy."""
    import tomllib
    log = tmp_path / "a.jsonl"
    # suggested (its directory exists), and left out (its "directory" does not)
    suggested = f'{tmp_path}/x\n  "~",  # and\n  "..",\u202e #'
    os.makedirs(suggested)  # a directory of that name: the entry is the path itself
    planted = '/opt/x\n  "/",  # and\n  "/etc",\u202e #'
    log.write_text("".join(json.dumps({
        "schema": "ztsa.audit/v1", "time": 1.0, "event": "deny", "pid": 5, "run": "a" * 16,
        "syscall": "openat", "path": p, "rule": "read-only outside the workspace"}) + "\n"
        for p in (suggested, planted)))
    done = ztsa("policy", "suggest", str(log))
    assert done.returncode == 0, done.stderr
    assert tomllib.loads(done.stdout)["fs"]["allow_write"] == [suggested], done.stdout
    assert "# left out: /opt/x\\n" in done.stdout
    assert "\u202e" not in done.stdout
    policy = tmp_path / "p.toml"
    policy.write_text(done.stdout)
    assert ztsa("policy", "check", str(policy)).returncode == 0
