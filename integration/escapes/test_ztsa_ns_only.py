"""Only ztsa-ns makes namespaces (issue #42): where AppArmor lets only a program a
profile names make user namespaces, that program must be the one that makes every
namespace of a run, the probe's included, never a fork of the interpreter.

Judged by the kernel's own record of the run, not by ztsa's: `perf record` of the
tracepoints of unshare, setns, every new task (its clone flags, whatever the call:
clone, clone3, fork, vfork) and every exec, over `ztsa exec` as root and as an ordinary
user; each namespace made in ztsa's process tree must be made by a process whose
program is ztsa-ns (an exec of its path, or of its descriptor, which the kernel names
/dev/fd/N: then by the name the kernel gave the process). perf does not ptrace, so
ztsa's tracer still seizes its child. Skipped where perf cannot record tracepoints."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Runner

# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME
NEW_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | \
    0x20000000 | 0x40000000 | 0x00000080
EVENTS = ("syscalls:sys_enter_unshare,syscalls:sys_enter_setns,task:task_newtask,"
          "sched:sched_process_exec,sched:sched_process_fork")
LINE = re.compile(r"^\s*(\S+)\s+(\d+)\s+(\S+):\s*(.*)$")  # comm, tid, event, text


def installed_ns() -> Path:
    ns = Path(sys.executable).parent / "ztsa-ns"
    if not ns.is_file():
        pytest.fail(f"no ztsa-ns beside {sys.executable}: `pip install .` first")
    return ns


def perf_or_skip(tmp: Path) -> str:
    perf = shutil.which("perf")
    if perf is None or os.geteuid() != 0:
        pytest.skip("perf and root are needed to record the kernel's tracepoints")
    probe = subprocess.run([perf, "record", "-q", "-o", str(tmp / "probe.data"), "-e",
                            "syscalls:sys_enter_unshare", "--", "true"],
                           capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip(f"perf cannot record tracepoints here: {probe.stderr[-300:]}")
    return perf


def namespace_makers(perf: str, data: Path) -> list[tuple[int, str, str, str]]:
    """(tid, its program, the event, its text) of every namespace made in the tree
    below the first process that exec'd a Python interpreter (ztsa)."""
    out = subprocess.run([perf, "script", "-i", str(data), "-F", "tid,comm,event,trace"],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    lines = [m for m in map(LINE.match, out.splitlines()) if m]
    # perf's own exec of its command is not recorded (its events start there): then
    # the first process recorded is ztsa's
    execs_python = any(m[3] == "sched:sched_process_exec" and os.path.basename(
        m[4].split("filename=")[1].split()[0]).startswith("python") for m in lines)
    program: dict[int, str] = {}
    tree: set[int] = set() if execs_python or not lines else {int(lines[0][2])}
    made = []
    for m in lines:
        comm, tid, event, text = m[1], int(m[2]), m[3], m[4]
        fields = dict(re.findall(r"(\w+)=(\S+)", text))
        if event == "sched:sched_process_exec":
            name = fields["filename"]
            # an exec of a descriptor: the kernel names the process by its file
            program[tid] = comm if name.startswith("/dev/fd/") else name
            if execs_python and not tree and os.path.basename(name).startswith("python"):
                tree.add(tid)
        elif event == "sched:sched_process_fork":
            parent, child = int(fields["pid"]), int(fields["child_pid"])
            program[child] = program.get(parent, "?")
            if parent in tree:
                tree.add(child)
        elif tid in tree and (
                event == "syscalls:sys_enter_setns"
                or (event == "syscalls:sys_enter_unshare"
                    and int(text.split()[-1], 16) & NEW_NAMESPACES)
                or (event == "task:task_newtask"
                    and int(fields["clone_flags"], 16) & NEW_NAMESPACES)):
            made.append((tid, program.get(tid, "?"), event, text))
    assert tree, "no process of ztsa's was recorded"
    return made


def test_only_ztsa_ns_makes_a_namespace(run: Runner, tmp_path):
    ns = installed_ns()
    perf = perf_or_skip(tmp_path)
    argv, _ = run.command("sh", "-c", "echo ran", log=False)
    data = tmp_path / "perf.data"
    proc = subprocess.run([perf, "record", "-q", "-o", str(data), "-e", EVENTS, "--",
                           *argv], capture_output=True, text=True, timeout=180,
                          cwd=run.workspace)
    assert proc.returncode == 0 and proc.stdout == "ran\n", proc.stdout + proc.stderr
    made = namespace_makers(perf, data)
    # a user and a mount namespace (root: a mount namespace), the tree's PID, IPC and
    # network namespaces, and the probe's: all made, all by ztsa-ns
    assert len(made) >= 4, made
    # the installed ztsa-ns by its path (a user run may see the venv bind-mounted
    # elsewhere: then by its name), or by the name of an exec'd descriptor
    others = [m for m in made if m[1] != str(ns) and os.path.basename(m[1]) != "ztsa-ns"]
    assert others == [], others
