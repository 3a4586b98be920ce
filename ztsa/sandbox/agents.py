"""`ztsa exec --agent NAME`: a whole coding agent run under ztsa, with what it needs.

A preset names the agent's API hosts (added to --allow-net) and its state directory in
the real home. The tree's HOME stays the private one; the state directory appears in it
as a private directory of the same name, with each entry of the real one bound in:
- the entries the agent writes as it works (`keep`: transcripts, to-do lists, its prompt
  history) writable, so what it writes is kept;
- every other entry read-only: its settings, hooks, plugins, skills, instruction files
  and its own login (the credentials file), whatever their names;
- a name the tree creates there lands in the private directory and is gone after the
  run, so nothing the tree writes becomes a setting, a hook or an instruction of a
  later, unconfined run of the agent;
- what the tree leaves in the kept entries is judged before and after the run
  (ztsa.sandbox.agentguard: links removed, modes made private, new instruction files
  moved aside).
Files of the home beside the directory (`copies`: Claude Code's ~/.claude.json, which
holds its MCP servers and per-project permissions) are copied into the private home:
the agent can read and rewrite its copy, and the copy is discarded.

Credentials other than the agent's own login reach the tree only by --secret NAME
(ztsa.sandbox.secret). Without a mount namespace (no user namespaces) the entries are
symbolic links instead, the kept ones writable by Landlock; the credentials file then
stays unreadable (Landlock's read rules), and the agent needs a --secret."""

from __future__ import annotations

import os
import stat

from ztsa.records import NamedTuple


class Agent(NamedTuple):
    name: str
    hosts: tuple[str, ...]  # --allow-net specs
    state: str  # its state directory, relative to the home
    keep: tuple[str, ...]  # entries of it written back (a name with a dot: a file)
    copies: tuple[str, ...] = ()  # files of the home given as private copies
    env: tuple[tuple[str, str], ...] = ()  # set for the run
    credentials: tuple[str, ...] = ()  # entries of the state that hold its login
    # kept paths (globs, relative to the state) whose files it loads as instructions
    instructions: tuple[str, ...] = ()


AGENTS = {
    "claude": Agent(
        "claude", ("api.anthropic.com:443",), ".claude",
        keep=("projects", "todos", "tasks", "plans", "file-history", "history.jsonl"),
        copies=(".claude.json",),
        # no telemetry, error reports or update checks: hosts the preset does not allow
        env=(("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),),
        credentials=(".credentials.json",), instructions=("projects/*/memory",)),
    "codex": Agent(
        "codex", ("api.openai.com:443", "chatgpt.com:443"), ".codex",
        keep=("sessions", "archived_sessions", "log", "history.jsonl"),
        credentials=("auth.json",)),
}


class Setup(NamedTuple):
    """What the presets add to a run."""

    binds: tuple[tuple[str, str, bool], ...]  # (real entry, its place in the private
    # home, writable), with a mount namespace
    writable: tuple[str, ...]  # real entries the tree writes (Landlock, without one)
    env: tuple[tuple[str, str], ...]
    # (real state directory, its kept entries, instruction globs): judged before and
    # after the run (ztsa.sandbox.agentguard)
    kept: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]


def hosts(names: list[str]) -> list[str]:
    return [h for n in names for h in AGENTS[n].hosts]


def prepare(names: list[str], real_home: str, own_home: str, mounts: bool) -> Setup:
    """Make the agents' state directories in the private home OWN_HOME: mount points for
    the entries of the real ones in REAL_HOME (mounts), else symbolic links to them;
    private copies of their home files. The real directory and its kept entries are
    created when missing, as the agent itself would."""
    binds: list[tuple[str, str, bool]] = []
    writable: list[str] = []
    env: dict[str, str] = {}
    kept: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = []
    for name in dict.fromkeys(names):
        agent = AGENTS[name]
        real = os.path.join(real_home, agent.state)
        os.makedirs(real, 0o700, exist_ok=True)
        for entry in agent.keep:
            path = os.path.join(real, entry)
            if not os.path.lexists(path):
                if "." in entry:
                    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600))
                else:
                    os.mkdir(path, 0o700)
        private = os.path.join(own_home, agent.state)
        os.mkdir(private, 0o700)
        for entry in sorted(os.listdir(real)):
            source = os.path.join(real, entry)
            try:
                st = os.stat(source)  # a link the person made: what it names
            except OSError:
                continue
            if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
                continue  # a socket or FIFO of a running agent: not the tree's
            rw = entry in agent.keep
            at = os.path.join(private, entry)
            if mounts:
                if stat.S_ISDIR(st.st_mode):
                    os.mkdir(at, 0o700)
                else:
                    os.close(os.open(at, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
                binds.append((source, at, rw))
            else:
                os.symlink(source, at)
                if rw:
                    writable.append(source)
        kept.append((real, agent.keep, agent.instructions))
        for entry in agent.copies:
            _copy(os.path.join(real_home, entry), os.path.join(own_home, entry))
        env.update(agent.env)
    return Setup(tuple(binds), tuple(writable), tuple(env.items()), tuple(kept))


def _copy(source: str, target: str) -> None:
    """SOURCE's bytes into a new 0600 TARGET; nothing when SOURCE is not a file."""
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            while chunk := os.read(fd, 1 << 16):
                os.write(out, chunk)
        finally:
            os.close(out)
    finally:
        os.close(fd)
