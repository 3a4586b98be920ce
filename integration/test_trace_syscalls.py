"""`ztsa exec --trace-syscalls`: every call of the tree in the audit log, decoded by
python-ptrace; judged on a real run against what the program did."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema

SCHEMA = json.loads((Path(__file__).parents[1] / "docs" / "audit-schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def _run(tmp_path: Path, *extra: str, code: str) -> tuple[subprocess.CompletedProcess[str],
                                                          list[dict]]:
    log = tmp_path / "audit.jsonl"
    done = subprocess.run([sys.executable, "-m", "ztsa", "exec", "--profile", "repo",
                           "--workspace", str(tmp_path), "--audit-log", str(log), *extra,
                           "--", sys.executable, "-c", code],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    events = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return done, events


def test_every_call_is_logged_decoded(tmp_path):
    marker = tmp_path / "made-by-the-tree.txt"
    code = (f"import os\nfd = os.open({str(marker)!r}, os.O_WRONLY | os.O_CREAT, 0o640)\n"
            "os.write(fd, b'x' * 7)\nos.close(fd)\nos.kill(os.getpid(), 0)\n"
            "try: os.stat('/nonexistent-ztsa')\nexcept OSError: pass\n"
            "os.system('true')\n")
    done, events = _run(tmp_path, "--trace-syscalls", code=code)
    assert done.returncode == 0, done.stderr
    for e in events:
        VALIDATOR.validate(e)
    calls = [e for e in events if e["event"] == "syscall"]
    execs = {e["pid"] for e in events if e["event"] == "exec"}
    assert calls and {e["pid"] for e in calls} <= execs, "a call of a process not in the tree"
    # the open as made: the path and flags decoded, the mode the program gave
    opened = [e for e in calls if e["name"] == "openat" and str(marker) in e["args"][1]]
    assert opened, [e for e in calls if e["name"] == "openat"][:5]
    assert "O_WRONLY" in opened[0]["args"][2] and "O_CREAT" in opened[0]["args"][2]
    assert "0o640" in opened[0]["args"][3] or "416" in opened[0]["args"][3], opened[0]
    assert isinstance(opened[0]["result"], int) and opened[0]["result"] >= 3, opened[0]
    assert any(e["name"] == "write" and e["args"][2] == "7" and e["result"] == 7 for e in calls)
    # a refused call has its errno; a call that never returns, none
    assert any(e["name"] == "exit_group" and e["result"] is None for e in calls)
    assert any(e["name"] == "kill" for e in calls)
    assert any("/nonexistent-ztsa" in " ".join(e["args"]) and e["result"] == "-ENOENT"
               for e in calls)
    # the shell os.system starts is traced too (a second process)
    assert len({e["pid"] for e in calls}) >= 2
    summary = next(e for e in events if e["event"] == "summary")
    assert summary["syscalls"] == len(calls)
    # ztsa's own set-up before CMD's exec is not the tree's
    first = next(i for i, e in enumerate(events) if e["event"] == "exec")
    assert not [e for e in events[:first] if e["event"] == "syscall"]


def test_without_the_flag_no_call_is_logged(tmp_path):
    done, events = _run(tmp_path, code="import os; os.getpid()")
    assert done.returncode == 0, done.stderr
    assert events and not [e for e in events if e["event"] == "syscall"]
    assert "syscalls" not in next(e for e in events if e["event"] == "summary")


def test_without_python_ptrace_the_flag_is_a_usage_error(tmp_path):
    # the decoder's package made unimportable for this ztsa alone
    launcher = ("import sys\nsys.modules['ptrace'] = None\n"
                "from ztsa.cli import main\nsys.exit(main())\n")
    done = subprocess.run([sys.executable, "-c", launcher, "exec", "--profile", "repo",
                           "--workspace", str(tmp_path), "--audit-log",
                           str(tmp_path / "log"), "--trace-syscalls", "--", "true"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2 and "pip install 'ztsa[trace]'" in done.stderr, done.stderr


def test_trace_syscalls_needs_a_log(tmp_path):
    done = subprocess.run([sys.executable, "-m", "ztsa", "exec", "--profile", "repo",
                           "--workspace", str(tmp_path), "--trace-syscalls", "--", "true"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2 and "--trace-syscalls needs --audit-log" in done.stderr
