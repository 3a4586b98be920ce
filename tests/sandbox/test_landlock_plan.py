"""The Landlock plan: write rules, read rules around the credential paths, and what
happens when the read rules would be too many."""

from ztsa.sandbox import landlock


def test_credential_paths_get_no_read_rule(tmp_path):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("k")
    (home / ".bashrc").write_text("x")
    plan = landlock.plan(7, [str(tmp_path / "ws")], str(home))
    paths = {p for p, _ in plan.rules}
    assert str(home / ".bashrc") in paths
    assert not any(p == str(home / ".ssh") or p.startswith(str(home / ".ssh") + "/")
                   for p in paths)
    assert plan.handled & landlock.READ_FILE and plan.missing == []


def test_too_many_entries_on_the_way_is_a_missing_control(tmp_path):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    for i in range(30):
        (home / f"f{i}").write_text("x")
    plan = landlock.plan(7, [str(tmp_path / "ws")], str(home), limit=10)
    assert not plan.handled & landlock.READ_FILE  # reads not confined at all ...
    assert plan.handled & landlock.WRITE_FILE  # ... writes still are
    assert len(plan.missing) == 1 and "more than 10 entries" in plan.missing[0]


def test_shortcut_rules_only_repeat_what_is_already_readable(tmp_path):
    """Extra READ rules at the tops of hot trees (the workspace, PATH's prefixes, CMD's
    installation) must grant nothing new: only directories already read whole under an
    existing rule, never one holding a hidden path, never one inside it."""
    home = tmp_path / "home"
    for d in (".ssh/bin", "proj/src", ".pyenv/versions/3.11/bin", "tools/bin"):
        (home / d).mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("k")
    hidden = [str(home / c) for c in landlock.CREDENTIALS]
    read = landlock.read_rules(hidden)
    whole = {p for p, r in read if r == landlock.READ}
    dirs = [str(home / "proj"), str(home / "proj" / "src"), str(home / ".ssh" / "bin"),
            str(home), str(home / ".pyenv" / "versions" / "3.11"), "/", str(home / "absent"),
            str(home / "tools")]
    got = dict(landlock.shortcuts(read, hidden, dirs))
    assert set(got) == {str(home / "proj" / "src"), str(home / ".pyenv" / "versions" / "3.11")}
    assert set(got.values()) == {landlock.READ}
    # proj and tools are already rules of their own (entries of the home); the home holds
    # .ssh; .ssh/bin is inside it; / and absent paths get nothing
    assert str(home / "proj") in whole and str(home / "tools") in whole


def test_the_plan_adds_shortcuts_for_path_and_the_workspace(tmp_path):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("k")
    ws = home / "code" / "ws"
    tool = home / "opt" / "node" / "bin"
    for d in (ws, tool, home / ".ssh" / "bin"):
        d.mkdir(parents=True)
    plan = landlock.plan(7, [str(ws)], str(home),
                         search_path=f"{tool}:{home / '.ssh' / 'bin'}:relative")
    read = {p for p, r in plan.rules if r & landlock.READ_FILE and r == landlock.READ}
    assert {str(ws), str(tool.parent), str(tool)} <= read
    assert not any(p.startswith(str(home / ".ssh")) for p, _ in plan.rules)
