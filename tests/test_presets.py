"""Network presets (ztsa/sandbox/presets.py): `--allow-net @NAME` and `"@NAME"` in a
policy file are the table's hosts on port 443, read where the rules are read; an
unknown one is a usage error naming the presets; the docs hold the table itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ztsa import cli, tiers
from ztsa.sandbox import presets
from ztsa.sandbox.policy import parse_net

ROOT = Path(__file__).parents[1]
# what issue #40 asked for, at least
REQUIRED = {
    "npm": {"registry.npmjs.org"},
    "pypi": {"pypi.org", "files.pythonhosted.org"},
    "crates": {"crates.io", "index.crates.io", "static.crates.io"},
    "go": {"proxy.golang.org", "sum.golang.org"},
    "rubygems": {"rubygems.org", "index.rubygems.org"},
    "maven": {"repo.maven.apache.org", "repo1.maven.org"},
    "github": {"github.com", "api.github.com", "codeload.github.com",
               "objects.githubusercontent.com", "raw.githubusercontent.com"},
}


def ztsa(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    # from / by default: the installed ztsa, with its native module (a checkout installed
    # with `pip install .` has none of its own)
    return subprocess.run([sys.executable, "-m", "ztsa", *args], capture_output=True,
                          text=True, timeout=60, cwd=cwd or "/",
                          env={**os.environ, **(env or {})})


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Policy tiers of our own (enterprise, user) and a workspace."""
    ent = tmp_path / "etc" / "policy.toml"
    ent.parent.mkdir()
    xdg = tmp_path / "xdg"
    (xdg / "ztsa").mkdir(parents=True)
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.setenv("ZTSA_SYSTEM_POLICY", str(ent))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    return {"enterprise": ent, "user": xdg / "ztsa" / "policy.toml", "ws": ws}


@pytest.fixture
def exec_rules(monkeypatch: pytest.MonkeyPatch) -> Any:
    """`ztsa exec` in this process up to the run: the gate passes, nothing starts, and
    the call returns the policy the run would have had (its NetRules)."""
    import ztsa.sandbox.cgroup
    import ztsa.sandbox.native
    import ztsa.sandbox.run

    seen: dict[str, Any] = {}

    def execute(request: Any, offer: Any, policy: Any, *a: Any, **kw: Any) -> int:
        seen["policy"] = policy
        return 0

    monkeypatch.setattr(ztsa.sandbox.run, "execute", execute)
    monkeypatch.setattr(ztsa.sandbox.cgroup, "prewarm", lambda: None)
    # names followed in the tree's network namespace: none is resolved here
    monkeypatch.setattr(ztsa.sandbox.native, "userns_available", lambda *a, **kw: True)
    monkeypatch.setattr(cli, "run_gate", lambda *a, **kw: True)

    def run(*argv: str) -> Any:
        seen.clear()
        code = cli.main(list(argv))
        return code, seen.get("policy")

    return run


def hosts_of(policy: Any) -> list[tuple[str | None, int | None]]:
    return [(r.name, r.port) for r in policy.net]


# -- the table ---------------------------------------------------------------------------
def test_the_table_is_https_hosts_with_reasons_and_no_wildcard():
    assert {n: {h.name for h in p.hosts} for n, p in presets.PRESETS.items()
            if n in REQUIRED} == {n: {h for h in REQUIRED[n] | (
                {"release-assets.githubusercontent.com"} if n == "github" else set())}
                for n in REQUIRED}
    for p in presets.PRESETS.values():
        assert p.description and p.hosts
        for h in p.hosts:
            assert h.why and "*" not in h.name
            rule = parse_net(f"{h.name}:{presets.PORT}", resolve_names=False)
            assert rule.name == h.name and rule.port == 443 and not rule.suffix
        assert p.specs == tuple(f"{h.name}:443" for h in p.hosts)
        assert len(set(p.specs)) == len(p.specs)


def test_the_docs_and_the_help_list_the_table():
    """docs/policy.md holds the table and the README the summary, as generated; exec's
    help names every preset."""
    assert presets.render_markdown() in (ROOT / "docs" / "policy.md").read_text()
    assert presets.render_summary() in (ROOT / "README.md").read_text()
    done = ztsa("exec", "--help", env={"COLUMNS": "200"})
    assert all(f"@{n}" in done.stdout for n in presets.PRESETS), done.stdout
    top = ztsa("--help", env={"COLUMNS": "200"}).stdout
    assert "list the network presets" in top


def test_policy_presets_prints_the_table():
    done = ztsa("policy", "presets")
    assert done.returncode == 0, done.stderr
    assert done.stdout == presets.render_text()
    for p in presets.PRESETS.values():
        assert f"@{p.name}: {p.description}" in done.stdout
        assert all(f"  {h.name}:443 " in done.stdout for h in p.hosts)
    as_json = ztsa("policy", "presets", "--format", "json")
    assert json.loads(as_json.stdout) == presets.render_json()
    assert {e["name"] for e in json.loads(as_json.stdout)} == {f"@{n}" for n in presets.PRESETS}
    assert ztsa("policy", "presets", "extra").returncode == 2


# -- the command line --------------------------------------------------------------------
def test_allow_net_at_npm_is_exactly_the_tables_hosts_on_443(world, exec_rules):
    code, policy = exec_rules("exec", "--profile", "repo", "--workspace", str(world["ws"]),
                              "--allow-net", "@npm", "--allow-net", "example.org:8080",
                              "--allow-net", "@pypi", "--", "true")
    assert code == 0
    assert hosts_of(policy) == [("registry.npmjs.org", 443), ("example.org", 8080),
                                ("pypi.org", 443), ("files.pythonhosted.org", 443)]
    assert [r.spec for r in policy.net] == ["registry.npmjs.org:443", "example.org:8080",
                                            "pypi.org:443", "files.pythonhosted.org:443"]
    # the table's hosts, whatever they are
    for name, p in presets.PRESETS.items():
        _, policy = exec_rules("exec", "--profile", "repo", "--workspace", str(world["ws"]),
                               "--allow-net", f"@{name}", "--", "true")
        assert hosts_of(policy) == [(h.name, 443) for h in p.hosts], name


@pytest.mark.parametrize("spec", ["@nosuch", "@", "@pypi.org", "@npm:443"])
def test_an_unknown_preset_is_a_usage_error_naming_the_presets(world, spec):
    done = ztsa("exec", "--profile", "repo", "--workspace", str(world["ws"]),
                f"--allow-net={spec}", "--", "true")
    assert done.returncode == 2, done.stderr
    assert f"{spec!r} is not a network preset" in done.stderr, done.stderr
    assert "(known: @npm, @pypi, @crates, @go, @rubygems, @maven, @github;" in done.stderr


def test_a_higher_tiers_deny_of_one_host_refuses_the_preset(world):
    world["enterprise"].write_text('[net]\ndeny = ["files.pythonhosted.org"]\n')
    done = ztsa("exec", "--profile", "repo", "--workspace", str(world["ws"]),
                "--allow-net", "@pypi", "--", "true")
    assert done.returncode == 2, done.stderr
    assert ("--allow-net @pypi (command line) is refused: it opens "
            f"'files.pythonhosted.org', forbidden by {world['enterprise']}:2 (enterprise)"
            ) in done.stderr.replace("\n", " ")


# -- policy files ------------------------------------------------------------------------
def test_a_preset_in_a_policy_file_is_its_hosts(world, exec_rules, tmp_path):
    node = tmp_path / "bin" / "node"
    node.parent.mkdir()
    node.write_text("")
    world["user"].write_text(
        '[net]\nallow = [\n  "@pypi",\n'
        f'  {{to = "@npm", binaries = ["{node}"]}},\n]\n')
    t = tiers.load(str(world["ws"]), "repo")
    entries = t.entries[("net", "allow")]
    assert [(e.value, e.where, e.preset, e.binaries) for e in entries] == [
        ("pypi.org:443", f"{world['user']}:3", "@pypi", ()),
        ("files.pythonhosted.org:443", f"{world['user']}:3", "@pypi", ()),
        ("registry.npmjs.org:443", f"{world['user']}:4", "@npm", (str(node),))]
    assert tiers.programs(t, []) == {"registry.npmjs.org:443": (str(node),)}
    assert tiers.programs(t, ["@npm"]) == {}  # the flag opens the preset to every program
    shown = ztsa("policy", "show", "--workspace", str(world["ws"])).stdout
    assert (f"net.allow = 'pypi.org:443'  ({world['user']}:3 (user), from @pypi)"
            in shown), shown
    assert ztsa("policy", "check", str(world["user"])).returncode == 0
    code, policy = exec_rules("exec", "--profile", "repo", "--workspace", str(world["ws"]),
                              "--", "true")
    assert code == 0
    assert hosts_of(policy) == [("pypi.org", 443), ("files.pythonhosted.org", 443),
                                ("registry.npmjs.org", 443)]
    assert [r.binaries for r in policy.net] == [(), (), (str(node),)]


def test_an_unknown_preset_in_a_policy_file_names_its_line(world):
    world["user"].write_text('[net]\nallow = [\n  "ok.test",\n  "@pip",\n]\n')
    done = ztsa("policy", "check", str(world["user"]))
    assert done.returncode == 2
    assert done.stderr.startswith(f"ztsa: error: {world['user']}:4: net.allow: '@pip' is "
                                  "not a network preset (known: @npm,"), done.stderr
    ran = ztsa("exec", "--profile", "repo", "--", "true", cwd=world["ws"])
    assert ran.returncode == 2 and "'@pip' is not a network preset" in ran.stderr


def test_under_untrusted_a_repositorys_preset_counts_as_its_hosts(world, exec_rules):
    """A workspace's allow of a preset is ignored under untrusted, as its hosts would
    be (and said once, as the preset); its deny of a preset counts, and refuses a
    flag that opens one of the hosts."""
    (world["ws"] / ".ztsa.toml").write_text('[net]\nallow = ["@pypi"]\ndeny = ["@github"]\n')
    t = tiers.load(str(world["ws"]), "untrusted")
    assert t.values("net", "allow") == []
    assert [(e.value, e.preset) for e in t.ignored()] == [
        ("pypi.org:443", "@pypi"), ("files.pythonhosted.org:443", "@pypi")]
    assert t.values("net", "deny") == list(presets.PRESETS["github"].specs)
    assert tiers.load(str(world["ws"]), "repo").values("net", "allow") == [
        "pypi.org:443", "files.pythonhosted.org:443"]
    with pytest.raises(tiers.PolicyFileError, match=r"it opens 'api\.github\.com:443'"):
        tiers.merge_exec(t, {"allow_net": ["api.github.com"]}, str(world["ws"]), None)
    done = ztsa("exec", "--workspace", str(world["ws"]), "--allow-net", "@github", "--",
                "true")
    assert done.returncode == 2 and "--allow-net @github (command line) is refused" in \
        done.stderr, done.stderr
    (world["ws"] / ".ztsa.toml").write_text('[net]\nallow = ["@pypi"]\n')
    code, policy = exec_rules("exec", "--workspace", str(world["ws"]), "--", "true")
    assert code == 0 and hosts_of(policy) == []


def test_the_end_of_run_line_names_the_preset_of_a_refused_host():
    from ztsa.sandbox.run import _denial_hint

    assert _denial_hint("dns", "files.pythonhosted.org", "not in --allow-net") == (
        "dns files.pythonhosted.org (not in --allow-net: --allow-net @pypi)")
    assert _denial_hint("dns", "example.org", "not in --allow-net") == (
        "dns example.org (not in --allow-net: --allow-net example.org)")
