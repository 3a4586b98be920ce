"""Policy tiers under real runs: what arrives at loopback listeners, what the tree can
read, what its environment holds; a repository's own policy file cannot open anything
under `untrusted`."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import Runner, ensure_user

CONNECT = ("import socket, sys\n"
           "try:\n    socket.create_connection(('127.0.0.1', int(sys.argv[1])), 3).close()\n"
           "    print('connected')\nexcept OSError as e:\n    print('refused', e.errno)\n")


def policy_env(text: str = "") -> dict[str, str]:
    """An enterprise policy (empty: none) the run's user can read, and no user tier."""
    d = tempfile.mkdtemp(prefix="ztsa-policy-")
    os.chmod(d, 0o755)
    path = os.path.join(d, "policy.toml")
    Path(path).write_text(text)
    os.chmod(path, 0o644)
    return {"ZTSA_SYSTEM_POLICY": path, "XDG_CONFIG_HOME": d}


def user_tier(text: str | None = None) -> tuple[Path, dict[str, str]]:
    """A user tier the run's user can read ($XDG_CONFIG_HOME/ztsa, its policy.toml with
    TEXT when given), no enterprise tier, and the environment that names them."""
    xdg = Path(tempfile.mkdtemp(prefix="ztsa-xdg-"))
    (xdg / "ztsa").mkdir()
    paths = [xdg, xdg / "ztsa"]
    if text is not None:
        (xdg / "ztsa" / "policy.toml").write_text(text)
        paths.append(xdg / "ztsa" / "policy.toml")
    for p in paths:
        os.chmod(p, 0o755)
    return xdg, {"XDG_CONFIG_HOME": str(xdg), "ZTSA_SYSTEM_POLICY": str(xdg / "none.toml")}


@pytest.mark.parametrize("profile", ["repo", "untrusted"])
def test_a_workspace_allow_counts_only_where_the_repository_is_trusted(run: Runner, listeners,
                                                                       profile: str):
    port = listeners.add_tcp("service")
    (run.workspace / ".ztsa.toml").write_text(f'[net]\nallow = ["127.0.0.1:{port}"]\n')
    env = policy_env()
    if run.mode != "root":  # the user's own HOME and PATH: root's make the gate fail
        home = tempfile.mkdtemp(prefix="ztsa-user-home-")
        os.chmod(home, 0o777)
        env.update(HOME=home, PATH="/usr/local/bin:/usr/bin:/bin")
    proc, _ = run(run.python, "-c", CONNECT, str(port), profile=profile, env=env,
                  pythonpath=False)
    arrived = listeners.settle()["service"]
    if profile == "repo":
        assert "connected" in proc.stdout and arrived == 1, proc.stderr
    else:
        assert "refused" in proc.stdout and arrived == 0, proc.stdout
        assert ".ztsa.toml:2" in proc.stderr and "may only tighten" in proc.stderr


def test_a_path_the_enterprise_denies_is_unreadable_and_cannot_be_opened(run: Runner):
    vault = Path(tempfile.mkdtemp(prefix="ztsa-vault-"))
    os.chmod(vault, 0o755)
    (vault / "key").write_text("vault-secret\n")
    os.chmod(vault / "key", 0o644)
    env = policy_env(f'[fs]\ndeny_read = ["{vault}"]\n')
    proc, _ = run("sh", "-c", f"cat {vault}/key; echo rc=$?", env=env)
    assert "vault-secret" not in proc.stdout and "rc=1" in proc.stdout, proc.stderr
    control, _ = run("sh", "-c", f"cat {vault}/key", env=policy_env())
    assert "vault-secret" in control.stdout  # readable without the policy
    argv, _ = run.command("true", extra=["--allow-read", str(vault)], env=env)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "forbidden by" in done.stderr


@pytest.mark.parametrize("audit_only", [False, True], ids=["enforced", "audit-only"])
def test_denied_paths_hold_where_landlock_read_rules_overflow(run: Runner, audit_only):
    """A denied file in a directory of more entries than Landlock's read rules can list,
    and a denied directory beside it: mounts hide both, by every spelling, in both
    modes (under --audit-only too: no flag loosens a policy's deny)."""
    crowd = Path(tempfile.mkdtemp(prefix="ztsa-crowd-"))
    os.chmod(crowd, 0o755)
    for i in range(4200):
        (crowd / f"f{i}").touch()
    (crowd / "key").write_text("crowd-secret\n")
    vault = Path(tempfile.mkdtemp(prefix="ztsa-vault-"))
    (vault / "key").write_text("vault-secret\n")
    for p in (crowd / "key", vault / "key"):
        os.chmod(p, 0o644)
    os.chmod(vault, 0o755)
    os.symlink(crowd / "key", run.workspace / "link")
    env = policy_env(f'[fs]\ndeny_read = ["{crowd}/key", "{vault}"]\n')
    spellings = [f"{crowd}/key", f"{crowd}//./key", f"{vault}/../{vault.name}/key",
                 "link", f"/proc/self/root{vault}/key"]
    # and the system's secrets, which the overflowing rules no longer list: a tree of
    # root's keeps uid 0, their owner (--audit-only lets them be read, and logs it)
    spellings += ["/etc/shadow", "/etc/gshadow"]
    script = "; ".join(f"cat {p}" for p in spellings) + f"; ls -a {vault}; echo done"
    proc, _ = run("sh", "-c", script, env=env,
                  extra=["--audit-only"] if audit_only else [])
    assert "done" in proc.stdout, proc.stderr
    assert "secret" not in proc.stdout, proc.stdout
    assert audit_only or "root:" not in proc.stdout, proc.stdout
    assert "lacks Landlock read rules" in proc.stderr  # the rules overflowed: mounts held
    control, _ = run("sh", "-c", f"cat {crowd}/key {vault}/key", env=policy_env())
    assert "crowd-secret" in control.stdout and "vault-secret" in control.stdout


def test_a_denied_path_made_during_the_run_is_unreadable(run: Runner):
    """A deny_read path absent at the start that the host makes while the tree runs."""
    import threading

    d = Path(tempfile.mkdtemp(prefix="ztsa-later-"))
    os.chmod(d, 0o755)
    later = d / "later"
    env = policy_env(f'[fs]\ndeny_read = ["{later}"]\n')

    def make() -> None:
        import time

        time.sleep(1.5)
        later.write_text("made-later-secret\n")
        os.chmod(later, 0o644)

    maker = threading.Thread(target=make)
    maker.start()
    proc, _ = run("sh", "-c", f"sleep 3; cat {later}; echo done", env=env)
    maker.join()
    assert "done" in proc.stdout, proc.stderr
    assert "made-later-secret" not in proc.stdout


def test_the_unspecified_address_is_loopback_to_a_deny(run: Runner, listeners):
    """A deny of 127.0.0.1 holds for 0.0.0.0 and ::ffff:0.0.0.0, which the kernel
    connects to loopback: a rule naming them is refused before the run, and a connect
    to them is judged as one to 127.0.0.1."""
    port = listeners.add_tcp("denied")
    env = policy_env('[net]\ndeny = ["127.0.0.1/32", "::1/128"]\n')
    for spec in (f"0.0.0.0:{port}", f"[::]:{port}", "0.0.0.0/0"):
        argv, _ = run.command("true", allow=[spec], env=env)
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and "forbidden by" in done.stderr, (spec, done.stderr)
    code = ("import socket, sys\n"
            "for host, fam in (('0.0.0.0', socket.AF_INET), ('::ffff:0.0.0.0', socket.AF_INET6)):\n"
            "    s = socket.socket(fam)\n"
            "    try: s.connect((host, int(sys.argv[1]))); print('reached', host)\n"
            "    except OSError as e: print('refused', host, e.errno)\n")
    proc, _ = run(run.python, "-c", code, str(port), env=env)
    assert "reached" not in proc.stdout and proc.stdout.count("refused") == 2, proc.stdout
    assert listeners.settle()["denied"] == 0


def test_a_variable_the_enterprise_denies_never_reaches_the_tree(run: Runner):
    env = policy_env('[env]\ndeny = ["TZ", "ZT_TOKEN"]\n')
    proc, _ = run("sh", "-c", 'echo "tz=${TZ-unset}"', env={**env, "TZ": "UTC"})
    assert "tz=unset" in proc.stdout, proc.stderr
    argv, _ = run.command("true", extra=["--secret", "ZT_TOKEN"],
                          env={**env, "ZT_TOKEN": "t"})
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "forbidden by" in done.stderr


def test_a_run_cannot_give_later_runs_a_looser_policy_through_pyproject(run: Runner):
    """.ztsa.toml is read-only for the tree; pyproject.toml is a source file it may
    write, but a [tool.ztsa] it makes or changes is moved aside with the file, and the
    file as it was comes back."""
    pyproject = run.workspace / "pyproject.toml"
    before = '[project]\nname = "demo"\nversion = "1.0"\n'
    pyproject.write_text(before)
    os.chmod(pyproject, 0o666)
    evil = ('\n[tool.ztsa.net]\nallow = ["0.0.0.0/0"]\n[tool.ztsa.fs]\n'
            'allow_write = ["/"]\n')
    proc, events = run("sh", "-c", f"printf '{evil}' >> pyproject.toml; echo ok",
                       env=policy_env())
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stderr
    assert pyproject.read_text() == before
    moved = [e for e in events if e["event"] == "quarantine"] if run.log else []
    if run.log:
        assert [(e["path"], e["replaced"]) for e in moved] == [("pyproject.toml", "restored")]
    assert "pyproject.toml" in proc.stderr and "moved aside" in proc.stderr
    # an ordinary edit of the rest of the file is the tree's to make
    proc, _ = run("sh", "-c", "sed -i 's/1.0/1.1/' pyproject.toml", env=policy_env())
    assert proc.returncode == 0 and 'version = "1.1"' in pyproject.read_text()


@pytest.mark.parametrize("mode_log", [True, False], ids=["log", "no-log"])
def test_a_rule_for_one_program_is_that_programs_alone(run: Runner, listeners, mode_log):
    """net.allow = [{to = ..., binaries = [python]}]: the tree's python connects; bash in
    the same tree, to the same address, does not (arrivals counted)."""
    port = listeners.add_tcp("service")
    # as the tree's kernel names it: for the user, the interpreter bind-mounted for it
    python = os.path.realpath(run.python) if run.mode == "root" else run.python
    _, env = user_tier(
        f'[net]\nallow = [{{to = "127.0.0.1:{port}", binaries = ["{python}"]}}]\n')
    script = (f"{run.python} -c \"$0\" {port}; "
              f"(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo bash-connected "
              "|| echo bash-refused")
    proc, events = run("bash", "-c", script, CONNECT, env=env, log=mode_log)
    arrived = listeners.settle()["service"]
    assert "connected" in proc.stdout.split("\n")[0], proc.stdout + proc.stderr
    assert "bash-refused" in proc.stdout and arrived == 1, (proc.stdout, arrived)
    if mode_log:
        allowed = [e for e in events if e["event"] == "connect"]
        # the program as the kernel resolved it (a venv's python is a link out of it)
        assert allowed and "(program /" in allowed[0]["rule"], allowed
        denied = [e for e in events if e["event"] == "deny" and e.get("syscall") == "connect"]
        assert denied and denied[0]["rule"].startswith("not in --allow-net for program ")
        assert "bash" in denied[0]["rule"]


def test_a_suggested_policy_lets_the_same_run_pass(run: Runner, listeners):
    """Record a run that is refused a loopback service, a Unix socket and a directory
    outside; `ztsa policy suggest` its log; with that as the user's policy the same run
    is refused nothing, and what it reached arrived."""
    import socket
    import sys as _sys

    port = listeners.add_tcp("service")
    outside = Path(tempfile.mkdtemp(prefix="ztsa-out-"))
    os.chmod(outside, 0o777)
    sock = outside / "app.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock))
    server.listen(8)
    os.chmod(sock, 0o777)
    code = ("import socket, sys\n"
            "p, out = int(sys.argv[1]), sys.argv[2]\n"
            "r = []\n"
            "try: socket.create_connection(('127.0.0.1', p), 3).close(); r.append('tcp')\n"
            "except OSError: pass\n"
            "try: open(out + '/made', 'w').write('x'); r.append('file')\n"
            "except OSError: pass\n"
            "u = socket.socket(socket.AF_UNIX)\n"
            "try: u.connect(out + '/app.sock'); r.append('unix')\n"
            "except OSError: pass\n"
            "print(' '.join(r) or 'nothing')\n")
    xdg, env = user_tier()
    argv, log = run.command(run.python, "-c", code, str(port), str(outside), env=env,
                            log=True)
    first = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                           cwd=run.workspace)
    assert first.stdout.strip() == "nothing", first.stdout + first.stderr
    assert listeners.settle()["service"] == 0
    done = subprocess.run([_sys.executable, "-m", "ztsa", "policy", "suggest", str(log)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    policy = xdg / "ztsa" / "policy.toml"
    policy.write_text(done.stdout)
    os.chmod(policy, 0o644)
    again, events = run(run.python, "-c", code, str(port), str(outside), env=env, log=True)
    assert again.stdout.split() == ["tcp", "file", "unix"], again.stdout + again.stderr
    assert "ztsa: 0 denied" in again.stderr, again.stderr
    assert [e["denied"] for e in events if e["event"] == "summary"] == [0]
    assert listeners.settle()["service"] == 1 and (outside / "made").read_text() == "x"
    server.close()


def test_a_run_cannot_plant_ztsas_own_state_for_later_runs(run: Runner):
    """With --allow-write over ~/.cache and ~/.config (a common grant for a build's
    caches), ztsa's parse cache and the user policy's directory stay read-only for the
    tree: a planted cache entry would be a later gate's parse, a planted policy.toml a
    later run's allow entries. Also when neither existed before the run."""
    home = Path(tempfile.mkdtemp(prefix="ztsa-home-"))
    for d in (home, home / ".cache", home / ".config"):
        d.mkdir(exist_ok=True)
        os.chmod(d, 0o777)
    env = {**policy_env(), "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"),
           "XDG_CONFIG_HOME": str(home / ".config")}
    env["ZTSA_CACHE_DIR"] = str(home / ".cache" / "ztsa")  # the suite's own is elsewhere
    code = ("import os, sys\n"
            "for p in sys.argv[1:]:\n"
            "    try:\n"
            "        os.makedirs(os.path.dirname(p), exist_ok=True)\n"
            "        open(p, 'w').write('[net]\\nallow = [\"0.0.0.0/0\"]\\n'); print('wrote')\n"
            "    except OSError as e: print('refused', e.errno)\n")
    planted = [home / ".cache/ztsa/entry", home / ".config/ztsa/policy.toml"]
    proc, _ = run(run.python, "-c", code, *map(str, planted), env=env,
                  extra=[f"--allow-write={home / '.cache'}", f"--allow-write={home / '.config'}"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == ["refused 30", "refused 30"], proc.stdout
    assert not any(p.exists() for p in planted)
    # the rest of the grant stays the tree's
    proc, _ = run("sh", "-c", f"echo x > {home}/.cache/pip-like && echo ok", env=env,
                  extra=[f"--allow-write={home / '.cache'}"])
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stderr


# what ztsa imports from site-packages (pyproject's dependencies)
_OWN_DISTS = ("cffi", "_cffi_backend", "yaml", "_yaml", "packaging", "tomli")

ATTACK_VENV = r"""
import os, sys
v, mark = sys.argv[1], sys.argv[2]
sp = os.path.join(v, "lib", f"python{sys.version_info[0]}.{sys.version_info[1]}",
                  "site-packages")
shell = f"#!/bin/sh\necho ran > {mark}\n"
code = f"open({mark!r}, 'w').write('ran')\n"
did = []

def attempt(name, *steps):
    try:
        for step in steps:
            step()
        did.append(name)
    except OSError:
        pass

def write(path, text, mode="w"):
    return lambda: open(path, mode).write(text)

attempt("write-launcher", write(f"{v}/bin/ztsa", shell))
attempt("replace-launcher", write(f"{v}/bin/.z", shell),
        lambda: os.chmod(f"{v}/bin/.z", 0o755),
        lambda: os.replace(f"{v}/bin/.z", f"{v}/bin/ztsa"))
attempt("write-interpreter-record", write(f"{v}/bin/ztsa-interpreter", "#!/bin/sh\n"))
attempt("replace-interpreter-record", write(f"{v}/bin/.r", "#!/bin/sh\n"),
        lambda: os.replace(f"{v}/bin/.r", f"{v}/bin/ztsa-interpreter"))
attempt("write-ztsa-ns", write(f"{v}/bin/ztsa-ns", shell))
attempt("replace-ztsa-ns", write(f"{v}/bin/.n", shell),
        lambda: os.chmod(f"{v}/bin/.n", 0o755),
        lambda: os.replace(f"{v}/bin/.n", f"{v}/bin/ztsa-ns"))
attempt("relink-python", lambda: os.symlink("/bin/sh", f"{v}/bin/.p"),
        lambda: os.replace(f"{v}/bin/.p", f"{v}/bin/python3"))
attempt("edit-pyvenv.cfg", write(f"{v}/pyvenv.cfg", "home = /nonexistent\n", "a"))
attempt("plant-bin-pyvenv.cfg", write(f"{v}/bin/pyvenv.cfg", "home = /nonexistent\n"))
attempt("edit-ztsa", write(f"{sp}/ztsa/__init__.py", code, "a"))
attempt("plant-ztsa-module", write(f"{sp}/ztsa/evil.py", code))
attempt("edit-cffi", write(f"{sp}/cffi/__init__.py", code, "a"))
attempt("edit-yaml", write(f"{sp}/yaml/__init__.py", code, "a"))
attempt("plant-ptrace", lambda: os.mkdir(f"{sp}/ptrace"),
        write(f"{sp}/ptrace/__init__.py", code))
attempt("plant-ptrace-module", write(f"{sp}/ptrace.py", code))
attempt("move-venv", lambda: os.rename(v, v + ".old"))
attempt("move-bin", lambda: os.rename(f"{v}/bin", f"{v}/bin.old"))
attempt("move-lib", lambda: os.rename(f"{v}/lib", f"{v}/lib.old"))
attempt("move-site-packages", lambda: os.rename(sp, sp + ".old"))
attempt("move-cffi", lambda: os.rename(f"{sp}/cffi", f"{sp}/cffi.old"))
# what installing another package takes stays the tree's
attempt("new-package", lambda: os.mkdir(f"{sp}/newpkg"),
        write(f"{sp}/newpkg/__init__.py", ""))
attempt("new-script", write(f"{v}/bin/newtool", shell))
print(" ".join(did))
"""


def _venv_with_ztsa(where: Path) -> tuple[Path, Path]:
    """(a virtual environment at `where` with this installation of ztsa and what it
    imports copied in, its `ztsa` command), as `pip install ztsa` into a project's venv
    would leave it."""
    import importlib.util
    import shutil
    import sys

    import ztsa
    from ztsa._boot import INTERPRETER_FILE

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    site = where / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    installed = next((Path(p) for p in ztsa.__path__ if list(Path(p).glob("_native*.so"))),
                     None)
    if installed is None:
        pytest.fail("ztsa is not installed beside this interpreter: `pip install .` first")
    shutil.copytree(installed, site / "ztsa", ignore=shutil.ignore_patterns("__pycache__"))
    for name in _OWN_DISTS:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin, name
        if spec.submodule_search_locations:
            src = Path(next(iter(spec.submodule_search_locations)))
            shutil.copytree(src, site / src.name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(spec.origin, site / Path(spec.origin).name)
    beside = Path(sys.executable).parent / "ztsa"
    if not beside.is_file():
        pytest.fail(f"no `ztsa` command beside {sys.executable}: `pip install .` first")
    launcher = where / "bin" / "ztsa"
    shutil.copy(beside, launcher)
    # as the installer leaves them: the launcher's interpreter record, the distribution
    # that lists the launcher among its files
    (where / "bin" / INTERPRETER_FILE).write_text(f"#!{where / 'bin' / 'python3'}\n")
    (site / "ztsa-0.dist-info").mkdir()
    (site / "ztsa-0.dist-info" / "RECORD").write_text("../../../bin/ztsa,,\n")
    # and the set-up's executable beside the launcher, which every run execs
    ns = Path(sys.executable).parent / "ztsa-ns"
    if not ns.is_file():
        pytest.fail(f"no ztsa-ns beside {sys.executable}: `pip install .` first")
    shutil.copy(ns, where / "bin" / "ztsa-ns")
    return site, launcher


def _fingerprint(root: Path) -> dict[str, tuple[int, int, str]]:
    """Every name under root (bytecode caches aside) with its mode, size and link
    target or content."""
    import hashlib

    found = {}
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in [*dirs, *files]:
            p = Path(dirpath) / name
            st = p.lstat()
            what = (os.readlink(p) if p.is_symlink() else "" if p.is_dir()
                    else hashlib.sha256(p.read_bytes()).hexdigest())
            found[str(p.relative_to(root))] = (st.st_mode, st.st_size, what)
    return found


def test_ztsa_installed_in_a_venv_in_the_workspace_stays_as_installed(run: Runner):
    """ztsa installed into the project's own virtual environment, in the workspace: the
    tree can change nothing that a later ztsa runs outside the sandbox (its launcher,
    ztsa-ns, the record of its interpreter and that interpreter, pyvenv.cfg, ztsa's own package
    and the ones it imports, names that would shadow them, the directories on the
    way), by writing, replacing, unlinking, planting or moving; installing another
    package into the environment still works. Judged by the environment afterwards
    and by the next run of its `ztsa`, which must run no planted code."""
    import sys

    venv = run.workspace / ".venv"
    site, launcher = _venv_with_ztsa(venv)
    base = os.path.realpath(sys._base_executable)
    if run.mode != "root":
        user = ensure_user()
        anc = os.path.dirname(base)
        while anc != "/":
            if not os.stat(anc).st_mode & 0o001:
                pytest.skip(f"the base interpreter {base} lies under {anc}, which the "
                            "test user cannot enter")
            anc = os.path.dirname(anc)
        subprocess.run(["chown", "-R", f"{user}:{user}", str(venv)], check=True)
    outside = Path(tempfile.mkdtemp(prefix="ztsa-out-"))
    os.chmod(outside, 0o777)
    mark = outside / "planted-code-ran"
    # a first run writes what ztsa's own start-up writes (bytecode)
    proc, _ = run("true", launcher=str(launcher), env=policy_env())
    assert proc.returncode == 0, proc.stderr
    before = _fingerprint(venv)
    proc, _ = run(str(venv / "bin" / "python3"), "-c", ATTACK_VENV, str(venv), str(mark),
                  launcher=str(launcher), env=policy_env())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["new-package", "new-script"], proc.stdout + proc.stderr
    after = _fingerprint(venv)
    for new in ("bin/newtool", f"{site.relative_to(venv)}/newpkg",
                f"{site.relative_to(venv)}/newpkg/__init__.py"):
        after.pop(new)
    # what the replacing attempts made first
    for staged in ("bin/.z", "bin/.r", "bin/.p", "bin/.n"):
        after.pop(staged, None)
    assert after == before
    # the next run, with and without the syscall trace that imports python-ptrace
    for extra in ([], ["--trace-syscalls"]):
        proc, _ = run("true", launcher=str(launcher), env=policy_env(), extra=extra)
        assert not mark.exists(), proc.stderr
    # a link can be unlinked (the name is no mount point), but nothing can take its
    # name: the next run then fails to start, and runs nothing planted
    unlink = ("import os, sys\n"
              "os.unlink(sys.argv[1]); print('unlinked')\n"
              "try: os.symlink('/bin/sh', sys.argv[1]); print('planted')\n"
              "except OSError: pass\n")
    proc, _ = run(str(venv / "bin" / "python3"), "-c", unlink, str(venv / "bin" / "python3"),
                  launcher=str(launcher), env=policy_env())
    assert proc.stdout.split() == ["unlinked"], proc.stdout + proc.stderr
    proc, _ = run("true", launcher=str(launcher), env=policy_env())
    assert proc.returncode != 0 and not mark.exists(), proc.stderr


def test_an_address_asked_as_a_name_is_never_suggested(run: Runner, listeners):
    """The tree asked ztsa's DNS for `127.0.0.1`, `0.0.0.0` and `0x7f.1`: `policy
    suggest` turned each refused name into `net.allow = ["127.0.0.1"]`, which a policy
    reads as that address on every port, and the next run reached the host's loopback
    services (helper-5). Judged by what reaches a host listener under the suggested
    policy."""
    import sys as _sys

    import tomllib

    port = listeners.add_tcp("host-service")
    asks = ("import socket, struct, sys\n"
            "for i, name in enumerate(sys.argv[1:]):\n"
            "    q = struct.pack('>HHHHHH', i + 1, 0x100, 1, 0, 0, 0) + b''.join(\n"
            "        bytes([len(p)]) + p.encode() for p in name.split('.')) + b'\\0'\n"
            "    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3)\n"
            "    s.sendto(q + struct.pack('>HH', 1, 1), ('127.0.0.53', 53))\n"
            "    try: s.recv(512)\n"
            "    except OSError: pass\n")
    xdg, env = user_tier()
    first, _ = run(run.python, "-c", asks, "127.0.0.1", "0.0.0.0", "0x7f.1", env=env,
                   log=True)
    assert first.returncode == 0, first.stderr
    assert "--allow-net 127.0.0.1" not in first.stderr, first.stderr
    log = max(run.workspace.glob("audit-*.jsonl"), key=os.path.getmtime)
    done = subprocess.run([_sys.executable, "-m", "ztsa", "policy", "suggest", str(log)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert tomllib.loads(done.stdout).get("net", {}).get("allow", []) == [], done.stdout
    assert "an address asked as a name" in done.stdout
    (xdg / "ztsa" / "policy.toml").write_text(done.stdout)
    os.chmod(xdg / "ztsa" / "policy.toml", 0o644)
    again, _ = run(run.python, "-c", CONNECT, str(port), env=env)
    assert listeners.settle()["host-service"] == 0, again.stdout + again.stderr


def test_a_grant_through_a_link_the_tree_made_is_refused(run: Runner):
    """A refused write through a workspace link the tree made is logged by that path,
    and `policy suggest` offered `allow_write = [".../build-cache"]`: a path inside the
    workspace, resolved again at every run, where the link leads wherever the tree
    last pointed it (helper-5: ~/.bashrc and ~/.ssh/authorized_keys). A grant whose way
    passes a link in a place the tree may change is a usage error, from a flag or a
    policy file alike."""
    victim = Path(tempfile.mkdtemp(prefix="ztsa-victim-"))
    os.chmod(victim, 0o777)
    (victim / "keep").write_text("mine\n")
    os.chmod(victim / "keep", 0o666)
    first, _ = run("sh", "-c", f"ln -s {victim} build-cache && echo made")
    assert "made" in first.stdout, first.stderr
    for how in (["--allow-write", str(run.workspace / "build-cache")],
                ["--allow-read", str(run.workspace / "build-cache" / "keep")]):
        proc, _ = run("sh", "-c", "echo PWNED > build-cache/keep; echo ran", extra=how)
        assert proc.returncode == 2 and "ran" not in proc.stdout, proc.stderr
        assert "the way there passes the symbolic link" in proc.stderr, proc.stderr
    _, env = user_tier(f'[fs]\nallow_write = ["{run.workspace / "build-cache"}"]\n')
    proc, _ = run("sh", "-c", "echo PWNED > build-cache/keep; echo ran", env=env)
    assert proc.returncode == 2 and "ran" not in proc.stdout, proc.stderr
    assert (victim / "keep").read_text() == "mine\n"


def test_a_policy_the_tree_plants_in_a_subdirectory_is_no_later_runs(run: Runner):
    """A run with the workspace at a monorepo's root wrote packages/foo/.ztsa.toml
    (`allow_write` of the home) and a [tool.ztsa] into packages/bar/pyproject.toml;
    only the root's were protected or judged, and a later run started in packages/foo
    obeyed it as the repository's word (helper-5). Every policy file of the workspace
    the run made or changed goes aside, its old text back; judged by a later run's
    write in the directory it named."""
    victim = Path(tempfile.mkdtemp(prefix="ztsa-victim-"))
    os.chmod(victim, 0o777)
    for sub in ("packages/foo", "packages/bar"):
        (run.workspace / sub).mkdir(parents=True)
        os.chmod(run.workspace / sub, 0o777)
        os.chmod(run.workspace / sub.split("/")[0], 0o777)
    bar = run.workspace / "packages" / "bar" / "pyproject.toml"
    bar.write_text('[project]\nname = "bar"\n')
    os.chmod(bar, 0o666)
    plant = (f"printf '[fs]\\nallow_write = [\"{victim}\"]\\n' > packages/foo/.ztsa.toml && "
             f"printf '\\n[tool.ztsa.fs]\\nallow_write = [\"{victim}\"]\\n' >> "
             "packages/bar/pyproject.toml && echo planted")
    first, _ = run("sh", "-c", plant)
    assert "planted" in first.stdout, first.stderr
    assert not (run.workspace / "packages" / "foo" / ".ztsa.toml").exists()
    assert bar.read_text() == '[project]\nname = "bar"\n'
    for sub in ("foo", "bar"):
        later = Runner(run.mode, run.workspace / "packages" / sub)
        proc, _ = later("sh", "-c", f"echo PWNED > {victim}/x; echo ran", profile="dependency")
        assert not (victim / "x").exists(), (sub, proc.stdout, proc.stderr)

