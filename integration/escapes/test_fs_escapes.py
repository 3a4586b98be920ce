"""Writes outside the workspace, checked on the disk after the run."""

from __future__ import annotations

import fcntl
import json
import os
import pwd
import struct
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import Runner, ensure_user

BOTH_LOG_MODES = True


@pytest.fixture
def outside() -> Path:
    """A directory outside the workspace the tree's user could otherwise write."""
    d = Path(tempfile.mkdtemp(prefix="ztsa-outside-"))
    os.chmod(d, 0o777)
    (d / ".bashrc").write_text("# real home\n")
    os.chmod(d / ".bashrc", 0o666)
    return d


def fsops(run, progs, *args):
    proc, _ = run(str(progs / "fsops"), *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def refused(op: str) -> tuple[str, str]:
    """How the kernel refuses a change outside the writable places: the read-only
    system view (EROFS) before Landlock (EACCES) would."""
    return (f"{op} -1 errno 30", f"{op} -1 errno 13")


def test_write_to_a_real_home_rc_file(run, progs, outside):
    out = fsops(run, progs, "write", str(outside / ".bashrc"))
    assert out in refused("write")
    assert (outside / ".bashrc").read_text() == "# real home\n"


def test_write_in_tmp_outside_the_private_dir(run, progs, outside):
    assert fsops(run, progs, "write", str(outside / "new")) in refused("write")
    assert not (outside / "new").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="/etc is only writable for root")
def test_root_cannot_write_etc(run, progs):
    target = Path("/etc/ztsa-escape-test")
    try:
        assert fsops(run, progs, "write", str(target)) in refused("write")
        assert not target.exists()
    finally:
        target.unlink(missing_ok=True)


def test_symlink_in_workspace_pointing_outside(run, progs, outside):
    link = run.workspace / "innocent.txt"
    link.symlink_to(outside / ".bashrc")
    assert fsops(run, progs, "write", str(link)) in refused("write")
    assert (outside / ".bashrc").read_text() == "# real home\n"


def test_hard_link_to_an_outside_file(run, progs, outside):
    out = fsops(run, progs, "link", str(outside / ".bashrc"), str(run.workspace / "hl"))
    assert out.startswith("link -1")  # EXDEV: no reference across the boundary
    assert not (run.workspace / "hl").exists()
    assert (outside / ".bashrc").read_text() == "# real home\n"


def test_truncate_outside(run, progs, outside):
    assert fsops(run, progs, "truncate", str(outside / ".bashrc")) in refused("truncate")
    assert (outside / ".bashrc").read_text() == "# real home\n"


def test_rename_out_of_the_workspace(run, progs, outside):
    (run.workspace / "f").write_text("x")
    out = fsops(run, progs, "rename", str(run.workspace / "f"), str(outside / "f"))
    assert out.startswith("rename -1")
    assert not (outside / "f").exists()


@pytest.mark.parametrize("resolve", [False, True])
def test_openat2(run, progs, outside, resolve):
    args = ["openat2", str(outside / "via-openat2")] + (["resolve"] if resolve else [])
    assert fsops(run, progs, *args).startswith("openat2 -1")
    assert not (outside / "via-openat2").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs a root caller")
def test_mknod_block_device_in_the_workspace(run, progs):
    dev = run.workspace / "sda"
    assert fsops(run, progs, "mknod", str(dev)) == "mknod -1 errno 1"
    assert not dev.exists()


def test_tiocsti_is_denied(run, progs):
    # stdin is a pipe here: without the filter this would be ENOTTY, not EPERM
    assert fsops(run, progs, "tiocsti") == "tiocsti -1 errno 1"


def test_workspace_writes_still_work(run, progs):
    assert fsops(run, progs, "write", str(run.workspace / "out.txt")) == "write 6 errno 0"
    assert (run.workspace / "out.txt").read_text() == "pwned\n"


def test_inherited_file_descriptor_does_not_reach_cmd(run, tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("s")
    fd = os.open(secret, os.O_RDONLY)
    os.set_inheritable(fd, True)
    try:
        code = ("import os\n"
                f"try: os.fstat({fd}); print('open')\n"
                "except OSError: print('closed')\n")
        proc, _ = run(run.python, "-c", code, pass_fds=(fd,))
        assert proc.stdout.strip() == "closed"
    finally:
        os.close(fd)


def test_real_home_credentials_unreadable_by_absolute_path(run, monkeypatch):
    home = Path(tempfile.mkdtemp(prefix="ztsa-realhome-"))
    os.chmod(home, 0o755)
    for rel, text in ((".ssh/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\n"),
                      (".aws/credentials", "[default]\naws_secret_access_key = x\n"),
                      (".bashrc", "# readable\n")):
        (home / rel).parent.mkdir(exist_ok=True, mode=0o755)
        (home / rel).write_text(text)
        os.chmod(home / rel, 0o644)  # readable by the tree's user but for Landlock
    monkeypatch.setenv("HOME", str(home))
    code = ("import sys\n"
            "for p in sys.argv[1:]:\n"
            "    try: open(p).read(); print('read', p)\n"
            "    except OSError as e: print('denied', p, e.errno)\n")
    paths = [str(home / ".ssh/id_ed25519"), str(home / ".aws/credentials"),
             str(home / ".bashrc")]
    proc, _ = run(run.python, "-c", code, *paths)
    # the real home is hidden (ENOENT), and Landlock would refuse the credentials in it
    # even by a path that reached them (EACCES)
    lines = proc.stdout.splitlines()
    assert [line.rsplit(" ", 1)[0] for line in lines] == [f"denied {p}" for p in paths]
    assert all(line.endswith((" 2", " 13")) for line in lines)


def test_an_o_path_open_with_o_creat_makes_nothing_as_bare(run, outside):
    """open and openat drop O_CREAT beside O_PATH: bare, a missing name is ENOENT and an
    existing one opens. Under ztsa the same, inside the workspace, in a directory made
    during the run and outside, and nothing is made anywhere."""
    (run.workspace / "there").write_text("x")
    code = ("import os, sys\n"
            "os.mkdir('made')\n"
            "for p in sys.argv[1:]:\n"
            "    try:\n"
            "        os.close(os.open(p, os.O_PATH | os.O_CREAT | os.O_TRUNC | os.O_WRONLY,"
            " 0o644))\n"
            "        print(p.rsplit('/', 1)[-1], 'opened')\n"
            "    except OSError as e:\n"
            "        print(p.rsplit('/', 1)[-1], e.errno)\n")
    paths = ["new", "there", "made/new", str(outside / "missing"), str(outside / ".bashrc")]
    proc, _ = run(run.python, "-c", code, *paths)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:5] == ["new 2", "there opened", "new 2", "missing 2",
                                           ".bashrc opened"]
    assert not (run.workspace / "new").exists() and not (run.workspace / "made/new").exists()
    assert not (outside / "missing").exists()
    assert (run.workspace / "there").read_text() == "x"
    assert (outside / ".bashrc").read_text() == "# real home\n"


FS_IOC_GETFLAGS, FS_IOC_SETFLAGS = 0x80086601, 0x40086602
FS_IOC_GETVERSION, FS_IOC_SETVERSION = 0x80087601, 0x40087602
FS_IOC_FSGETXATTR, FS_IOC_FSSETXATTR = 0x801C581F, 0x401C5820
FS_NODUMP_FL = 0x40


def _inode_state(path: Path) -> tuple[int, int, bytes]:
    fd = os.open(path, os.O_RDONLY)
    try:
        return (struct.unpack("q", fcntl.ioctl(fd, FS_IOC_GETFLAGS, bytes(8)))[0],
                struct.unpack("q", fcntl.ioctl(fd, FS_IOC_GETVERSION, bytes(8)))[0],
                fcntl.ioctl(fd, FS_IOC_FSGETXATTR, bytes(28)))
    finally:
        os.close(fd)


@pytest.mark.parametrize("route", ["stdin", "pass-fd"])
def test_inode_flags_outside_cannot_change_through_an_inherited_file(run, outside, route):
    """A file's flags (chattr), generation and fsxattr are changed by ioctls (and
    file_setattr) on any descriptor, and one the tree inherits is on the caller's
    writable mounts, where the read-only view does not reach. The outside file's own
    user (root, or the suite's user) could change them bare; under ztsa every such
    call is refused and nothing changes, while reading them still works."""
    target = outside / "attrs"
    target.write_text("data\n")
    if run.mode != "root":
        pw = pwd.getpwnam(ensure_user())
        os.chown(target, pw.pw_uid, pw.pw_gid)
    try:
        before = _inode_state(target)
        fd = os.open(target, os.O_RDONLY)  # bare, the owner sets the flags it has: works
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("q", before[0]))
        os.close(fd)
    except OSError as exc:
        pytest.skip(f"the file system under {outside} has no inode flags ({exc})")
    code = ("import fcntl, os, struct, sys\n"
            "fd = int(sys.argv[1])\n"
            "flags = struct.unpack('q', fcntl.ioctl(fd, 0x80086601, bytes(8)))[0]\n"
            "out = []\n"
            "for req, arg in ((0x40086602, struct.pack('q', flags | 0x40)),\n"
            "                 (0x40087602, struct.pack('q', 0x41414141)),\n"
            "                 (0x401C5820, fcntl.ioctl(fd, 0x801C581F, bytes(28)))):\n"
            "    try: fcntl.ioctl(fd, req, arg); out.append('ok')\n"
            "    except OSError as e: out.append(str(e.errno))\n"
            "import ctypes\n"  # file_setattr (Linux 6.17): FS_XFLAG_NODUMP, by the fd
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "attr = struct.pack('QIIII', 0x80, 0, 0, 0, 0)\n"
            "r = libc.syscall(469, fd, b'', attr, len(attr), 0x1000)\n"
            "out.append('ok' if r == 0 else str(ctypes.get_errno()))\n"
            "print(' '.join(out))\n")
    fd = os.open(target, os.O_RDONLY)
    try:
        if route == "stdin":
            argv, log_path = run.command(run.python, "-c", code, "0")
            proc = subprocess.run(argv, stdin=fd, capture_output=True, text=True,
                                  timeout=120, cwd=run.workspace)
            run.finish(proc.stderr, log_path)
        else:
            proc, _ = run(run.python, "-c", code, str(fd), extra=["--pass-fd", str(fd)],
                          pass_fds=(fd,))
    finally:
        os.close(fd)
    assert proc.returncode == 0, proc.stderr
    # file_setattr: ENOSYS, as on a kernel without it (libc then tries the ioctl)
    assert proc.stdout.split() == ["1", "1", "1", "38"]
    assert _inode_state(target) == before


@pytest.mark.parametrize("mode", ["allow-write", "audit-only"])
@pytest.mark.parametrize("how", ["rename", "exchange-as-source", "exchange-as-destination",
                                 "exchange-the-workspace"])
def test_no_directory_on_the_way_to_the_workspace_or_the_log_moves(run, progs, how, mode):
    """Where the workspace and the log lie below a place the tree may change (an
    --allow-write directory above them, or anything outside under --audit-only), the
    tree builds a parent of its own (its CLAUDE.md, a forged log) and puts it in the
    real one's place: by a rename, or by RENAME_EXCHANGE with the real directory on
    either side (helper-1: as the second operand it moved, and ztsa then pointed to the
    forged log and left the tree's CLAUDE.md in the workspace's place)."""
    top = Path(tempfile.mkdtemp(prefix="ztsa-top-"))
    for d in ("p/ws", "fake/ws"):
        (top / d).mkdir(parents=True)
    for d in (top, top / "p", top / "p" / "ws", top / "fake", top / "fake" / "ws"):
        os.chmod(d, 0o777)
    ws, log = top / "p" / "ws", top / "p" / "log.jsonl"
    (ws / "CLAUDE.md").write_text("be careful\n")
    (top / "fake" / "ws" / "CLAUDE.md").write_text("PWNED\n")
    (top / "fake" / "log.jsonl").write_text('{"event": "summary", "forged": true}\n')
    inode = os.stat(ws).st_ino
    op, a, b = {"rename": ("rename", top / "p", top / "old"),
                "exchange-as-source": ("exchange", top / "p", top / "fake"),
                "exchange-as-destination": ("exchange", top / "fake", top / "p"),
                "exchange-the-workspace": ("exchange", top / "fake" / "ws", ws)}[how]
    extra = ["--audit-only"] if mode == "audit-only" else ["--allow-write", str(top)]
    argv, _ = Runner(run.mode, ws).command(str(progs / "fsops"), op, str(a), str(b),
                                           log=False, extra=[*extra, "--audit-log", str(log)])
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=ws)
    assert done.stdout.startswith(f"{op} -1"), (done.stdout, done.stderr)
    assert done.returncode == 0, done.stderr
    assert os.stat(ws).st_ino == inode
    assert (ws / "CLAUDE.md").read_text() == "be careful\n"
    assert (top / "fake" / "ws" / "CLAUDE.md").read_text() == "PWNED\n"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(lines) > 1 and lines[-1]["event"] == "summary" and "forged" not in lines[-1]


def test_a_link_through_a_proc_magic_link_is_not_the_helpers(run, progs):
    """linkat(AT_SYMLINK_FOLLOW) of a workspace symlink to /proc/self/fd/N: the helper,
    which makes the link, must not follow it as itself (helper-1: it reached the
    helper's own descriptors, and only EXDEV or EPERM stopped it)."""
    for fd in range(24):
        (run.workspace / f"via{fd}").symlink_to(f"/proc/self/fd/{fd}")
    loop = f'for fd in $(seq 0 23); do {progs / "fsops"} linkfollow via$fd new; done'
    proc, _ = run("sh", "-c", loop)
    # refused where the helper holds that descriptor, not found where it does not; never
    # a link of one of its files (before: EXDEV or EPERM from the kernel, as the helper)
    results = set(proc.stdout.split("\n")[:24])
    assert "linkfollow -1 errno 13" in results, proc.stdout
    assert results <= {"linkfollow -1 errno 13", "linkfollow -1 errno 2"}, proc.stdout
    assert not os.path.lexists(run.workspace / "new")
    # an ordinary link is still followed, as bare (the tree's own file: protected_hardlinks)
    proc, _ = run("sh", "-c", f"echo x > ordinary && ln -s ordinary to-ordinary && "
                  f"{progs / 'fsops'} linkfollow to-ordinary hard")
    assert proc.stdout.strip() == "linkfollow 0 errno 0", proc.stderr
    ordinary = run.workspace / "ordinary"
    assert os.path.samefile(run.workspace / "hard", ordinary)


def test_the_logs_directory_stays_however_many_paths_are_protected(run, progs):
    """Every directory on the way to a read-only path is held; the table of them was 512
    long and silently full once the workspace held a few deeply nested repositories
    (whose config and hooks come first), and then the audit log's directory moved
    (helper-4). Three repositories 150 directories deep, then the same rename."""
    top = Path(tempfile.mkdtemp(prefix="ztsa-top-"))
    ws, logs = top / "ws", top / "logs"
    for n in range(3):
        deep = ws.joinpath(*[f"r{n}"] + ["d"] * 150)
        deep.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(deep)], check=True)
    logs.mkdir()
    for d in (top, ws, logs):
        os.chmod(d, 0o777)
    log = logs / "run.jsonl"
    argv, _ = Runner(run.mode, ws).command(str(progs / "fsops"), "rename", str(logs),
                                           str(top / "moved"), log=False,
                                           extra=["--allow-write", str(top),
                                                  "--audit-log", str(log)])
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=ws)
    assert done.stdout.startswith("rename -1 errno 13"), (done.stdout, done.stderr)
    assert not (top / "moved").exists()
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert lines[-1]["event"] == "summary"
