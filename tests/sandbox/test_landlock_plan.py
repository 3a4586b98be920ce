"""The Landlock plan: write rules, read rules around the credential paths, and what
happens when the read rules would be too many."""

import os

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


def test_kept_layer_grants_every_writable_place_but_the_agents_kept_state(tmp_path):
    """--agent: the kept-state layer grants what the first ruleset grants, but a writable
    root holding kept entries entry by entry along the way, the kept entries, the
    directories on the way (where the tree's kernel makes no name: the helper's) and
    symbolic links nothing."""
    private, ws = tmp_path / "run", tmp_path / "ws"
    claude = private / "home" / ".claude"
    for d in (claude / "projects", claude / "session-env", private / "tmp", ws):
        d.mkdir(parents=True)
    (claude / "history.jsonl").touch()
    (private / "home" / ".claude.json").touch()
    os.symlink(claude / "projects", private / "home" / "link")
    first = landlock.plan(7, [str(ws), str(private)], None)
    kept = landlock.kept_plan(first, [str(claude / "projects"), str(claude / "history.jsonl")])
    assert kept is not None
    granted = dict(kept.rules)
    assert str(claude / "projects") not in granted and str(claude / "history.jsonl") not in granted
    for d in (private, private / "home", claude):  # the way: no rule, which covers below
        assert str(d) not in granted
    assert kept.way == [str(private), str(private / "home"), str(claude)]
    assert str(private / "home" / "link") not in granted  # a link could lead anywhere
    assert granted[str(ws)] == kept.handled
    assert granted[str(private / "tmp")] == granted[str(claude / "session-env")] == kept.handled
    assert granted[str(private / "home" / ".claude.json")] == kept.handled & landlock.FILE_RIGHTS
    assert kept.handled & landlock.WRITE_FILE and kept.handled & landlock.MAKE_REG
    assert not kept.handled & (landlock.REMOVE_FILE | landlock.READ)
    # nothing to keep, or no Landlock writes: no layer
    assert landlock.kept_plan(first, []) is None
    assert landlock.kept_plan(landlock.plan(0, [str(ws)], None), [str(claude / "projects")]) \
        is None
    # a writable place inside a kept entry is granted nothing by it
    inner = claude / "projects" / "p"
    inner.mkdir()
    first = landlock.plan(7, [str(ws), str(private), str(inner)], None)
    kept = landlock.kept_plan(first, [str(claude / "projects")])
    assert kept is not None and str(inner) not in dict(kept.rules)
