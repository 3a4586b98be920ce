"""ztsa-ns (native/nsmain.c), built from this checkout, judged by what runs: CMD's
plan makes it write a marker file, so a marker that is not there is a CMD that never
started, and an impostor's own marker is an impostor that ran.

- a plan that does not decode (truncated, another version, a flipped length, trailing
  bytes, or an unsealed memfd) is exit 125, the step on the error pipe, and no marker;
  the same bytes unharmed run CMD (the control);
- ztsa_spawn opens ztsa-ns before its fork: a file renamed over its path afterwards
  (before the child's exec) is not what runs;
- started by hand, or with a descriptor that is not open, it refuses (125)."""

from __future__ import annotations

import fcntl
import importlib.util
import os
import struct
import subprocess
from pathlib import Path

import pytest

from ztsa.sandbox import native as nat
from ztsa.sandbox import plan

ROOT = Path(__file__).resolve().parents[2]
STEP_PLAN = 12
SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SEAL


def _wire():
    spec = importlib.util.spec_from_file_location("ztsa_wire_tests",
                                                  Path(__file__).parent / "test_plan_wire.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


WIRE = _wire()


@pytest.fixture(scope="session")
def ns(tmp_path_factory) -> Path:
    """ztsa-ns compiled from this checkout, as setup.py compiles it."""
    spec = importlib.util.spec_from_file_location("ztsa_build_native_ns",
                                                  ROOT / "native" / "build_native.py")
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    out = tmp_path_factory.mktemp("ns") / "ztsa-ns"
    build.build_ns(out)
    return out


def marker_plan(where: Path) -> tuple[plan.RunPlan, Path]:
    marker = where / "cmd-ran"
    return WIRE.minimal(where, ("sh", "-c", f"echo ran > '{marker}'")), marker


def run_ns(ns: Path, data: bytes, sealed: bool = True) -> tuple[int, int | None]:
    """(ztsa-ns's exit status, the code on its error pipe or None) for a plan of data."""
    fd = os.memfd_create("plan", os.MFD_ALLOW_SEALING)
    r, w = os.pipe()
    try:
        os.write(fd, data)
        if sealed:
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, SEALS)
        proc = subprocess.run([str(ns), "--plan-fd", str(fd), "--err-fd", str(w),
                               "--shared-fd", "-1"], pass_fds=(fd, w), timeout=60,
                              capture_output=True)
        os.close(w)
        w = -1
        code = os.read(r, 4)
    finally:
        os.close(fd)
        os.close(r)
        if w >= 0:
            os.close(w)
    return proc.returncode, int.from_bytes(code, "little") if len(code) == 4 else None


def test_the_plan_unharmed_runs_cmd(ns, tmp_path):
    run, marker = marker_plan(tmp_path)
    data = nat.plan_bytes(run, WIRE.allow_table(str(tmp_path)))
    status, code = run_ns(ns, data)
    assert (status, code) == (0, None)
    assert marker.read_text() == "ran\n"


@pytest.mark.parametrize("harm", ["truncated", "version", "length", "trailing", "magic",
                                  "unsealed", "empty"])
def test_a_plan_that_does_not_decode_is_125_and_cmd_never_starts(ns, tmp_path, harm):
    run, marker = marker_plan(tmp_path)
    data = nat.plan_bytes(run, WIRE.allow_table(str(tmp_path)))
    bad = {
        "truncated": data[:-1],
        "version": data[:8] + struct.pack("<I", 99) + data[12:],
        "length": data[:12] + struct.pack("<I", 0xFFFFFFF0) + data[16:],
        "trailing": data + b"x",
        "magic": b"ZTSAPLAN"[::-1] + data[8:],
        "unsealed": data,
        "empty": b"",
    }[harm]
    status, code = run_ns(ns, bad, sealed=harm != "unsealed")
    assert status == 125
    assert code is not None and code >> 16 == STEP_PLAN, code
    assert code & 0xFFFF == (71 if harm == "version" else 22)  # EPROTO, EINVAL
    assert not marker.exists()


def test_a_file_renamed_over_ztsa_ns_after_the_spawn_opened_it_does_not_run(ns, tmp_path):
    """ztsa_spawn opens ztsa-ns, then forks; its child waits for the go byte, then execs
    the descriptor. In between, another file takes the path: the opened one runs."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    installed = bindir / "ztsa-ns"
    installed.write_bytes(ns.read_bytes())
    installed.chmod(0o755)
    impostor_ran = tmp_path / "impostor-ran"
    impostor = bindir / "impostor"
    impostor.write_text(f"#!/bin/sh\necho ran > '{impostor_ran}'\n")
    impostor.chmod(0o755)
    run, marker = marker_plan(tmp_path)
    run = run._replace(setup=plan.Setup.EXEC, ns=str(installed))
    pid, sync_fd, err_fd = nat.spawn(run, WIRE.allow_table(str(tmp_path)))
    os.rename(impostor, installed)  # after the open, before the exec
    os.write(sync_fd, b"g")
    os.close(sync_fd)
    status = os.waitpid(pid, 0)[1]
    failure = os.read(err_fd, 4)
    os.close(err_fd)
    assert os.waitstatus_to_exitcode(status) == 0 and failure == b""
    assert marker.read_text() == "ran\n"
    assert not impostor_ran.exists()
    # the control: started from the path now, the impostor runs
    subprocess.run([str(installed)], check=True, timeout=30)
    assert impostor_ran.exists()


def test_the_exec_path_runs_cmd_through_the_spawn(ns, tmp_path):
    run, marker = marker_plan(tmp_path)
    run = run._replace(setup=plan.Setup.EXEC, ns=str(ns))
    pid, sync_fd, err_fd = nat.spawn(run, WIRE.allow_table(str(tmp_path)))
    os.write(sync_fd, b"g")
    os.close(sync_fd)
    status = os.waitpid(pid, 0)[1]
    os.close(err_fd)
    assert os.waitstatus_to_exitcode(status) == 0
    assert marker.read_text() == "ran\n"


@pytest.mark.parametrize("argv", [[], ["--plan-fd", "3"], ["--probe", "x"],
                                  ["--plan-fd", "3", "--err-fd", "999", "--shared-fd", "-1"],
                                  ["--plan-fd", "-1", "--err-fd", "2", "--shared-fd", "-1"]])
def test_started_any_other_way_it_refuses(ns, argv):
    proc = subprocess.run([str(ns), *argv], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 125
    assert proc.stderr.startswith("ztsa-ns: ") and proc.stderr.count("\n") == 1


def test_its_probe_answers_as_the_interpreter_s_does(ns):
    """`--probe`: what a child of ztsa-ns can make, as ztsa_ns_probe answers in-process."""
    userns = int(os.geteuid() != 0)
    proc = subprocess.run([str(ns), "--probe", str(userns)], timeout=60)
    assert proc.returncode == nat._namespaces("")
