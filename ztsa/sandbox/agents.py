"""`ztsa exec --agent NAME`: a whole coding agent run under ztsa, with what it needs.

A preset names the agent's API hosts (added to --allow-net) and its state directory in
the real home. The tree's HOME stays the private one; the state directory appears in it
as a private directory of the same name. Each entry of the real one is of one of three
classes, decided from what the agent does with it (the reasons are beside the names):
- `keep`: what the agent writes as it works and a later session only reads as data
  (transcripts, task lists, plans, its prompt history): bound writable, so what it
  writes is kept;
- `private`: what the agent writes as it works and a later session sources or runs
  (shell snapshots, session environments), or what has no value after the run (its
  live sessions' pids, locks, caches, logs): a fresh entry of the private directory,
  discarded after the run. A directory is new and empty; a file is absent (the agent
  makes it anew), or a private copy of the real one (`private_copies`) where the run
  needs its content;
- every other entry read-only: its settings, hooks, plugins, skills, instruction files
  and its own login (the credentials file), whatever their names.
A name the tree creates there lands in the private directory and is gone after the
run, so nothing the tree writes becomes a setting, a hook or an instruction of a later,
unconfined run of the agent. What the tree leaves in the kept entries is judged before
and after the run (ztsa.sandbox.agentguard: links removed, modes made private, new
instruction files moved aside).

Files of the home beside the directory (`copies`: Claude Code's ~/.claude.json, which
holds its MCP servers and per-project permissions) are given as private copies, made
by ztsa from the person's own file (outside the tree's reach: the real home is hidden
from it), never from one a tree wrote; the agent can rewrite its copy, which is
discarded. Claude Code's copy carries the answers that would otherwise be asked on
every run, since an answer given inside the run is discarded with the copy
(`_claude_answers`). Codex's config.toml is a private copy made even when the person
has none (`made`), with its interactive mode's background server off
(`_codex_settings`), and the API base it names is the preset's only host (`hosts`).

A preset names the agent versions it was tested with (`tested`); `installed_version`
reads the version of the agent a run starts from its package files, without running
it, so that ztsa can say when it differs.

Credentials other than the agent's own login reach the tree only by --secret NAME
(ztsa.sandbox.secret). Without a mount namespace (no user namespaces) the kept and
read-only entries are symbolic links instead, the kept ones writable by Landlock; the
credentials file then stays unreadable (Landlock's read rules), and the agent needs a
--secret."""

from __future__ import annotations

import fnmatch
import os
import stat

from ztsa.records import NamedTuple


class Agent(NamedTuple):
    name: str
    title: str  # as its makers name it
    hosts: tuple[str, ...]  # --allow-net specs
    state: str  # its state directory, relative to the home
    keep: tuple[str, ...]  # entries of it written back (a name with a dot: a file)
    # entries (fnmatch patterns) given fresh to each run and discarded after it
    private: tuple[str, ...] = ()
    # files among them (patterns) given as a private copy of the real one
    private_copies: tuple[str, ...] = ()
    made: tuple[str, ...] = ()  # private copies made (empty) when there is none
    copies: tuple[str, ...] = ()  # files of the home given as private copies
    env: tuple[tuple[str, str], ...] = ()  # set for the run
    credentials: tuple[str, ...] = ()  # entries of the state that hold its login
    # kept paths (globs, relative to the state) whose files it loads as instructions
    instructions: tuple[str, ...] = ()
    command: str = ""  # its executable's name (CMD's first word, for the version)
    package: str = ""  # its npm package, whose package.json names the version
    tested: tuple[str, ...] = ()  # the versions this preset was tested with
    # its own process is CMD (the executable the person runs): its kept state is then
    # written by CMD's thread group alone, every other process of the tree refused
    # (landlock.kept_plan); else (a launcher that starts it as a child) only moved aside
    writer_is_cmd: bool = False


AGENTS = {
    "claude": Agent(
        "claude", "Claude Code", ("api.anthropic.com:443",), ".claude",
        keep=(
            "projects",  # transcripts (read back on --resume; projects/*/memory is
            # loaded as instructions: judged, new memory moved aside)
            "tasks",  # its task lists
            "todos",  # the same, of versions before tasks/
            "plans",  # plan-mode files, read back as text
            "file-history",  # the files it edited, as they were (for /rewind)
            "history.jsonl",  # the prompts typed
        ),
        private=(
            "session-env",  # SessionStart hooks' CLAUDE_ENV_FILE output: sourced before
            # each Bash command of that session
            "shell-snapshots",  # the shell's functions and aliases, made at start and
            # sourced before every Bash call
            "sessions",  # <pid>.json of each live session (the sandbox's own pids)
            "ide",  # <port>.lock of the person's editors (the port and its token): a
            # session connects to the port named there
            "backups",  # copies of ~/.claude.json (its MCP servers): a session restores
            # its configuration from them
            "telemetry",  # events not yet sent: a later session sends them
            "statsig",  # feature-flag cache of earlier versions
            "cache",  # changelog, issue and team caches
            "debug", "logs", "traces", "startup-perf", "dump-prompts",
            "feedback-bundles", "usage-data",  # its logs and diagnostics
            "paste-cache", "image-cache", "uploads", "shares",  # the run's pastes,
            # images and uploads
            "jobs",  # background jobs' state: a later session adopts them
            "teams",  # a live agent team's members and inboxes
            "stats-cache.json", "mcp-needs-auth-cache.json", "gh-pr-status-cache.json",
            ".last-update-result.json", ".update.lock", ".last-cleanup",
            ".deep-link-register-failed", "*.lock",  # caches, markers and locks
            ".config.json",  # its configuration where it once lived (used instead of
            # ~/.claude.json when present): a private copy, as ~/.claude.json
        ),
        private_copies=(".last-cleanup", ".config.json"),
        copies=(".claude.json",),
        # no telemetry, error reports or update checks: hosts the preset does not allow
        env=(("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),),
        credentials=(".credentials.json",), instructions=("projects/*/memory",),
        command="claude", package="@anthropic-ai/claude-code", tested=("2.1.197",),
        # a native executable that writes its state from its own threads (traced:
        # docs/agents.md)
        writer_is_cmd=True),
    "codex": Agent(
        "codex", "Codex CLI", ("api.openai.com:443", "chatgpt.com:443"), ".codex",
        keep=(
            "sessions",  # rollouts: transcripts (read back on resume)
            "archived_sessions",  # the same, archived
            "log",  # codex-tui.log
            "history.jsonl",  # the prompts typed
            "session_index.jsonl",  # the threads' names, listed by resume
        ),
        private=(
            "shell_snapshots",  # the shell's state, sourced before each command
            "tmp",  # arg0 helpers (apply_patch), put first on its PATH: run
            ".tmp",  # staging of plugin and skill installs
            "thread-writer-locks",  # locks of live threads
            "app-server-daemon",  # the TUI's background server: its pid files, logs,
            # locks and launch settings (settings.json names the executable a later
            # session starts)
            "app-server-control",  # a link to that server's socket: a later session
            # connects to the server it names and runs its work there
            "tui-thread-reference-capabilities",  # markers of the run's threads
            "*.lock",  # auth.lock, auth.json.lock, session_index.jsonl.lock
            "*.sqlite", "*.sqlite-wal", "*.sqlite-shm",  # its thread index, goals, queue,
            # memory pipeline and logs: a private copy (below) but for the logs, without
            # the write-ahead log (what it holds the copy lacks, and the real one keeps)
            "installation_id", ".sandbox_migration",  # written at start when missing
            "version.json", "models_cache.json",  # caches
            "config.toml",  # its settings, MCP servers and trusted projects: it writes
            # them as it works (trust, notices), so a private copy, made when missing,
            # with its background server off (`_codex_settings`)
        ),
        # (read-only: `packages`, the background server's installed releases, which a
        # later session runs)
        private_copies=("state_*.sqlite", "thread_history_*.sqlite", "goals_*.sqlite",
                        "queue_*.sqlite", "memories_*.sqlite", "installation_id",
                        ".sandbox_migration", "models_cache.json", "config.toml"),
        made=("config.toml",),
        credentials=("auth.json",),
        # its npm launcher (bin/codex.js) spawns the native agent as its child: no
        # process of the tree can be told as the agent's own
        command="codex", package="@openai/codex", tested=("0.171.0",)),
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
    # the kept entries in the private home (mount points) of the agents whose own
    # process is CMD: written by CMD alone (plan.kept)
    own_writer: tuple[str, ...] = ()


def hosts(names: list[str], home: str = "") -> list[str]:
    """The presets' --allow-net specs: Codex's the host of the API base the person's own
    ~/.codex/config.toml in HOME names (its model provider's `base_url`, or
    `openai_base_url`), else the preset's."""
    out: list[str] = []
    for n in dict.fromkeys(names):
        base = _codex_api_host(home) if n == "codex" and home else None
        out += [base] if base else AGENTS[n].hosts
    return out


def _codex_api_host(home: str) -> str | None:
    """HOST:PORT of the API base that Codex's configuration in HOME names; None when it
    names none (the built-in provider's hosts), or cannot be read."""
    from urllib.parse import urlsplit

    from ztsa.parsing import ParseError, load_toml

    data = _read(os.path.join(home, AGENTS["codex"].state, "config.toml"), follow=True)
    try:
        config = load_toml(data.decode(), "config.toml") if data else {}
    except (ParseError, UnicodeDecodeError):
        return None
    provider = config.get("model_provider", "openai")
    providers = config.get("model_providers")
    entry = providers.get(provider) if isinstance(providers, dict) else None
    url = entry.get("base_url") if isinstance(entry, dict) else (
        config.get("openai_base_url") if provider == "openai" else None)
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url.strip())
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not host or parts.scheme not in ("http", "https", "ws", "wss"):
        return None
    port = port or (443 if parts.scheme in ("https", "wss") else 80)
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def prepare(names: list[str], real_home: str, own_home: str, mounts: bool,
            workspace: str = "", env: dict[str, str] | None = None) -> Setup:
    """Make the agents' state directories in the private home OWN_HOME: mount points for
    the kept and read-only entries of the real ones in REAL_HOME (mounts), else symbolic
    links to them; fresh private entries; private copies of their home files, with the
    answers for WORKSPACE and ENV (CMD's environment). The real directory and its kept
    entries are created when missing, as the agent itself would."""
    binds: list[tuple[str, str, bool]] = []
    writable: list[str] = []
    extra: dict[str, str] = {}
    kept: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = []
    own_writer: list[str] = []
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
            at = os.path.join(private, entry)
            try:
                st = os.stat(source)  # a link the person made: what it names
            except OSError:
                continue
            if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
                continue  # a socket or FIFO of a running agent: not the tree's
            if entry not in agent.keep and _matches(entry, agent.private):
                if stat.S_ISDIR(st.st_mode):
                    os.mkdir(at, 0o700)  # new and empty: nothing of the real one
                elif _matches(entry, agent.private_copies):
                    _private_copy(name, source, at, workspace, env or {}, follow=True)
                continue  # any other file: absent, the agent makes it anew
            rw = entry in agent.keep
            if mounts:
                if stat.S_ISDIR(st.st_mode):
                    os.mkdir(at, 0o700)
                else:
                    os.close(os.open(at, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
                binds.append((source, at, rw))
                if rw and agent.writer_is_cmd:
                    own_writer.append(at)
            else:
                os.symlink(source, at)
                if rw:
                    writable.append(source)
        for entry in agent.made:
            if not os.path.lexists(os.path.join(private, entry)):
                _private_copy(name, os.path.join(real, entry), os.path.join(private, entry),
                              workspace, env or {}, always=True, follow=True)
        kept.append((real, agent.keep, agent.instructions))
        for entry in agent.copies:
            _private_copy(name, os.path.join(real_home, entry), os.path.join(own_home, entry),
                          workspace, env or {}, always=True)
        extra.update(agent.env)
    return Setup(tuple(binds), tuple(writable), tuple(extra.items()), tuple(kept),
                 tuple(own_writer))


def _private_copy(agent: str, source: str, target: str, workspace: str,
                  env: dict[str, str], always: bool = False, follow: bool = False) -> None:
    """SOURCE's bytes into a new 0600 TARGET (nothing when SOURCE is not a regular file,
    unless ALWAYS: then an empty one); Claude Code's configuration with the answers.
    FOLLOW: an entry of the state directory, which may be the person's link (as a bound
    entry may); a file of the home never is followed."""
    data = _read(source, follow)
    if data is None and not always:
        return
    data = data or b""
    if agent == "claude" and target.endswith((".claude.json", ".config.json")):
        data = _claude_answers(data, workspace, env)
    elif agent == "codex" and os.path.basename(target) == "config.toml":
        data = _codex_settings(data)
    out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(out, view):]
    finally:
        os.close(out)


def _read(source: str, follow: bool = False) -> bytes | None:
    """A regular file's bytes, never through a link (unless FOLLOW); None when there is
    none."""
    how = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(source, how)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _claude_answers(data: bytes, workspace: str, env: dict[str, str]) -> bytes:
    """Claude Code's configuration (the person's own ~/.claude.json, or nothing) with
    the answers it would ask for at every run, since the run's own are discarded:
    - onboarding done (`hasCompletedOnboarding`): its first screen checks that it can
      reach platform.claude.com, a host the preset does not allow, and what it sets up
      (a theme, a login) could not be kept;
    - not the workspace's trust (`projects[WORKSPACE].hasTrustDialogAccepted`): that
      answer is the person's own, kept from their file where they gave it; a folder
      they never trusted is asked about (never turn uncertainty into permission);
    - the API key given to the run (ANTHROPIC_API_KEY, by --secret or --env) approved
      (`customApiKeyResponses.approved`, its last 20 characters).
    A file that is not a JSON object is left as it is (the agent says what it finds)."""
    import json

    try:
        config = json.loads(data) if data.strip() else {}
    except ValueError:
        return data
    if not isinstance(config, dict):
        return data
    config["hasCompletedOnboarding"] = True
    key = env.get("ANTHROPIC_API_KEY", "")
    if key:
        responses = config.get("customApiKeyResponses")
        if not isinstance(responses, dict):
            responses = config["customApiKeyResponses"] = {}
        approved = responses.get("approved")
        approved = [a for a in approved if isinstance(a, str)] if isinstance(
            approved, list) else []
        rejected = responses.get("rejected")
        responses["approved"] = [*approved, *([key[-20:]] if key[-20:] not in approved
                                               else [])]
        if isinstance(rejected, list):
            responses["rejected"] = [r for r in rejected if r != key[-20:]]
    return (json.dumps(config, indent=2) + "\n").encode()


def _codex_settings(data: bytes) -> bytes:
    """Codex's configuration (the person's own config.toml, or nothing) with its
    background server off (`[features] daemon_auto_start = false`). Its interactive mode
    starts that server from the person's own install (`packages/`, read-only here, named
    by a link into the hidden home) and leaves it running after the session, to go on
    with the session's work: under ztsa it would end with the run all the same. Off, the
    session serves itself in its own process, as `codex exec` does. Added as a line of
    text, kept only when the result parses to the person's settings and this one; a
    file where it cannot be is left as it is (Codex then says why it cannot start,
    naming `--no-daemon`)."""
    from ztsa.parsing import ParseError, load_toml

    try:
        text = data.decode()
        config = load_toml(text, "config.toml")
    except (ParseError, UnicodeDecodeError):
        return data
    features = config.get("features", {})
    if not isinstance(features, dict):
        return data
    if features.get("daemon_auto_start") is False:
        return data
    want = {**config, "features": {**features, "daemon_auto_start": False}}
    import re

    line = "daemon_auto_start = false\n"
    sep = "\n" if text and not text.endswith("\n") else ""
    header = re.compile(r"^[ \t]*\[[ \t]*features[ \t]*\][ \t]*(#[^\n]*)?\n?", re.M)
    candidates = [
        re.sub(r"(?m)^([ \t]*daemon_auto_start[ \t]*=[ \t]*)true\b", r"\1false", text),
        header.sub(lambda m: m.group(0) + ("" if m.group(0).endswith("\n") else "\n")
                   + line, text, count=1),
        f"{text}{sep}\n[features]\n{line}",
        "features." + line + text,
    ]
    for candidate in candidates:
        try:
            if load_toml(candidate, "config.toml") == want:
                return candidate.encode()
        except ParseError:
            continue
    return data


def installed_version(agent: Agent, command: str, path: str | None) -> tuple[str, str] | None:
    """(the executable CMD's first word COMMAND names, its version or "" when it cannot
    be read), read from its package files without running it; None when COMMAND is not
    this agent's executable, or is not found on PATH."""
    if not agent.command or os.path.basename(command) != agent.command:
        return None
    import shutil

    found = command if os.sep in command else shutil.which(command, path=path)
    if not found or not os.path.exists(found):
        return None
    real = os.path.realpath(found)
    parent = os.path.dirname(real)
    # the native installer's ~/.local/share/claude/versions/2.1.197
    if os.path.basename(parent) == "versions" and _version(os.path.basename(real)):
        return found, _version(os.path.basename(real))
    for _ in range(4):  # bin/claude.exe, bin/codex.js, vendor/TRIPLE/codex/codex
        version = _package_version(os.path.join(parent, "package.json"), agent.package)
        if version is None and agent.name == "codex":  # its standalone installer's
            # packages/standalone/releases/VERSION-TRIPLE/bin/codex
            version = _package_version(os.path.join(parent, "codex-package.json"), "codex",
                                       key="variant")
        if version is not None:
            return found, version
        if os.path.basename(parent) == "node_modules" or parent == os.path.dirname(parent):
            break
        parent = os.path.dirname(parent)
    return found, ""


def _package_version(path: str, package: str, key: str = "name") -> str | None:
    """The version a package.json of PACKAGE (its KEY) names ("" when unreadable); None
    when the file is missing or of another package."""
    import json

    data = _read(path)
    if data is None or len(data) > 1 << 20:
        return None
    try:
        meta = json.loads(data)
    except ValueError:
        return None
    if not isinstance(meta, dict) or meta.get(key) != package:
        return None
    version = meta.get("version")
    return _version(version) if isinstance(version, str) else ""


def _version(text: str) -> str:
    """A version's number, without a platform package's suffix (0.171.0-linux-x64)."""
    import re

    m = re.match(r"\d+\.\d+\.\d+(?:-(?!linux|darwin|win32)[0-9A-Za-z.]+)?$",
                 re.sub(r"-(linux|darwin|win32)\b.*$", "", text))
    return m.group(0) if m else ""


def version_warning(names: list[str], command: str, path: str | None) -> list[str]:
    """One line for each agent whose executable COMMAND is another version than its
    preset was tested with, or one whose version cannot be read."""
    from ztsa.printable import printable

    lines = []
    for name in dict.fromkeys(names):
        agent = AGENTS[name]
        found = installed_version(agent, command, path)
        if found is None or found[1] in agent.tested:
            continue
        tested = ", ".join(agent.tested)
        what = f"is {found[1]}" if found[1] else "has a version ztsa cannot read"
        lines.append(f"ztsa: --agent {name} was tested with {agent.title} {tested}; "
                     f"{printable(found[0])} {what}: its state may need entries the "
                     f"preset does not know (docs/agents.md)")
    return lines


def writer_warning(names: list[str], command: str) -> list[str]:
    """One line for each agent whose kept state cannot be written by its own process
    alone in this run: CMD (COMMAND) is not its executable, so the agent it starts is a
    child, refused like the tools; or its preset knows no such process (a launcher that
    starts the agent as a child), so what the run writes there is only moved aside."""
    from ztsa.printable import printable

    lines = []
    for name in dict.fromkeys(names):
        agent = AGENTS[name]
        if not agent.writer_is_cmd:
            lines.append(f"ztsa: --agent {name}: {agent.title} runs as a child of its "
                         "launcher, so its own writes cannot be told from its tools': what "
                         "the run writes in its kept state is moved aside after it, not "
                         "refused (docs/agents.md)")
        elif agent.command and os.path.basename(command) != agent.command:
            lines.append(f"ztsa: --agent {name}: CMD is {printable(command)}, not "
                         f"{agent.command}: only CMD's own process writes {agent.title}'s "
                         "kept state (transcripts, history), so an agent it starts cannot "
                         "(docs/agents.md)")
    return lines


def hook_warning(names: list[str], workspace: str) -> list[str]:
    """One line for each settings file of Claude Code that holds ztsa's own Bash hook
    (`ztsa hook claude`: its shell prefix in `env`, its guard, or an older ztsa's
    rewriting entry), under --agent claude: inside the sandbox neither the wrapper (in
    the hidden home) nor ztsa can run (a ztsa run does not nest in another), so every
    Bash call fails or is blocked, and the agent is told only that ztsa failed."""
    if "claude" not in names:
        return []
    paths = [os.path.join(os.path.expanduser("~"), ".claude", "settings.json"),
             *(os.path.join(workspace, ".claude", n)
               for n in ("settings.json", "settings.local.json"))]
    lines = []
    for path in paths:
        try:
            with open(path, "rb") as f:
                text = f.read(1 << 20)
        except OSError:
            continue
        if b"ztsa" not in text and b"claude-shell" not in text:  # parse only where it may be
            continue
        import json

        from ztsa.hook import PREFIX_VAR, is_ztsa_hook, is_ztsa_prefix
        from ztsa.printable import printable

        try:
            settings = json.loads(text)
        except (ValueError, RecursionError):
            continue
        if not isinstance(settings, dict):
            continue
        hooks, env = settings.get("hooks"), settings.get("env")
        groups = hooks.get("PreToolUse") if isinstance(hooks, dict) else None
        if (isinstance(env, dict) and is_ztsa_prefix(env.get(PREFIX_VAR))) or (
                isinstance(groups, list) and any(
                    is_ztsa_hook(h) for g in groups if isinstance(g, dict)
                    and isinstance(g.get("hooks"), list) for h in g["hooks"])):
            lines.append(f"ztsa: {printable(path)} holds ztsa's Bash hook: under --agent "
                         "claude it cannot run ztsa, so every Bash call is blocked; the "
                         "whole agent under ztsa needs no hook: remove it for these runs "
                         "(`ztsa hook claude --uninstall`; docs/agents.md)")
    return lines
