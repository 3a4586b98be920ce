"""The tree's own cgroup: where it is made, its limits enforced by the real kernel, and
nothing left behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ztsa.sandbox import cgroup

HYBRID_MOUNTINFO = """\
30 25 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755
31 30 0:27 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw
35 30 0:31 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory
36 30 0:32 / /sys/fs/cgroup/pids rw,nosuid - cgroup cgroup rw,pids
37 30 0:33 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct
"""
HYBRID_CGROUP = "9:pids:/user.slice/user-1000.slice\n4:memory:/user.slice\n0::/user.slice\n"


def test_mounts_and_own_groups_of_a_hybrid_host():
    assert cgroup._mounts(HYBRID_MOUNTINFO) == (
        ("/sys/fs/cgroup/unified", "/"),
        {"memory": ("/sys/fs/cgroup/memory", "/"), "pids": ("/sys/fs/cgroup/pids", "/")})
    assert cgroup._own(HYBRID_CGROUP) == (
        "/user.slice", {"pids": "/user.slice/user-1000.slice", "memory": "/user.slice"})


def container_proc(tmp_path: Path, mountinfo: str, cgroups: str) -> str:
    proc = tmp_path / "proc" / "self"
    proc.mkdir(parents=True)
    (proc / "mountinfo").write_text(mountinfo)
    (proc / "cgroup").write_text(cgroups)
    return str(tmp_path / "proc")


def test_a_containers_v1_groups_are_the_mounts_own_root(tmp_path):
    """podman and Docker on cgroup v1 without a cgroup namespace mount only the
    container's group at /sys/fs/cgroup/memory (the mount's root), while
    /proc/self/cgroup names the whole path: the group is the mount point itself, not
    the path appended to it (which does not exist there)."""
    group = "/libpod_parent/libpod-6ad5"
    proc = container_proc(
        tmp_path,
        f"35 30 0:31 {group} /sys/fs/cgroup/memory ro,nosuid - cgroup cgroup rw,memory\n"
        f"36 30 0:32 {group}/sub /sys/fs/cgroup/pids ro,nosuid - cgroup cgroup rw,pids\n"
        f"31 25 0:27 /outer /sys/fs/cgroup/unified ro - cgroup2 cgroup2 rw\n",
        f"9:pids:{group}/sub/deeper\n4:memory:{group}\n0::/elsewhere\n")
    v2_path, v2, v1 = cgroup._bases(proc)
    assert v1 == {"memory": "/sys/fs/cgroup/memory", "pids": "/sys/fs/cgroup/pids/deeper"}
    # a group the mount does not show (outside its root) has no directory here
    assert (v2_path, v2) == ("/elsewhere", "")


def test_unified_only_host_without_delegation(tmp_path):
    """cgroup v2 whose group of ztsa hands no controller down: no group, and why."""
    base = tmp_path / "cg"
    (base / "user.slice").mkdir(parents=True)
    (base / "user.slice" / "cgroup.subtree_control").write_text("\n")
    proc = tmp_path / "proc" / "self"
    proc.mkdir(parents=True)
    (proc / "mountinfo").write_text(f"31 25 0:27 / {base} rw - cgroup2 cgroup2 rw\n")
    (proc / "cgroup").write_text("0::/user.slice\n")
    group, why = cgroup.make("r1", 100, 1 << 30, proc=str(tmp_path / "proc"))
    assert group is None
    assert "does not hand the memory and pids controllers" in why
    assert list((base / "user.slice").iterdir()) == [base / "user.slice" / "cgroup.subtree_control"]


def test_unreadable_proc_says_why(tmp_path):
    group, why = cgroup.make("r1", 100, 1 << 30, proc=str(tmp_path))
    assert group is None and "cannot read ztsa's cgroups" in why


def test_default_total_and_sizes(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       16384000 kB\nMemFree:  1 kB\n")
    assert cgroup.default_total(str(meminfo)) == 16384000 * 1024 * 3 // 4
    assert cgroup.default_total(str(tmp_path / "absent")) == 4 << 30
    assert [cgroup.size(n) for n in (512 << 20, 3 << 29, 4096)] == ["512M", "1.5G", "4K"]


def _group_or_skip(max_procs: int, max_memory: int) -> cgroup.Group:
    group, why = cgroup.make(os.urandom(4).hex(), max_procs, max_memory)
    if group is None:
        pytest.skip(f"ztsa may make no cgroup here: {why}")
    return group


def _in_group(group: cgroup.Group, code: str) -> subprocess.CompletedProcess[str]:
    """Run code in a new process that joins the group before it starts."""
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read(1)\n" + code],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    cgroup.enter(group, child.pid)
    out, _ = child.communicate("g")
    return subprocess.CompletedProcess(child.args, child.returncode, out, "")


def test_a_real_group_kills_at_the_memory_total_and_is_removed():
    group = _group_or_skip(64, 96 << 20)
    try:
        done = _in_group(group, "b = bytearray(256 << 20)\nprint('allocated')\n")
        assert done.returncode == -9 and "allocated" not in done.stdout
        assert cgroup.refused(group).memory == 1
        fine = _in_group(group, "b = bytearray(16 << 20)\nprint('allocated')\n")
        assert fine.returncode == 0 and "allocated" in fine.stdout
    finally:
        cgroup.remove(group)
    assert not any(Path(d).exists() for d in group.dirs)


TCP_BALLOON = """
import errno, socket
server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen(128)
held, total = [], 0
for _ in range(48):  # filled and never read: each holds its send and receive buffers
    c = socket.create_connection(server.getsockname()); s, _ = server.accept()
    c.setblocking(False); held += [c, s]
    chunk = bytes(1 << 16)
    try:
        while True:
            total += c.send(chunk)
    except OSError as e:
        assert e.errno in (errno.EAGAIN, errno.ENOBUFS, errno.ENOMEM), e
print(total >> 20)
"""


def test_a_real_group_holds_the_trees_tcp_buffers():
    """cgroup v1 charges socket buffers only when the group has a TCP limit of its own
    (helper-2: 160 connections filled and never read held 620 MB against a 256 MB
    group). Loopback connections the group's process fills: what the kernel takes in
    stays near the memory total (v2 charges it to the total itself)."""
    group = _group_or_skip(64, 64 << 20)
    try:
        done = _in_group(group, TCP_BALLOON)
        assert done.returncode in (0, -9), done
        if done.returncode == 0:
            assert int(done.stdout) < 100, done.stdout  # MiB buffered
    finally:
        cgroup.remove(group)


def test_a_real_group_refuses_forks_at_the_process_total():
    group = _group_or_skip(8, 0)
    try:
        done = _in_group(group, "import os, time\nn = 0\ntry:\n"
                                "    for _ in range(50):\n"
                                "        if os.fork() == 0: time.sleep(2); os._exit(0)\n"
                                "        n += 1\n"
                                "except OSError as e: print('refused after', n, e.errno)\n")
        assert done.stdout.split()[:2] == ["refused", "after"], done.stdout
        assert int(done.stdout.split()[2]) < 8
        assert cgroup.refused(group).procs >= 1
    finally:
        cgroup.remove(group)


def test_the_warm_up_moves_nothing_and_the_child_still_enters():
    """prewarm() (and make()) move ztsa into its own cgroup in a thread, again and again
    (so that the child's move need not wait for an RCU grace period): ztsa stays where
    it was, the child lands in the group, and the thread ends at the child's entry."""
    import _thread
    import time

    with open("/proc/self/cgroup") as f:
        before = f.read()
    time.sleep(0.02)  # an earlier test's warm-up thread has seen its stop
    threads = _thread._count()
    cgroup.prewarm()
    group = _group_or_skip(64, 0)
    try:
        time.sleep(0.05)  # the thread runs (and moves go on meanwhile)
        assert _thread._count() == threads + 1  # make() started no second one
        with open("/proc/self/cgroup") as f:
            assert f.read() == before
        done = _in_group(group, "print(open('/proc/self/cgroup').read())")
        assert any(line.endswith("/" + os.path.basename(group.dirs[0]))
                   for line in done.stdout.splitlines()), done.stdout
        with open("/proc/self/cgroup") as f:
            assert f.read() == before
        for _ in range(100):
            if _thread._count() == threads:
                break
            time.sleep(0.01)
        assert _thread._count() == threads
    finally:
        cgroup.remove(group)


def test_stale_groups_of_dead_runs_are_removed_and_live_ones_kept():
    group = _group_or_skip(0, 0)
    # a group named by a pid that no longer exists, as a SIGKILLed ztsa leaves it
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = [os.path.join(os.path.dirname(d), f"ztsa-{gone.pid}-stale")
             for d in group.dirs]
    for d in stale:
        os.mkdir(d)
    try:
        cgroup.reap_stale()
        assert not any(os.path.exists(d) for d in stale)
        assert all(os.path.exists(d) for d in group.dirs)  # ours: its pid is alive
    finally:
        for d in stale:
            if os.path.exists(d):
                os.rmdir(d)
        cgroup.remove(group)
