"""What of the real home the tree sees (plan.home_view), on real directories."""

import os

from ztsa.sandbox import landlock, plan
from ztsa.sandbox.plan import home_view, shm_view


def _tree(tmp_path):
    home = tmp_path / "home"
    for d in ("proj", ".cargo/bin", ".rustup", ".pyenv/versions/3.11/bin",
              ".pyenv/versions/3.11/lib", "shared", ".ssh", ".local/bin", ".local/share"):
        (home / d).mkdir(parents=True)
    (home / ".pyenv/versions/3.11/bin/python").write_text("")
    return home


def test_what_is_shown(tmp_path):
    home = _tree(tmp_path)
    view = home_view(str(home), str(home / "proj"), [str(home / "proj"), "/tmp/private"],
                     {"PATH": f"{home}/.cargo/bin:/usr/bin:{home}/missing",
                      "RUSTUP_HOME": str(home / ".rustup"), "HOME": "/tmp/private/home"},
                     str(home / ".pyenv/versions/3.11/bin/python"), [str(home / "shared")])
    assert view is not None and view.home == str(home)
    assert dict(view.show) == {
        str(home / "proj"): True,  # the workspace: writable
        str(home / ".cargo/bin"): False,  # PATH
        str(home / ".rustup"): False,  # named by CMD's environment
        str(home / ".pyenv/versions/3.11/bin"): False,  # CMD's own directory
        str(home / ".pyenv/versions/3.11/lib"): False,  # and its installation's lib
        str(home / "shared"): False,  # --allow-read
    }
    # parents before what lies in them, so that nested binds land in place
    paths = [p for p, _ in view.show]
    assert paths == sorted(paths, key=len)
    assert str(home / ".ssh") not in paths


def test_a_user_installed_program_shows_not_the_whole_prefix(tmp_path):
    home = _tree(tmp_path)
    (home / ".local/bin/tool").write_text("")
    view = home_view(str(home), "/work", [], {"PATH": "/usr/bin"},
                     str(home / ".local/bin/tool"), [])
    assert view is not None and dict(view.show) == {str(home / ".local/bin"): False}


def test_a_program_directly_in_a_bin_of_the_home_shows_only_that_bin(tmp_path):
    home = _tree(tmp_path)
    (home / "bin").mkdir()
    (home / "bin" / "tool").write_text("")
    view = home_view(str(home), "/work", [], {"PATH": "/usr/bin"}, str(home / "bin/tool"), [])
    assert view is not None and dict(view.show) == {str(home / "bin"): False}


def test_when_the_home_cannot_be_hidden(tmp_path):
    home = _tree(tmp_path)
    assert home_view(None, "/work", [], {}, "/bin/sh", []) is None
    assert home_view(None, "/work", [], {}, "/bin/sh", [], also=["/"]) is None
    assert home_view("/", "/work", [], {}, "/bin/sh", []) is None
    assert home_view(str(home), str(home), [], {}, "/bin/sh", []) is None  # it is the workspace
    assert home_view(str(home), str(tmp_path), [], {}, "/bin/sh", []) is None  # inside it
    assert home_view(str(home), "/work", [str(home)], {}, "/bin/sh", []) is None  # writable
    assert home_view(str(home), "/work", [], {}, "/bin/sh", [str(home)]) is None  # shown whole


def test_what_a_writable_place_holds_stays_writable(tmp_path):
    """A directory CMD's PATH or environment names inside a writable place (a project's
    node_modules/.bin, the private HOME in the runs' base) is shown with that place,
    writable: bound again read-only above it, npm could not write its own bin, nor a
    run its private HOME."""
    home = _tree(tmp_path)
    (home / "proj/node_modules/.bin").mkdir(parents=True)
    runs = tmp_path / "ztsa-0"
    (runs / "ztsa-run-1/home").mkdir(parents=True)
    view = home_view(str(home), str(home / "proj"),
                     [str(home / "proj"), str(runs / "ztsa-run-1")],
                     {"PATH": f"{home}/proj/node_modules/.bin:/usr/bin",
                      "HOME": str(runs / "ztsa-run-1/home")}, "/bin/sh", [],
                     also=[str(runs)])
    assert view is not None and view.homes == (str(home), str(runs))
    assert dict(view.show) == {str(home / "proj"): True, str(runs / "ztsa-run-1"): True}
    # the runs' base is hidden without a home too
    view = home_view(None, "/work", [str(runs / "ztsa-run-1")], {}, "/bin/sh", [],
                     also=[str(runs)])
    assert view is not None and view.homes == (str(runs),)


def test_symlinks_are_shown_where_they_lead(tmp_path):
    home = _tree(tmp_path)
    os.symlink(home / ".cargo/bin", home / "linkbin")
    view = home_view(str(home), "/work", [], {"PATH": str(home / "linkbin")}, "/bin/sh", [])
    assert view is not None and dict(view.show) == {str(home / ".cargo/bin"): False}


def test_a_virtual_environment_in_the_home_is_shown_whole(tmp_path):
    """Its python links out of it (to the base interpreter): its site-packages, beside
    the link, must be shown too, read-only."""
    import os

    from ztsa.sandbox.plan import home_view

    home = tmp_path / "home"
    venv = home / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    os.symlink("/usr/bin/python3", venv / "bin" / "python")
    ws = tmp_path / "ws"
    ws.mkdir()
    view = home_view(str(home), str(ws), [], {"PATH": "/usr/bin"}, str(venv / "bin" / "python"),
                     [])
    assert view is not None and (str(venv), False) in view.show
    # on PATH, as an activated venv puts it
    view = home_view(str(home), str(ws), [], {"PATH": f"{venv}/bin:/usr/bin"}, "/usr/bin/env",
                     [])
    assert view is not None and (str(venv), False) in view.show


def test_audit_view_is_the_enforced_view_as_prefixes(tmp_path):
    """--audit-only judges calls against the enforced run's view: the longest prefix of
    a path decides (native/audit.c), so each place must map to what the enforced run
    allows there."""
    from ztsa.sandbox import landlock
    from ztsa.sandbox.plan import HIDDEN, READONLY, UNREADABLE, WRITABLE, audit_view

    home = _tree(tmp_path)
    private = tmp_path / "private"
    private.mkdir()
    fs = landlock.plan(6, [str(home / "proj"), str(private)], str(home))
    view = home_view(str(home), str(home / "proj"), [str(home / "proj"), str(private)],
                     {"PATH": f"{home}/.cargo/bin:/usr/bin"}, "/usr/bin/python3", [])
    table = dict(audit_view(fs, view, landlock.unreadable([str(home)])))

    def kind(path: str) -> int:
        best = max((p for p in table if p == "/" or path == p or path.startswith(p + "/")),
                   key=len)
        return table[best]

    assert kind("/etc/passwd") == READONLY
    assert kind("/etc/shadow") == UNREADABLE
    assert kind(str(home / ".bashrc")) == HIDDEN
    assert kind(str(home / ".ssh/id_ed25519")) == UNREADABLE
    assert kind(str(home / ".cargo/bin/cargo")) == READONLY  # shown
    assert kind(str(home / "proj/src/x")) == WRITABLE
    assert kind(str(private / "home/.cache/x")) == WRITABLE
    assert kind("/dev/null") == WRITABLE and kind("/dev/sda") == UNREADABLE
    # reads not handled (too many read rules): nothing is unreadable by the ruleset
    no_reads = fs._replace(handled=fs.handled & ~landlock.READ)
    assert UNREADABLE not in dict(audit_view(no_reads, view, ["/etc/shadow"])).values()


def test_what_the_private_dev_shm_shows(tmp_path):
    """Only paths under /dev/shm, parents first, none inside a writable place there
    (bound back writable) nor the writable /dev/shm itself standing for them all."""
    base = f"/dev/shm/ztsa-plan-{os.getpid()}"
    try:
        for d in ("bin", "data/sub", "ws/deps"):
            os.makedirs(f"{base}/{d}")
        got = shm_view({"PATH": f"{base}/bin:/usr/bin", "CONF": f"{base}/ws/deps"},
                       f"{base}/bin/tool", [f"{base}/data/sub", f"{base}/data",
                                             str(tmp_path), f"{base}/missing"],
                       ["/dev/shm", f"{base}/ws"])
        assert got == (f"{base}/bin", f"{base}/data", f"{base}/data/sub")
    finally:
        import shutil

        shutil.rmtree(base, ignore_errors=True)


def test_without_the_file_helper_an_agents_kept_state_has_no_writer_check(tmp_path):
    """--agent without user namespaces: no helper to perform the agent's own writes, so
    no kept-state layer; the control is named missing (EXEC001: untrusted refuses)."""
    from ztsa.sandbox.offer import HostOffer
    from ztsa.sandbox.request import ExecRequest

    ws = str(tmp_path)
    req = ExecRequest(argv=("claude",), cwd=ws, workspace=ws, profile="repo",
                      agents=("claude",))
    fs = landlock.plan(7, [ws], None)
    without = HostOffer(euid=1000, userns=False, pidns=False, landlock_abi=7)
    with_ns = HostOffer(euid=1000, userns=True, pidns=True, landlock_abi=7)
    assert plan.KEPT_MISSING in plan.missing(req, without, fs)
    assert plan.KEPT_MISSING not in plan.missing(req, with_ns, fs)
    assert plan.KEPT_MISSING not in plan.missing(req._replace(agents=()), without, fs)
