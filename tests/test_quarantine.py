"""`ztsa quarantine list` and `restore` (issue #44), on real workspaces whose quarantine
gitguard's own audit made, or hand-made in the same shape where the shape is the
point (a hostile manifest), and once around a real `ztsa exec`."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys

import pytest

from ztsa import cli
from ztsa.sandbox import gitguard

Q = gitguard.QUARANTINE
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(*args, cwd):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e.invalid"}
    return subprocess.run(["git", *map(str, args)], cwd=cwd, env=env, check=True,
                          capture_output=True, text=True).stdout


def run(capsys, *args):
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def ws(tmp_path):
    w = tmp_path / "ws"
    w.mkdir()
    return w


def hook_run(ws, run_id="run1"):
    """A repository whose new hook gitguard's audit moved aside under run_id."""
    before = gitguard.before(str(ws))
    hooks = ws / "r" / ".git" / "hooks"
    if not hooks.exists():
        git("init", "-q", "r", cwd=ws)
        before = gitguard.before(str(ws))
    hook = hooks / "pre-commit"
    hook.write_text("#!/bin/sh\necho hi\n")
    hook.chmod(0o755)
    moved = gitguard.audit(str(ws), before, run_id)
    assert [(m.path, m.moved_to is not None, m.error) for m in moved] == [
        ("r/.git/hooks/pre-commit", True, "")]
    return hook


def hand_made(ws, run_id, entries, files=()):
    """A quarantine of gitguard's shape, written by hand: entries as given, the files
    under their flat names."""
    d = ws / Q / run_id
    d.mkdir(parents=True)
    for rel, text in files:
        (d / gitguard._flat(rel)).write_text(text)
    (d / "manifest.json").write_text(json.dumps(entries))
    return d


def entry(run_id, rel, **kw):
    return {"path": rel, "reason": "a hook git would run",
            "moved_to": f"{Q}/{run_id}/{gitguard._flat(rel)}", "replaced": "", "error": "",
            "runs": "", **kw}


@needs_git
def test_list_shows_every_run_newest_first_in_text_and_json(ws, capsys):
    hook_run(ws, "older")
    hook_run(ws, "newer")
    os.utime(ws / Q / "older" / "manifest.json", (1_000_000_000, 1_000_000_000))
    (ws / Q / "newer" / gitguard._flat("r/.git/hooks/pre-commit")).unlink()

    code, out, _ = run(capsys, "quarantine", "list", "--workspace", str(ws))
    assert code == 0
    assert out.index("run newer") < out.index("run older")
    assert "r/.git/hooks/pre-commit  [missing]" in out
    assert "r/.git/hooks/pre-commit  [present]" in out
    assert "why: a hook git would run" in out
    assert f"kept as: {Q}/older/r%2F.git%2Fhooks%2Fpre-commit" in out

    code, out, _ = run(capsys, "quarantine", "list", "--workspace", str(ws), "--format",
                       "json")
    doc = json.loads(out)
    assert code == 0 and doc["error"] is None
    assert [r["run"] for r in doc["runs"]] == ["newer", "older"]
    older = doc["runs"][1]
    assert older["when"] == "2001-09-09T01:46:40Z" and older["problem"] is None
    [e] = older["entries"]
    assert e["path"] == "r/.git/hooks/pre-commit" and e["state"] == "present"
    assert e["replaced"] == "" and e["error"] == "" and e["restored"] is False
    assert doc["runs"][0]["entries"][0]["state"] == "missing"


def test_list_of_a_workspace_without_quarantine(ws, capsys):
    code, out, _ = run(capsys, "quarantine", "list", "--workspace", str(ws))
    assert code == 0 and "moved nothing aside" in out


@needs_git
def test_restore_moves_back_without_execute_bits_and_records_it(ws, capsys):
    hook = hook_run(ws)
    manifest = ws / Q / "run1" / "manifest.json"
    os.utime(manifest, (1_000_000_000, 1_000_000_000))
    assert not hook.exists()

    code, out, err = run(capsys, "quarantine", "restore", "--workspace", str(ws), "run1",
                         "r/.git/hooks/pre-commit")
    assert code == 0 and err == ""
    assert hook.read_text() == "#!/bin/sh\necho hi\n"
    assert stat.S_IMODE(hook.stat().st_mode) & 0o111 == 0
    assert "no execute bit" in out and "chmod +x --" in out
    assert not (ws / Q / "run1" / "r%2F.git%2Fhooks%2Fpre-commit").exists()
    [item] = json.loads(manifest.read_text())
    assert item["restored"] is True and item["restored_at"]
    assert manifest.stat().st_mtime == 1_000_000_000  # "when" stays the run's
    assert stat.S_IMODE(manifest.stat().st_mode) == 0o600

    code, out, _ = run(capsys, "quarantine", "list", "--workspace", str(ws))
    assert "[restored]" in out
    # nothing left to restore, and a second restore of it changes nothing
    code, out, _ = run(capsys, "quarantine", "restore", "--workspace", str(ws), "run1",
                       "--all")
    assert code == 0 and "nothing left" in out


def test_an_execute_bit_in_the_quarantine_is_not_restored(ws, capsys):
    d = hand_made(ws, "r1", [entry("r1", "h")], [("h", "#!/bin/sh\n")])
    (d / "h").chmod(0o4755)
    code, out, _ = run(capsys, "quarantine", "restore", "--workspace", str(ws), "r1", "h")
    assert code == 0 and "execute bits cleared" in out
    assert stat.S_IMODE((ws / "h").stat().st_mode) == 0o644


@needs_git
def test_restore_never_overwrites(ws, capsys):
    hook = hook_run(ws)
    hook.write_text("mine\n")
    code, out, err = run(capsys, "quarantine", "restore", "--workspace", str(ws), "run1",
                         "r/.git/hooks/pre-commit")
    assert code == 1 and out == ""
    assert "not restored: exists now: ztsa never overwrites it" in err
    assert hook.read_text() == "mine\n"
    assert (ws / Q / "run1" / "r%2F.git%2Fhooks%2Fpre-commit").exists()
    # --force is for configs ztsa put back, not for this
    code, _, _ = run(capsys, "quarantine", "restore", "--workspace", str(ws), "--force",
                     "run1", "r/.git/hooks/pre-commit")
    assert code == 1 and hook.read_text() == "mine\n"
    assert json.loads((ws / Q / "run1" / "manifest.json").read_text())[0].get(
        "restored") is None


@pytest.mark.parametrize("rel", ["../evil", "a/../../evil", "/tmp/evil", f"{Q}/x"])
def test_restore_refuses_a_path_that_leaves_the_workspace(ws, capsys, rel):
    hand_made(ws, "r1", [entry("r1", rel)], [(rel, "x")])
    code, _, err = run(capsys, "quarantine", "restore", "--workspace", str(ws), "r1",
                       "--all")
    assert code == 1 and "not restored" in err
    assert "leaves the workspace" in err or "in the quarantine itself" in err
    assert not (ws.parent / "evil").exists()
    assert (ws / Q / "r1" / gitguard._flat(rel)).exists()


def test_restore_refuses_a_symlinked_parent(ws, tmp_path, capsys):
    outside = tmp_path / "outside"
    (outside / "hooks").mkdir(parents=True)
    (ws / "r").symlink_to(outside)
    hand_made(ws, "r1", [entry("r1", "r/hooks/pre-push")], [("r/hooks/pre-push", "x")])
    code, _, err = run(capsys, "quarantine", "restore", "--workspace", str(ws), "r1",
                       "r/hooks/pre-push")
    assert code == 1 and "passes the symbolic link r: not followed" in err
    assert not (outside / "hooks" / "pre-push").exists()


def test_restore_refuses_a_moved_to_that_is_not_its_own(ws, capsys):
    hand_made(ws, "r1", [{**entry("r1", "a"), "moved_to": f"{Q}/r1/manifest.json"},
                         {**entry("r1", "b"), "moved_to": "/etc/passwd"}])
    code, _, err = run(capsys, "quarantine", "restore", "--workspace", str(ws), "r1",
                       "a", "b")
    assert code == 1 and err.count("not trusted") == 2
    assert not (ws / "a").exists() and not (ws / "b").exists()


@pytest.mark.parametrize("text,why", [
    ("{not json", "not JSON"), ('{"a": 1}', "a JSON dict, not a list"),
    ('[{"path": 1, "reason": "", "moved_to": null, "replaced": ""}]',
     "entry 0's path has the wrong type"),
    ('[{"path": "x"}]', "entry 0 has no reason"), (b"\xff[]", "not UTF-8"),
])
def test_a_malformed_manifest_is_a_clear_error(ws, capsys, text, why):
    d = ws / Q / "r1"
    d.mkdir(parents=True)
    (d / "manifest.json").write_bytes(text if isinstance(text, bytes) else text.encode())
    code, out, err = run(capsys, "quarantine", "list", "--workspace", str(ws))
    assert code == 0 and f"manifest.json is malformed: {why}" in out
    code, out, _ = run(capsys, "quarantine", "list", "--workspace", str(ws), "--format",
                       "json")
    assert why in json.loads(out)["runs"][0]["problem"]
    code, out, err = run(capsys, "quarantine", "restore", "--workspace", str(ws), "r1",
                         "--all")
    assert code == 1 and "Traceback" not in err
    assert f"ztsa: run r1: manifest.json is malformed: {why}" in err
    assert "nothing restored" in err


def test_links_in_the_quarantine_are_not_followed(ws, tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "manifest.json").write_text(json.dumps([entry("r1", "x")]))
    d = ws / Q / "r1"
    d.mkdir(parents=True)
    (d / "manifest.json").symlink_to(elsewhere / "manifest.json")
    (ws / Q / "r2").symlink_to(elsewhere)
    code, out, _ = run(capsys, "quarantine", "list", "--workspace", str(ws))
    assert code == 0
    assert "run r1" in out and "manifest.json is a symbolic link: not followed" in out
    assert "run r2" in out and "a symbolic link, not a run's directory" in out
    code, _, err = run(capsys, "quarantine", "restore", "--workspace", str(ws), "r2", "x")
    assert code == 1 and "run r2 is a symbolic link, not a directory" in err

    shutil.rmtree(ws / Q)
    (ws / Q).symlink_to(elsewhere)
    code, out, _ = run(capsys, "quarantine", "list", "--workspace", str(ws))
    assert code == 1 and "is a symbolic link, not a directory: not followed" in out


def test_hostile_names_are_shown_escaped(ws, capsys):
    rel = "a\x1b]0;owned\x07\nb\u202e"
    hand_made(ws, "r\x1b[2J", [entry("r\x1b[2J", rel, reason="x\ry")], [(rel, "x")])
    code, out, _ = run(capsys, "quarantine", "list", "--workspace", str(ws))
    assert code == 0
    assert "\x1b" not in out and "\r" not in out and "\u202e" not in out
    assert "run r\\x1b[2J" in out and "a\\x1b]0;owned\\x07\\nb\\u202e  [present]" in out
    assert "why: x\\ry" in out


@needs_git
def test_a_config_ztsa_put_back_is_replaced_only_with_force(ws, capsys):
    git("init", "-q", ".", cwd=ws)
    config = ws / ".git" / "config"
    before = gitguard.before(str(ws))
    old = config.read_bytes()
    git("config", "core.fsmonitor", "touch pwned", cwd=ws)
    moved = gitguard.audit(str(ws), before, "c1")
    assert [(m.path, m.replaced) for m in moved] == [(".git/config", "restored")]

    code, out, _ = run(capsys, "quarantine", "list", "--workspace", str(ws))
    assert "in its place: its text from before the run" in out
    code, _, err = run(capsys, "quarantine", "restore", "--workspace", str(ws), "c1",
                       ".git/config")
    assert code == 1 and "that file is yours now; --force replaces it" in err
    assert config.read_bytes() == old
    code, out, _ = run(capsys, "quarantine", "restore", "--workspace", str(ws), "--force",
                       "c1", ".git/config")
    assert code == 0 and "it replaced its text from before the run" in out
    assert b"fsmonitor" in config.read_bytes()
    assert json.loads((ws / Q / "c1" / "manifest.json").read_text())[0]["restored"] is True


def test_paths_missing_from_the_manifest_and_unknown_runs(ws, capsys):
    hand_made(ws, "r1", [entry("r1", "x")], [("x", "1")])
    code, out, err = run(capsys, "quarantine", "restore", "--workspace", str(ws), "r1",
                         "./x", "y")
    assert code == 1 and "x: restored from run r1" in out
    assert "y: run r1's manifest has no entry for it" in err
    code, _, err = run(capsys, "quarantine", "restore", "--workspace", str(ws), "r9", "x")
    assert code == 1 and "has no run r9" in err
    code, _, err = run(capsys, "quarantine", "restore", "--workspace", str(ws), "..", "x")
    assert code == 1 and "is not a run" in err


def test_restore_usage_errors(ws, capsys):
    assert run(capsys, "quarantine", "restore", "--workspace", str(ws), "r1")[0] == 2
    assert run(capsys, "quarantine", "restore", "--workspace", str(ws), "r1", "x",
               "--all")[0] == 2
    assert run(capsys, "quarantine")[0] == 2
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "quarantine" in out


@needs_git
@pytest.mark.skipif(os.geteuid() != 0, reason="a real `ztsa exec` here runs as root")
def test_a_real_exec_then_list_and_restore(ws):
    def ztsa(*args):
        # the installed ztsa (from the workspace, not the checkout: a checkout installed
        # with `pip install .` holds no native module)
        return subprocess.run([sys.executable, "-m", "ztsa", *args], cwd=ws,
                              capture_output=True, text=True, timeout=300)

    proc = ztsa("exec", "--profile", "repo", "--workspace", str(ws), "--", "sh", "-c",
                'git init -q r && printf "#!/bin/sh\\n" > r/.git/hooks/pre-push '
                "&& chmod +x r/.git/hooks/pre-push")
    assert proc.returncode == 0, proc.stderr
    hook = ws / "r" / ".git" / "hooks" / "pre-push"
    assert not hook.exists()

    proc = ztsa("quarantine", "list", "--workspace", str(ws), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    [run_doc] = json.loads(proc.stdout)["runs"]
    [e] = run_doc["entries"]
    assert e["path"] == "r/.git/hooks/pre-push" and e["state"] == "present"
    assert "hook" in e["reason"]
    text = ztsa("quarantine", "list", "--workspace", str(ws)).stdout
    assert "r/.git/hooks/pre-push  [present]" in text

    proc = ztsa("quarantine", "restore", "--workspace", str(ws), run_doc["run"],
                "r/.git/hooks/pre-push")
    assert proc.returncode == 0, proc.stderr
    assert "chmod +x" in proc.stdout
    assert hook.read_text() == "#!/bin/sh\n"
    assert stat.S_IMODE(hook.stat().st_mode) & 0o111 == 0


def test_without_hard_links_a_rename_still_never_overwrites(ws, capsys, monkeypatch):
    hand_made(ws, "r1", [entry("r1", "x"), entry("r1", "y")], [("x", "1"), ("y", "2")])
    (ws / "y").write_text("mine")

    def no_link(*args, **kw):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_link)
    code, out, err = run(capsys, "quarantine", "restore", "--workspace", str(ws), "r1",
                         "--all")
    assert code == 1 and "x: restored" in out and "y: not restored: exists now" in err
    assert (ws / "x").read_text() == "1" and (ws / "y").read_text() == "mine"
    assert not (ws / Q / "r1" / "x").exists() and (ws / Q / "r1" / "y").exists()
