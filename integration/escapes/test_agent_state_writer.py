"""`--agent`: the agent's kept state (transcripts, to-do lists, plans, history, memory) is
written by the agent's own process alone (issue #44). Every other process of the tree
(the agent's Bash tool, its hooks, its MCP servers, and all they start) is refused by
the kernel while the run goes on, however it tries: a plain write, an append, a new
file, a directory, a rename from /tmp, a hard link either way, a symbolic link followed
by an O_CREAT open, the agent's own descriptors through /proc, an O_PATH directory
through /proc/self/fd, truncation, a double-forked orphan, a child that re-execs
itself under the agent's name.

The agent is a stand-in: a Python CMD that writes its state itself, as Claude Code
does from its own process (docs/agents.md, traced), and runs each attack as a child
process, as its Bash tool does. Judged by the files: what the agent itself reads back
before it exits (the effect during the run), and after the run every file of the real
state directory, the quarantine included: the tools' marker is nowhere, the agent's own
writes worked (and are moved aside after the run, as before). A run killed with SIGKILL
leaves nothing of the tools' either: there is no clean-up to miss."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from conftest import Runner, ensure_user

RUN_MODES = ("root", "user", "nouserns")
# without a log the helper lets the kernel make most names itself (CONTINUE): the layer
# alone then holds the tools off
BOTH_LOG_MODES = True
TOOL = "TOOLMARK-" + os.urandom(4).hex()
AGENT = "AGENTMARK-" + os.urandom(4).hex()

# each attack a child process of the agent, as its Bash tool runs a command; K is the
# state directory, T the run's TMPDIR, A the agent's pid, F its open transcript's fd
ATTACKS = {
    "settings-hooks": 'echo \'{"hooks":{"Stop":[{"hooks":[{"type":"command","command":'
                      '"touch /tmp/pwned"}]}]}}\' > "$K/settings.json"',
    "claude-md": 'echo "$M" >> "$K/CLAUDE.md"',
    "skill": 'mkdir -p "$K/skills/evil" && echo "$M" > "$K/skills/evil/SKILL.md"',
    "snapshot": 'for f in "$K"/shell-snapshots/*; do echo "$M" >> "$f"; done; '
                'echo "$M" > "$K/shell-snapshots/snapshot-bash-1-new.sh"',
    "memory-new": 'echo "$M" > "$K/projects/p/memory/evil.md"',
    "memory-append": 'echo "$M" >> "$K/projects/p/memory/MEMORY.md"',
    "memory-mkdir": 'mkdir -p "$K/projects/q/memory" && '
                    'echo "$M" > "$K/projects/q/memory/MEMORY.md"',
    "transcript-append": 'echo "$M" >> "$K/projects/-ws/old.jsonl"',
    "transcript-new": 'echo "$M" > "$K/projects/-ws/newest.jsonl"',
    "transcript-dd": 'printf "%s" "$M" | dd of="$K/projects/-ws/old.jsonl" conv=notrunc '
                     'status=none',
    "history": 'echo "$M" >> "$K/history.jsonl"',
    "todo": 'echo "[\\"$M\\"]" > "$K/todos/t.json"',
    "truncate": 'truncate -s 0 "$K/projects/-ws/old.jsonl"',
    "rename-from-tmp": 'echo "$M" > "$T/x.jsonl" && mv "$T/x.jsonl" "$K/projects/-ws/moved.jsonl"',
    "rename-within": 'mv "$K/projects/-ws/old.jsonl" "$K/projects/-ws/renamed.jsonl"',
    "link-in": 'echo "$M" > "$T/l.jsonl" && ln "$T/l.jsonl" "$K/projects/-ws/linked.jsonl"',
    "link-out": 'ln "$K/projects/-ws/old.jsonl" "$T/out" && echo "$M" >> "$T/out"',
    "symlink-then-open": 'ln -s "$K/projects/-ws/old.jsonl" "$T/s" && echo "$M" >> "$T/s"',
    "symlink-in": 'ln -s /etc/passwd "$K/projects/-ws/sym.jsonl"',
    "fifo": 'mkfifo "$K/todos/fifo"',
    "proc-agent-fd": 'echo "$M" >> "/proc/$A/fd/$F"',
    # the agent's own descriptor of its transcript (opened by the helper), taken
    "pidfd-getfd": r'''"$PY" -c "
import os, sys, ctypes
libc = ctypes.CDLL(None, use_errno=True)
pidfd = os.pidfd_open(int(sys.argv[1]))
fd = libc.syscall(438, pidfd, int(sys.argv[2]), 0)
if fd < 0:
    sys.exit(os.strerror(ctypes.get_errno()))
os.write(fd, sys.argv[3].encode())
" "$A" "$F" "$M"''',
    "python-opath": r'''"$PY" -c "
import os, sys
fd = os.open(sys.argv[1], os.O_PATH | os.O_DIRECTORY)
w = os.open(f'/proc/self/fd/{fd}/opath.jsonl', os.O_WRONLY | os.O_CREAT, 0o600)
os.write(w, sys.argv[2].encode())
" "$K/projects/-ws" "$M"''',
    "python-tmpfile": r'''"$PY" -c "
import os, sys
fd = os.open(sys.argv[1], os.O_TMPFILE | os.O_WRONLY, 0o600)
os.write(fd, sys.argv[2].encode())
os.link(f'/proc/self/fd/{fd}', sys.argv[1] + '/tmpfile.jsonl')
" "$K/projects/-ws" "$M"''',
    # re-execs the agent's own executable with the agent's own argv[0] (so its comm,
    # exe and command line's first word are the agent's), then writes
    "reexec-as-agent": r'''cat > "$T/re.py" <<'EOF'
import os, sys
if sys.argv[1] == "first":
    argv0 = open(f"/proc/{os.environ['A']}/cmdline").read().split(chr(0))[0]
    os.execv(sys.executable, [argv0, sys.argv[0], "again", *sys.argv[2:]])
with open(sys.argv[2], "a") as f:
    f.write(sys.argv[3])
EOF
"$PY" "$T/re.py" first "$K/projects/-ws/old.jsonl" "$M"''',
    # an orphan that outlives its parent (reparented to the tree's init), writing later
    "double-fork": r'''"$PY" -c "
import os, sys, time
if os.fork(): os._exit(0)
os.setsid()
if os.fork(): os._exit(0)
time.sleep(0.5)
with open(sys.argv[1], 'a') as f:
    f.write(sys.argv[2])
" "$K/projects/-ws/old.jsonl" "$M"''',
}

AGENT_CODE = r'''
import json, os, subprocess, sys, time
K = os.path.join(os.environ["HOME"], ".claude")
attacks, tool, agent, pause = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
# the agent's own writes, from its own process: a new transcript (its directory made),
# an append to an old one, a to-do list by rename, a history line, a memory file
os.makedirs(os.path.join(K, "projects", "-ws", "s1"), exist_ok=True)
t = os.open(os.path.join(K, "projects", "-ws", "s1.jsonl"),
            os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
os.write(t, (agent + "\n").encode())
with open(os.path.join(K, "projects", "-ws", "old.jsonl"), "a") as f:
    f.write(agent + "\n")
tmp = os.path.join(K, "todos", "s1.json.tmp")
with open(tmp, "w") as f:
    f.write(json.dumps([agent]))
os.replace(tmp, os.path.join(K, "todos", "s1.json"))
with open(os.path.join(K, "history.jsonl"), "a") as f:
    f.write(agent + "\n")
with open(os.path.join(K, "projects", "p", "memory", "agent.md"), "w") as f:
    f.write(agent + "\n")
print("agent-wrote", flush=True)
fd = os.open(os.path.join(K, "projects", "-ws", "s1.jsonl"), os.O_WRONLY | os.O_APPEND)
for name, script in attacks.items():
    env = dict(os.environ, K=K, T=os.environ["TMPDIR"], M=tool + "-" + name,
               A=str(os.getpid()), F=str(fd), PY=sys.executable)
    r = subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True)
    print(f"attack {name}: exit {r.returncode} {r.stderr.strip()[:200]!r}", flush=True)
time.sleep(1.0)  # the orphan's turn
os.write(t, (agent + "-still\n").encode())  # the agent's own descriptor still works
os.close(t)
# what the agent sees now: a tool's words in its own state (its shell snapshots are
# the run's own, written by a child shell as Claude Code's are, and discarded)
seen = []
for root, dirs, files in os.walk(K):
    if root == K:
        dirs.remove("shell-snapshots")
    for n in files:
        p = os.path.join(root, n)
        try:
            with open(p, "rb", opener=lambda q, f: os.open(q, f | os.O_NONBLOCK)) as fh:
                if tool.encode() in fh.read():
                    seen.append(os.path.relpath(p, K))
        except OSError:
            pass
    for n in dirs + files:
        if os.path.islink(os.path.join(root, n)):
            seen.append("link:" + os.path.relpath(os.path.join(root, n), K))
print("during:", sorted(seen), flush=True)
old = open(os.path.join(K, "projects", "-ws", "old.jsonl")).read()
print("old-intact:", old.startswith("the person's transcript\n"), flush=True)
if pause != "0":
    print("ready", flush=True)
    time.sleep(float(pause))
print("done", flush=True)
'''


def _home(run: Runner) -> Path:
    home = Path(tempfile.mkdtemp(prefix="ztsa-agent-home-"))
    c = home / ".claude"
    for d in ("projects/-ws", "projects/p/memory", "todos", "skills", "shell-snapshots",
              "hooks"):
        (c / d).mkdir(parents=True)
    (c / "settings.json").write_text('{"model": "x"}\n')
    (c / "CLAUDE.md").write_text("be careful\n")
    (c / "projects" / "-ws" / "old.jsonl").write_text("the person's transcript\n")
    (c / "projects" / "p" / "memory" / "MEMORY.md").write_text("the person's note\n")
    (c / "history.jsonl").write_text("old prompt\n")
    (c / "shell-snapshots" / "snapshot-bash-1-old.sh").write_text("alias ll='ls -l'\n")
    if run.mode != "root":
        uid = pwd.getpwnam(ensure_user()).pw_uid
        os.chmod(home, 0o755)
        for root, dirs, files in os.walk(home):
            for name in [".", *dirs, *files]:
                os.lchown(os.path.join(root, name), uid, uid)
    return home


def _agent(run: Runner, pause: float = 0) -> list[str]:
    code = run.workspace / "agent.py"
    code.write_text(AGENT_CODE)
    os.chmod(code, 0o644)
    import json

    return [run.python, str(code), json.dumps(ATTACKS), TOOL, AGENT, str(pause)]


def _holding(top: Path, marker: str) -> list[str]:
    """Every file beneath top (links not followed) whose bytes hold marker."""
    out = []
    for root, _dirs, files in os.walk(top):
        for n in files:
            p = os.path.join(root, n)
            if not os.path.islink(p) and os.path.isfile(p) and \
                    marker.encode() in Path(p).read_bytes():
                out.append(os.path.relpath(p, top))
    return sorted(out)


def test_only_the_agent_itself_writes_its_kept_state(run: Runner):
    home = _home(run)
    c = home / ".claude"
    proc, events = run(*_agent(run), extra=["--agent", "claude"], env={"HOME": str(home)},
                       timeout=300)
    assert proc.returncode == 0 and "done" in proc.stdout, (proc.stdout, proc.stderr)
    assert "agent-wrote" in proc.stdout
    during = next(x for x in proc.stdout.splitlines() if x.startswith("during:"))
    tools = _holding(c, TOOL)
    agent = _holding(c, AGENT)
    if run.mode == "nouserns":
        # no file helper, no mount namespace: the kept entries are one writable place
        # for the whole tree, the control is named missing, and what the tools wrote is
        # moved aside after the run (never left where a later session loads it)
        assert "the agent's own process alone" in proc.stderr, proc.stderr
        assert all(p.startswith(".ztsa-quarantine/") for p in tools), tools
    else:
        # refused while the run went on: the agent never saw a tool's words in its state,
        # the person's transcript kept its place, and nothing of the tools' was kept,
        # not even in the quarantine
        assert during == "during: []", (during, proc.stdout)
        assert "old-intact: True" in proc.stdout, proc.stdout
        assert tools == [], tools
        # the refusals are the helper's deny lines or the kernel's EACCES/EROFS/EXDEV
        assert not run.log or any(e["event"] == "deny" and "kept state" in e.get("rule", "")
                                  for e in events), [e for e in events
                                                     if e["event"] == "deny"][:5]
    # the agent's own writes worked: kept (and moved aside after the run, as every
    # file the run wrote there, until the person restores them)
    wrote = {"projects%2F-ws%2Fs1.jsonl", "todos%2Fs1.json", "history.jsonl",
             "projects%2Fp%2Fmemory%2Fagent.md"}
    assert wrote <= {Path(p).name for p in agent}, (agent, proc.stdout, proc.stderr)
    s1 = next(c / p for p in agent if p.endswith("s1.jsonl"))
    assert s1.read_text().startswith(f"{AGENT}\n") and f"{AGENT}-still\n" in s1.read_text()
    if run.mode != "nouserns":  # (there the tools wrote it and renamed the old one)
        assert s1.read_text() == f"{AGENT}\n{AGENT}-still\n"
        # the old transcript the agent appended to: moved aside with the agent's line
        old = next(c / p for p in agent if p.endswith("old.jsonl"))
        assert old.read_text() == f"the person's transcript\n{AGENT}\n"
    # what the agent reads later is the person's own, as before the run
    assert (c / "history.jsonl").read_text() == "old prompt\n"
    assert (c / "settings.json").read_text() == '{"model": "x"}\n'
    assert (c / "CLAUDE.md").read_text() == "be careful\n"
    assert sorted(os.listdir(c / "skills")) == []
    assert sorted(os.listdir(c / "shell-snapshots")) == ["snapshot-bash-1-old.sh"]
    assert not _holding(c / "shell-snapshots", TOOL)
    assert not os.path.lexists("/tmp/pwned")
    shutil.rmtree(home)


def test_a_killed_run_leaves_nothing_a_tool_wrote(run: Runner):
    """ztsa killed with SIGKILL after the attacks: no clean-up after the run, and still
    none of the tools' bytes in the real state directory."""
    if run.mode == "nouserns":
        return  # no control during the run there: the next run's check before it
    home = _home(run)
    argv, _ = run.command(*_agent(run, pause=60), extra=["--agent", "claude"],
                          env={"HOME": str(home)})
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=run.workspace, start_new_session=True)
    lines = []
    deadline = time.monotonic() + 240
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if line.strip() == "ready":
            break
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    assert "ready\n" in lines, ("".join(lines), proc.stderr.read() if proc.stderr else "")
    time.sleep(1.0)  # the tree ends with ztsa (EXITKILL, the keeper's death signal)
    c = home / ".claude"
    assert _holding(c, TOOL) == [], _holding(c, TOOL)
    assert (c / "projects" / "-ws" / "old.jsonl").read_text().startswith(
        "the person's transcript\n")
    assert not (c / "skills" / "evil").exists()
    shutil.rmtree(home)
