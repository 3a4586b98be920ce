"""The plan of agent-file protection: which paths get read-only mounts (the escape suite
checks what the kernel and the helper then refuse)."""

import os

import pytest

from ztsa.sandbox import protect


def test_existing_agent_files_are_mounted_absent_ones_are_not(tmp_path):
    (tmp_path / "CLAUDE.md").write_text("x")
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / "src").mkdir()
    plan = protect.plan(str(tmp_path), [])
    assert sorted(plan.ro_paths) == sorted(str(tmp_path / p) for p in
                                           ("CLAUDE.md", ".claude", ".git/hooks"))
    assert ".git/config" in plan.entries and "AGENTS.md" in plan.entries


def test_a_symlinked_agent_file_protects_its_target_and_a_dangling_one_nothing(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "rules.md").write_text("x")
    (tmp_path / "CLAUDE.md").symlink_to("docs/rules.md")
    (tmp_path / "AGENTS.md").symlink_to("missing.md")
    plan = protect.plan(str(tmp_path), [])
    assert plan.ro_paths == [str(tmp_path / "docs" / "rules.md")]


def test_other_hard_links_of_a_protected_file_are_mounted_too(tmp_path):
    (tmp_path / "CLAUDE.md").write_text("x")
    (tmp_path / "sub").mkdir()
    os.link(tmp_path / "CLAUDE.md", tmp_path / "sub" / "copy.md")
    plan = protect.plan(str(tmp_path), [])
    assert sorted(plan.ro_paths) == [str(tmp_path / "CLAUDE.md"),
                                     str(tmp_path / "sub" / "copy.md")]


def test_protect_paths_are_workspace_relative(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "CLAUDE.md").write_text("x")
    plan = protect.plan(str(tmp_path), ["docs/CLAUDE.md", "./docs/../x.md"])
    assert "docs/CLAUDE.md" in plan.entries and "x.md" in plan.entries
    assert str(tmp_path / "docs" / "CLAUDE.md") in plan.ro_paths


@pytest.mark.parametrize("bad", ["..", "../x", "/etc/passwd", "."])
def test_protect_outside_the_workspace_is_refused(tmp_path, bad):
    with pytest.raises(ValueError, match="not a path inside the workspace"):
        protect.normalise(str(tmp_path), bad)
