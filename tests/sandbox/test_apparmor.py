"""Where AppArmor restricts unprivileged user namespaces (issue #42): the profile
`ztsa doctor --apparmor-profile` prints, the root copy of ztsa-ns it names and that a
run then uses, and what `ztsa doctor` tells a person to run.

The profile is compiled by a real AppArmor 4 parser (`apparmor_parser -Q -K -S` with the
4.0 ABI's features): it parses, and its `userns` rule is in the compiled policy (the
policy differs without it); a profile with a typo does not parse (the control). The
parser: $ZTSA_APPARMOR_PARSER, else `apparmor_parser` on PATH, if it is version 4 or
later; its profiles' directory (tunables, the ABI files): $ZTSA_APPARMOR_D, else
/etc/apparmor.d. Debian 12's parser is 3.0, which predates `userns`: there, a copy of
Debian 13's (its packages extracted, run with their own loader) serves."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ztsa.sandbox import apparmor, offer


def parser() -> tuple[str, Path]:
    cmd = os.environ.get("ZTSA_APPARMOR_PARSER") or shutil.which("apparmor_parser")
    base = Path(os.environ.get("ZTSA_APPARMOR_D", "/etc/apparmor.d"))
    if not cmd:
        pytest.skip("no apparmor_parser (ZTSA_APPARMOR_PARSER names one)")
    version = subprocess.run([cmd, "--version"], capture_output=True, text=True, timeout=30)
    m = re.search(r"version (\d+)\.", version.stdout)
    if not m or int(m[1]) < 4:
        pytest.skip(f"{cmd} is AppArmor {m[1] if m else '?'}, which predates `userns` "
                    "(ZTSA_APPARMOR_PARSER names an AppArmor 4 parser)")
    if not (base / "abi" / "4.0").is_file() or not (base / "tunables" / "global").is_file():
        pytest.skip(f"{base} has no abi/4.0 or tunables/global (ZTSA_APPARMOR_D)")
    return cmd, base


def compiled(text: str, tmp_path: Path) -> subprocess.CompletedProcess[bytes]:
    cmd, base = parser()
    path = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
    path.write_text(text)
    return subprocess.run([cmd, "-Q", "-K", "-S", "--base", str(base), "-I", str(base),
                           "-M", str(base / "abi" / "4.0"), str(path)],
                          capture_output=True, timeout=60)


def test_the_profile_parses_and_grants_userns(tmp_path):
    text = apparmor.profile()
    done = compiled(text, tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout  # the binary policy
    without = compiled(text.replace("  allow userns,\n", ""), tmp_path)
    assert without.returncode == 0 and without.stdout != done.stdout
    broken = compiled(text.replace("allow userns,", "allow usernss,"), tmp_path)
    assert broken.returncode != 0


def test_the_profile_names_root_s_copy_alone():
    text = apparmor.profile()
    attached = re.findall(r"^profile (\S+)(?: (/\S+))?", text, re.MULTILINE)
    assert attached == [("ztsa-ns", offer.ROOT_NS), ("ztsa-tree", "")]
    assert offer.ROOT_NS == "/usr/local/libexec/ztsa/ztsa-ns"
    # userns only for the set-up; the tree's profile refuses it
    tree = text[text.index("profile ztsa-tree"):]
    assert "allow userns" not in tree and "deny userns" in tree
    assert "px /** -> ztsa-tree" in text[:text.index("profile ztsa-tree")]


def test_root_owned_is_root_s_alone(tmp_path):
    assert offer.root_owned("/usr/bin/true" if os.path.isfile("/usr/bin/true")
                            else "/bin/true")
    own = tmp_path / "ztsa-ns"
    own.write_bytes(b"\x7fELF")
    own.chmod(0o755)
    assert not offer.root_owned(str(own))  # /tmp: others may write there
    assert not offer.root_owned("relative/ztsa-ns")
    assert not offer.root_owned("/nonexistent/ztsa-ns")


@pytest.fixture
def root_dir():
    """A directory only root can change (in /root), for a root copy's checks."""
    if os.geteuid() != 0 or os.stat("/root").st_uid != 0 or os.stat("/root").st_mode & 0o022:
        pytest.skip("needs root and a /root only root may write")
    d = Path(tempfile.mkdtemp(dir="/root", prefix="ztsa-ns-test-"))
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d)


def test_a_copy_is_root_s_only_if_every_directory_above_it_is(root_dir):
    copy = root_dir / "libexec" / "ztsa-ns"
    copy.parent.mkdir()
    shutil.copy("/bin/true", copy)
    copy.chmod(0o755)
    assert offer.root_owned(str(copy))
    for change, undo in [
            (lambda: copy.chmod(0o775), lambda: copy.chmod(0o755)),
            (lambda: copy.chmod(0o644), lambda: copy.chmod(0o755)),
            (lambda: copy.parent.chmod(0o777), lambda: copy.parent.chmod(0o755)),
            (lambda: os.chown(copy, 65534, 65534), lambda: os.chown(copy, 0, 0)),
            (lambda: os.chown(copy.parent, 65534, 0), lambda: os.chown(copy.parent, 0, 0))]:
        change()
        assert not offer.root_owned(str(copy))
        undo()
        assert offer.root_owned(str(copy))
    link = root_dir / "link"
    link.symlink_to(copy.parent)
    assert not offer.root_owned(str(link / "ztsa-ns"))


def test_where_apparmor_restricts_the_root_copy_is_what_runs(root_dir, monkeypatch,
                                                            tmp_path):
    """Restricted (the sysctl's file says 1): root's copy, when only root can replace
    it, is the offer's ztsa-ns, and the namespaces are probed through it; a copy
    someone else could replace is not used; unrestricted, the installation's own."""
    ns = Path(sys.executable).parent / "ztsa-ns"
    if not ns.is_file():
        pytest.skip(f"no ztsa-ns beside {sys.executable} (`pip install .`)")
    copy = root_dir / "ztsa-ns"
    shutil.copy(ns, copy)
    copy.chmod(0o755)
    sysctl = tmp_path / "apparmor_restrict_unprivileged_userns"
    sysctl.write_text("1\n")
    monkeypatch.setattr(offer, "APPARMOR_USERNS", str(sysctl))
    monkeypatch.setattr(offer, "ROOT_NS", str(copy))
    monkeypatch.setattr(offer, "installed_ns", lambda: str(ns))
    host = offer.probe()
    assert host.apparmor_userns and host.ns == str(copy) and host.userns
    copy.chmod(0o777)
    assert offer.probe().ns == str(ns)
    copy.chmod(0o755)
    sysctl.write_text("0\n")
    host = offer.probe()
    assert not host.apparmor_userns and host.ns == str(ns)


def test_doctor_prints_the_root_commands_where_apparmor_restricts(monkeypatch, tmp_path,
                                                                capsys):
    from ztsa import doctor

    sysctl = tmp_path / "restrict"
    sysctl.write_text("1\n")
    source = tmp_path / "venv" / "bin" / "ztsa-ns"
    source.parent.mkdir(parents=True)
    source.write_bytes(b"\x7fELF")
    source.chmod(0o755)
    monkeypatch.setattr(offer, "APPARMOR_USERNS", str(sysctl))
    monkeypatch.setattr(offer, "ROOT_NS", str(tmp_path / "nowhere" / "ztsa-ns"))
    monkeypatch.setattr(apparmor, "ROOT_NS", str(tmp_path / "nowhere" / "ztsa-ns"))
    monkeypatch.setattr(offer, "installed_ns", lambda: str(source))
    monkeypatch.setattr(apparmor, "installed_ns", lambda: str(source))
    doc = doctor.probe()
    text = doctor.render_text(doc)
    root = str(tmp_path / "nowhere" / "ztsa-ns")
    assert doc["controls"]["apparmor"]["state"] == "missing"
    for line in ("as yourself: ztsa doctor --apparmor-profile > ztsa-ns.apparmor",
                 f"as root: install -d -o root -g root -m 0755 {os.path.dirname(root)}",
                 f"as root: install -o root -g root -m 0755 {source} {root}",
                 "as root: install -o root -g root -m 0644 ztsa-ns.apparmor "
                 "/etc/apparmor.d/ztsa-ns",
                 "as root: apparmor_parser -r /etc/apparmor.d/ztsa-ns"):
        assert f"    {line}\n" in text, text
    # unrestricted: nothing of it
    sysctl.write_text("0\n")
    assert doctor.probe()["controls"]["apparmor"] is None


def test_the_state_of_root_s_copy(monkeypatch, root_dir):
    copy = root_dir / "ztsa-ns"
    monkeypatch.setattr(apparmor, "ROOT_NS", str(copy))
    source = root_dir / "source"
    shutil.copy("/bin/true", source)
    monkeypatch.setattr(apparmor, "installed_ns", lambda: str(source))
    assert apparmor.root_copy_state() == "missing"
    shutil.copy("/bin/true", copy)
    copy.chmod(0o755)
    assert apparmor.root_copy_state() == "installed"
    shutil.copy("/bin/false", copy)
    assert apparmor.root_copy_state() == "stale"
    copy.chmod(0o757)
    assert apparmor.root_copy_state() == "unsafe"
    assert stat.S_IMODE(copy.stat().st_mode) == 0o757


def test_doctor_apparmor_profile_prints_the_profile():
    done = subprocess.run([sys.executable, "-m", "ztsa", "doctor", "--apparmor-profile"],
                          capture_output=True, text=True, timeout=60, cwd="/")
    assert done.returncode == 0, done.stderr
    assert done.stdout == apparmor.profile()


def test_a_run_without_user_namespaces_says_when_apparmor_is_why():
    """The missing controls a run names stay as they are (handled.py matches them); where
    AppArmor is the reason, one more line says so and where the fix is."""
    from ztsa.sandbox.controls import USERNS_MISSING, apparmor_hint, missing_controls

    restricted = offer.HostOffer(euid=1000, userns=False, pidns=False, landlock_abi=7,
                                 apparmor_userns=True)
    assert USERNS_MISSING in missing_controls(restricted)
    assert "ztsa doctor" in (apparmor_hint(restricted) or "")
    assert apparmor_hint(restricted._replace(apparmor_userns=False)) is None
    # user namespaces through ztsa-ns (root's copy): nothing to say
    assert apparmor_hint(restricted._replace(userns=True, ns=offer.ROOT_NS)) is None
    assert apparmor_hint(restricted._replace(euid=0)) is None
