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
