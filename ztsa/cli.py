"""Command line. Thin: parse, call the engine, format, choose the exit code.

Built on the standard library's argparse, not click: ztsa runs before every agent
command, and click's import costs much more than argparse's (measured side by side by
bench/preflight; see docs/performance.md, "Start-up cost").

Exit codes: 0 gate passed; 3 gate failed; 2 usage or configuration error;
125 internal error (one line on stderr; a traceback with --debug); `quarantine`:
0 done, 1 something could not be listed or restored.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys

from ztsa import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _as_written(message: str) -> str:
    return message


def _as_written_n(singular: str, plural: str, n: int) -> str:
    return singular if n == 1 else plural


# argparse's own messages as written. It asks gettext for a translation of each one as
# the parser is built and as it reports an error, and each time gettext searches for a
# catalogue under /usr/share/locale, importing locale to do it. ztsa's text is English
# only and should read the same in every locale, so argparse's module-level `_` and
# `ngettext` (bound by its `from gettext import gettext as _, ngettext`) return each
# message unchanged; gettext itself is left as it is for anyone else.
argparse._ = _as_written  # type: ignore[attr-defined]
argparse.ngettext = _as_written_n  # type: ignore[attr-defined]

EXIT_PASS = 0
EXIT_USAGE = 2
EXIT_GATE = 3
EXIT_INTERNAL = 125

EPILOG = """\
Exit codes (check):
  0    the gate passed
  3    the gate failed: a gating rule is fail or unknown
  2    usage or configuration error
  125  internal error (ztsa itself failed; never a pass)
Exit codes (exec): CMD's own, or 128+N for signal N; 3 gate failed (CMD not
started); 126 cannot execute; 127 not found; 125 ztsa failed (tree killed);
122 CMD succeeded, but what the tree left could not all be taken away (named).
"""

PROFILES = ("repo", "dependency", "untrusted")
AGENT_NAMES = ("claude", "codex")  # ztsa.sandbox.agents.AGENTS, without importing it


class UsageError(Exception):
    """A usage or configuration error found after parsing (exit 2)."""


def _use_color(stream: Any, to_file: bool) -> bool:
    """On a terminal only; never with NO_COLOR set to anything (no-color.org) or for
    TERM=dumb."""
    if to_file or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def _endpoint(spec: str) -> tuple[str, int]:
    """IP:PORT or [IPv6]:PORT."""
    import ipaddress

    host, sep, port = spec.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        ipaddress.ip_address(host)
        number = int(port)
        if not sep or not 0 < number < 65536:
            raise ValueError(spec)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{spec!r} is not IP:PORT or [IPv6]:PORT") from None
    return host, number


def _net_spec(spec: str) -> str:
    """--allow-net SPEC as written; an @NAME must be a network preset (expanded where the
    flags meet the policy files, ztsa.tiers.merge_exec)."""
    if spec.strip().startswith("@"):
        from ztsa.sandbox.presets import UnknownPreset, get

        try:
            get(spec)
        except UnknownPreset as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return spec


def _directory(path: str) -> str:
    if not os.path.exists(path):
        raise argparse.ArgumentTypeError(f"directory {path!r} does not exist")
    if not os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"{path!r} is not a directory")
    if not os.access(path, os.R_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"directory {path!r} cannot be read")
    return path


def _open_own_file(path: str, append: bool = False) -> Any:
    """A file ztsa writes (a report, the audit log), emptied first: never through a
    symlink or into a second name of another file, which a tree confined by an earlier
    run could have planted there (ztsa itself runs unconfined)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
                 | (os.O_APPEND if append else 0), 0o644)
    st = os.fstat(fd)
    import stat

    if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
        os.close(fd)
        raise OSError(errno.EPERM, "not a file of its own (a hard link or a device)")
    os.ftruncate(fd, 0)
    f = os.fdopen(fd, "a" if append else "w", encoding="utf-8")
    f.buffer.raw.name = path  # type: ignore[attr-defined]  # as open(path) names it
    return f


def _max_procs(text: str) -> int:
    if not text.isdigit() or int(text) < 300:
        raise argparse.ArgumentTypeError(f"{text!r}: a number of at least 300 (the least "
                                         "pid_max a PID namespace takes)")
    return int(text)


def _size(text: str) -> int:
    from ztsa.sandbox.plan import parse_size

    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


# -- parser ----------------------------------------------------------------------------------
def _columns() -> int:
    """The terminal's width as shutil.get_terminal_size finds it: argparse's formatters
    import shutil (and through it zlib, bz2 and lzma) for it when no width is given."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class _Plain(argparse.HelpFormatter):
    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         _columns() - 2 if width is None else width)


class _Raw(_Plain, argparse.RawDescriptionHelpFormatter):
    """_Plain's width, descriptions and epilogs as written."""


def _gate_options(p: argparse.ArgumentParser) -> None:
    """The options of the gate, shared by `check` and `exec` ("the options of check")."""
    p.add_argument("--profile", choices=PROFILES, default="untrusted",
                   help="trust profile: what blocks and what only warns (default: untrusted)")
    p.add_argument("--format", dest="fmt", choices=("text", "json", "sarif", "github"),
                   default="text", help="report format: text, json, sarif, or github "
                                        "(workflow annotations); default: text")
    p.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE")
    p.add_argument("--probe-network", action="store_true",
                   help="also run NET004: one 1 s TCP connect to each cloud metadata endpoint")
    p.add_argument("--lookup", action="store_true",
                   help="SUP003: where a lockfile does not record install scripts (Yarn, pnpm "
                        "9, Bun) and nothing is installed, ask the npm registry's metadata "
                        "(.npmrc's registry, else registry.npmjs.org); the gate sends nothing "
                        "otherwise")
    p.add_argument("--metadata-endpoint", dest="endpoints", action="append", default=[],
                   type=_endpoint, metavar="IP:PORT",
                   help="replace NET004's endpoints (169.254.169.254:80, [fd00:ec2::254]:80);"
                        " repeatable")
    p.add_argument("--exclude", dest="excludes", action="append", default=[], metavar="GLOB",
                   help="leave workspace paths matching GLOB (relative, e.g. 'tests/fixtures')"
                        " out of the file-based rules; repeatable")
    p.add_argument("--allow-registry", dest="registries", action="append", default=[],
                   metavar="HOST", help="also trust packages resolved from HOST (SUP002); "
                                        "repeatable")
    p.add_argument("--no-cache", action="store_true",
                   help="parse every lockfile afresh instead of reusing parse results of "
                        "identical files (kept in $ZTSA_CACHE_DIR, else ~/.cache/ztsa)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ztsa", formatter_class=_Raw, epilog=EPILOG,
        description="ztsa, the Zero-Trust Sandbox Auditor: a preflight gate for AI coding "
                    "agents.\n\n`ztsa check` audits the environment and the workspace under a "
                    "trust profile\n(repo, dependency, untrusted; default untrusted) and exits 3"
                    " if the gate fails.\n`ztsa exec` runs the gate, then a command confined.")
    parser.add_argument("--version", action="version", version=f"ztsa, version {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for internal "
                                                             "errors")
    sub = parser.add_subparsers(dest="command_name", metavar="COMMAND", required=True)

    def debug_option(p: argparse.ArgumentParser) -> None:
        # also after the subcommand (main() reads it from argv either way)
        p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show tracebacks for internal errors")

    check = sub.add_parser("check", help="audit a workspace and the environment; exit 3 on "
                                         "failure", epilog=EPILOG,
                           formatter_class=_Raw,
                           description="Audit PATH (default: the current directory) and the "
                                       "environment; exit 3 on failure.")
    _gate_options(check)
    debug_option(check)
    check.add_argument("path", nargs="?", default=".", type=_directory)
    check.set_defaults(func=cmd_check, parser=check)

    ex = sub.add_parser(
        "exec", usage="ztsa exec [OPTIONS] -- CMD [ARG...]", epilog=EPILOG,
        formatter_class=_Raw,
        help="run the gate on the workspace, then CMD confined",
        description="Run the gate on the workspace, then CMD confined.\n\nExit status: CMD's "
                    "(128+N if signal N killed it); 3 if the gate failed and CMD\nwas never "
                    "started; 126 if CMD cannot be executed, 127 if it is not found;\n125 if "
                    "ztsa itself failed (the whole tree is killed first); 2 for usage errors;\n"
                    "122 if CMD succeeded but something the tree left that would run later\n"
                    "could not be taken away (named on stderr).")
    _gate_options(ex)
    debug_option(ex)
    ex.add_argument("--quiet", "-q", action="store_true",
                    help="no summary line on stderr after the run (the audit log keeps it), "
                         "nor the hygiene warnings of a gate that passes")
    ex.add_argument("--no-git-identity", action="store_true",
                    help="do not give the private HOME your git user.name and user.email")
    ex.add_argument("--no-tool-config", action="store_true",
                    help="do not give the private HOME the filtered, read-only copies of "
                         "your Cargo, npm, pip, uv, git and SSH configuration (only keys "
                         "that hold no credential are ever copied)")
    ex.add_argument("--workspace", default=".", type=_directory,
                    help="the workspace the gate audits (default: the current directory)")
    ex.add_argument("--allow-net", action="append", default=[], metavar="SPEC",
                    type=_net_spec,
                    help="allow connections and sends to SPEC: HOST, HOST:PORT, IP, IP:PORT, "
                         "CIDR, CIDR:PORT, [IPv6]:PORT or *.example.com[:PORT], or @NAME, "
                         "an ecosystem's hosts on port 443 (@npm, @pypi, @crates, @go, "
                         "@rubygems, @maven, @github: `ztsa policy presets`); repeatable; "
                         "nothing is allowed by default. A HOST or wildcard is followed: "
                         "the addresses its DNS answers give the tree are allowed (never "
                         "loopback, link-local or private ones; name those by address), "
                         "and a TCP connection there must name the host in its first "
                         "bytes (TLS server name, HTTP Host): HOST:PORT/raw for another "
                         "protocol, /udp for UDP (QUIC)")
    ex.add_argument("--allow-listen", action="append", default=[], type=_port_number,
                    metavar="PORT", help="let connections from outside reach the tree's "
                                         "listener on PORT (by default nothing outside the "
                                         "tree can connect to it)")
    ex.add_argument("--allow-unix", action="append", default=[], metavar="PATH",
                    help="allow connecting to the Unix socket PATH (@NAME for an abstract one)")
    ex.add_argument("--dns", action="append", default=[], metavar="ADDR",
                    help="the resolver ztsa asks for the names --allow-net names (default: "
                         "/etc/resolv.conf's); the tree's own queries are answered by ztsa")
    ex.add_argument("--audit-log", metavar="FILE", help="write JSON-lines events to FILE")
    ex.add_argument("--audit-format", choices=("ztsa", "ocsf"), default="ztsa",
                    help="the audit log's shape: ztsa's own events (docs/audit-schema.json, "
                         "written as they happen) or OCSF events for log pipelines (process, "
                         "file system, network and DNS activity; written when the run ends)")
    ex.add_argument("--trace-syscalls", action="store_true",
                    help="research: also log every system call of the tree, decoded (name "
                         "and arguments; python-ptrace, `pip install 'ztsa[trace]'`); "
                         "each call then stops in the tracer, so the tree runs slower")
    ex.add_argument("--audit-only", action="store_true",
                    help="learn, then enforce: deny nothing on the network or in the file "
                         "system outside the workspace (agent files and a policy's deny "
                         "entries still hold), and log each call the enforced run would "
                         "refuse (\"enforced\": false) for `ztsa policy suggest`; not under "
                         "--profile untrusted")
    ex.add_argument("--keep-cap", dest="keep_caps", action="append", default=[],
                    metavar="NAME", help="keep this capability when started by root "
                                         "(default: none)")
    ex.add_argument("--pass-fd", dest="pass_fds", action="append", default=[], type=int,
                    metavar="N", help="let file descriptor N reach CMD (besides 0, 1 and 2)")
    ex.add_argument("--env", dest="env_specs", action="append", default=[],
                    metavar="NAME[=VALUE]",
                    help="pass NAME through, or set it to VALUE for this run; CMD otherwise "
                         "gets only PATH, LANG, LC_*, TERM, TZ, USER and a private HOME and "
                         "TMPDIR")
    ex.add_argument("--agent", dest="agents", action="append", default=[],
                    choices=AGENT_NAMES, metavar="NAME",
                    help="run a whole coding agent (claude, codex): allow its API hosts, "
                         "show its state directory (settings, hooks and login read-only; "
                         "transcripts and history written by the agent's own process "
                         "alone (CMD: `-- claude`), every other process of the tree "
                         "refused, and moved aside after the run, `ztsa quarantine "
                         "--workspace ~/.claude` restores; shell snapshots, session files "
                         "and caches the run's own); docs/agents.md")
    ex.add_argument("--secret", dest="secrets", action="append", default=[],
                    metavar="NAME[=SOURCE]",
                    help="give CMD the credential NAME in its environment, from your $NAME,"
                         " or SOURCE: env:OTHER, file:PATH or cmd:COMMAND; never logged, "
                         "never written in the sandbox; repeatable")
    ex.add_argument("--home", metavar="PATH", type=_directory,
                    help="use PATH as HOME instead of a private empty directory")
    ex.add_argument("--keep-pth", action="store_true",
                    help="keep a .pth file that runs code (an `import` line), written by "
                         "the run into a workspace virtual environment's site-packages, "
                         "when a RECORD the run wrote lists it (an editable install's, "
                         "setuptools'); it is moved aside otherwise. ztsa cannot tell pip "
                         "from the tree, which can write RECORD files too: still reported")
    ex.add_argument("--keep-tmp", action="store_true",
                    help="keep the private HOME and TMPDIR after the run (later runs, "
                         "which remove what killed runs left, leave it alone)")
    ex.add_argument("--allow-write", action="append", default=[], metavar="PATH",
                    type=_directory, help="also let the tree write beneath PATH (it may "
                                          "write only in the workspace, its private HOME "
                                          "and TMPDIR otherwise); repeatable")
    ex.add_argument("--allow-read", action="append", default=[], metavar="PATH",
                    help="also show PATH, read-only, when it lies in your real home (the "
                         "tree sees only what it needs of it: the workspace, the "
                         "directories its PATH and environment name); repeatable")
    ex.add_argument("--max-procs", type=_max_procs, default=None, metavar="N",
                    help="at most N processes and threads in the tree (default 4096: no "
                         "build has so many, a fork bomb reaches it at once)")
    ex.add_argument("--max-memory", type=_size, default=None, metavar="SIZE",
                    help="at most SIZE of memory for the whole tree, where ztsa can give "
                         "it a cgroup of its own (default: three quarters of the machine's), "
                         "and of data in each of its processes (default 2G); 512M, 4G")
    ex.add_argument("--max-disk", type=_size, default=None, metavar="SIZE",
                    help="at most SIZE in the private HOME and TMPDIR, a tmpfs of the "
                         "tree's own (ENOSPC past it, nothing on the host's disk; its pages "
                         "count as the tree's memory); default 8G, none with --keep-tmp")
    ex.add_argument("--protect", action="append", default=[], metavar="PATH",
                    help="also keep PATH (relative to the workspace) read-only for the tree, "
                         "like the agent files (CLAUDE.md, .claude/, .git/hooks/, ...); "
                         "repeatable")
    ex.set_defaults(func=cmd_exec, command=[], parser=ex)

    rules = sub.add_parser("rules", help="list the rule catalogue", formatter_class=_Plain,
                           description="List the rule catalogue: ID, slug, category, severity, "
                                       "action per profile.")
    rules.add_argument("--profile", choices=PROFILES, default=None,
                       help="show only what this profile does")
    rules.add_argument("--format", dest="fmt", choices=("text", "json"), default="text")
    debug_option(rules)
    rules.set_defaults(func=cmd_rules, parser=rules)

    explain = sub.add_parser("explain", help="show a rule's documentation",
                             formatter_class=_Plain,
                             description="Show a rule's documentation: what it checks, why it "
                                         "matters, how to fix it.")
    explain.add_argument("rule_id", metavar="ID")
    debug_option(explain)

    doctor = sub.add_parser("doctor", help="which confinement controls this machine offers",
                            formatter_class=_Plain,
                            description="Which confinement controls this machine offers "
                                        "(Landlock, seccomp user notification, namespaces, "
                                        "pidfd_getfd), and so what each profile of `ztsa "
                                        "exec` does here; where AppArmor restricts user "
                                        "namespaces, the root commands that let ztsa's "
                                        "set-up (ztsa-ns) alone make them.")
    doctor.add_argument("--format", dest="fmt", choices=("text", "json"), default="text")
    doctor.add_argument("--apparmor-profile", action="store_true",
                        help="print the AppArmor profile that lets root's copy of ztsa-ns "
                             "(/usr/local/libexec/ztsa/ztsa-ns) alone make user namespaces, "
                             "where AppArmor restricts them (`ztsa doctor` prints the "
                             "commands that install both)")
    debug_option(doctor)
    doctor.set_defaults(func=cmd_doctor, parser=doctor)
    explain.set_defaults(func=cmd_explain, parser=explain)

    pol = sub.add_parser(
        "policy", help="show the merged policy files, check one, suggest one from an "
                   "audit log, or list the network presets (@npm, @pypi, ...)",
        formatter_class=_Raw,
        usage="ztsa policy show [--workspace DIR] [--profile P] [--format json]\n"
              "       ztsa policy check FILE\n"
              "       ztsa policy suggest AUDIT.jsonl [--run ID]\n"
              "       ztsa policy presets [--format json]",
        description="The policy tiers (docs/policy.md): enterprise /etc/ztsa/policy.toml "
                    "($ZTSA_SYSTEM_POLICY),\nuser ~/.config/ztsa/policy.toml, workspace "
                    ".ztsa.toml or [tool.ztsa] in pyproject.toml.\n`show` prints every "
                    "entry with its file and line; `check` validates one file\n(exit 2 "
                    "naming the file, line and key of what is wrong); `suggest` turns an\n"
                    "audit log's denials into the policy that would have allowed them;\n"
                    "`presets` lists the network presets, the hosts (port 443) that "
                    "--allow-net @NAME\nand \"@NAME\" in net.allow stand for.")
    pol.add_argument("action", choices=("show", "check", "suggest", "presets"))
    pol.add_argument("file", nargs="?", metavar="FILE")
    pol.add_argument("--run", metavar="ID", help="suggest: the run of the audit log to read "
                                                 "(when it holds several)")
    pol.add_argument("--workspace", default=".", type=_directory)
    pol.add_argument("--profile", choices=PROFILES, default=None,
                     help="the profile to judge the workspace tier under (untrusted: only "
                          "what tightens counts)")
    pol.add_argument("--format", dest="fmt", choices=("text", "json"), default="text")
    debug_option(pol)
    pol.set_defaults(func=cmd_policy, parser=pol)

    hook = sub.add_parser(
        "hook", help="run an agent's shell commands under ztsa exec (claude: a shell "
                     "prefix and a guard; gemini: a rewriting hook); --install writes it "
                     "into the agent's settings",
        formatter_class=_Raw,
        usage="ztsa hook claude|gemini --install [--scope SCOPE] [--dry-run]\n"
              "                               [--launcher PATH] [--budget SECONDS]\n"
              "                               [EXEC OPTIONS...]\n"
              "       ztsa hook claude|gemini --uninstall [--scope SCOPE] [--dry-run]\n"
              "       ztsa hook claude --prefix WRAPPER --digest SHA256   (the guard)\n"
              "       ztsa hook gemini [EXEC OPTIONS...]                  (the hook)",
        description="Claude Code: --install writes a wrapper (~/.config/ztsa/claude-shell-"
                    "SCOPE...) that runs\n`ztsa exec [EXEC OPTIONS] -- bash -c STRING` in "
                    "the current directory, and names it\nCLAUDE_CODE_SHELL_PREFIX in the "
                    "settings' `env`: Claude Code runs each Bash command\n(and each "
                    "shell-form hook and stdio MCP server) through it, after its permission\n"
                    "rules have judged the command the model wrote. A PreToolUse entry in "
                    "exec form, the\nguard, denies a Bash call when another settings file "
                    "overrides the prefix, the\nwrapper changed, or the project's settings "
                    "`env` sets a variable that runs code\nbefore the wrapper (SHELL, PATH, "
                    "BASH_ENV, LD_*, ...); it denies every\ntool's call under the project's "
                    "bypassPermissions, and otherwise says nothing.\n\n"
                    "Gemini CLI: a BeforeTool hook that reads the event (JSON) on stdin and "
                    "answers with\nthe run_shell_command call rewritten to `NAME exec "
                    "--workspace PROJECT [EXEC OPTIONS]\n-- bash -c CMD`, NAME a program "
                    "that runs ztsa, of this command's own\n(~/.cache/ztsa/gemini/SHA256): "
                    "Gemini CLI's approval of a call covers that command\nalone. Other "
                    "tools pass unchanged; an unreadable event blocks the call.\n\n"
                    "Neither ever answers allow. --install writes the agent's settings "
                    "(--scope user, the\ndefault: ~/.claude/settings.json, "
                    "~/.gemini/settings.json; project: .claude/settings.json,\n"
                    ".gemini/settings.json; claude only: local, .claude/settings.local.json, "
                    "and managed,\n/etc/claude-code/managed-settings.json, which no project "
                    "overrides) and prints the\nchange as a diff (--dry-run: only prints "
                    "it). Each entry names this `ztsa` by its\nabsolute path (or --launcher "
                    "PATH), bounds it with `timeout` (--budget, default 30 s)\nand blocks "
                    "the call (exit 2) whenever it does not answer. --uninstall removes "
                    "it.\nSee docs/agents.md.")
    hook.add_argument("agent", metavar="AGENT", help="claude or gemini")
    hook.add_argument("options", nargs=argparse.REMAINDER, metavar="EXEC OPTIONS",
                      help="options for each `ztsa exec` (e.g. --profile dependency)")
    hook.set_defaults(func=cmd_hook, parser=hook)

    quar = sub.add_parser(
        "quarantine", help="list what ztsa exec moved aside into .ztsa-quarantine/, or "
                           "restore it",
        formatter_class=_Raw,
        usage="ztsa quarantine list [--workspace DIR] [--format text|json]\n"
              "       ztsa quarantine restore [--workspace DIR] [--force] RUN PATH...\n"
              "       ztsa quarantine restore [--workspace DIR] [--force] RUN --all",
        description="What `ztsa exec` moved aside after its runs, kept in the workspace's\n"
                    ".ztsa-quarantine/RUN/ (docs/git-control.md). `list` shows every run's "
                    "entries,\nnewest first; `restore` moves a file back to its path "
                    "when that path is\nabsent (never overwriting), without execute bits. "
                    "A config ztsa gave its\nold text back is replaced by the tree's "
                    "version only with --force.\nAn agent's state directory holds its "
                    "own (--workspace ~/.claude: what a run\nunder --agent wrote in its "
                    "kept entries; docs/agents.md).\nExit status: 0 done; 1 something could "
                    "not be listed or restored; 2 usage.")
    debug_option(quar)
    qsub = quar.add_subparsers(dest="action", metavar="ACTION", required=True)
    qlist = qsub.add_parser("list", formatter_class=_Plain,
                            help="every run's entries, newest first",
                            description="Every run's entries in the workspace's "
                                        ".ztsa-quarantine/, newest first.")
    qlist.add_argument("--workspace", default=".", type=_directory, metavar="DIR",
                       help="the workspace (default: the current directory)")
    qlist.add_argument("--format", dest="fmt", choices=("text", "json"), default="text")
    debug_option(qlist)
    qlist.set_defaults(func=cmd_quarantine_list, parser=qlist)
    qrest = qsub.add_parser(
        "restore", formatter_class=_Plain, help="move files of a run back",
        usage="ztsa quarantine restore [--workspace DIR] [--force] RUN (PATH... | --all)",
        description="Move the files PATH (as `ztsa quarantine list` names them) of run RUN "
                    "back where they were, only where nothing is now; their execute bits "
                    "stay off (chmod +x what you mean to run).")
    qrest.add_argument("run", metavar="RUN")
    qrest.add_argument("paths", nargs="*", metavar="PATH")
    qrest.add_argument("--all", action="store_true",
                       help="every file of the run still in the quarantine")
    qrest.add_argument("--force", action="store_true",
                       help="also replace a config that ztsa gave its old text back (or "
                            "its safe keys) with the tree's version")
    qrest.add_argument("--workspace", default=".", type=_directory, metavar="DIR",
                       help="the workspace (default: the current directory)")
    debug_option(qrest)
    qrest.set_defaults(func=cmd_quarantine_restore, parser=qrest)
    return parser


# -- commands --------------------------------------------------------------------------------
def run_gate(args: argparse.Namespace, path: str, stream: Any,
             only_on_failure: bool = False, extra: tuple[Any, ...] = (),
             confinement: Any = None) -> bool:
    """Audit PATH, write the report (to --output or stream), return whether it passed.
    confinement: ztsa exec's (handled.Confinement): what it removes is handled before
    the verdict. Without one (ztsa check), a text report still says what ztsa exec would
    handle here, from the kernel's probe; nothing is started."""
    judge = None
    if confinement is not None:
        from ztsa.sandbox import handled

        def judge(results: tuple[Any, ...]) -> tuple[Any, ...]:
            return handled.judge(results, confinement)
    from ztsa.context import Context
    from ztsa.engine import run
    from ztsa.host import Host
    from ztsa.model import Nature, Profile

    ctx = Context(host=Host(), workspace=path, profile=Profile(args.profile),
                  options={"probe_network": args.probe_network, "lookup": args.lookup,
                           "metadata_endpoints": args.endpoints,
                           "exclude": list(args.excludes),
                           "allow_registry": list(args.registries),
                           "no_cache": args.no_cache})
    # a report shown only on failure needs the warnings only then (a blocking result
    # of the caller's, added below, fails the gate whatever the rules say)
    from ztsa import tiers

    try:  # the policy files' waivers (ztsa.waivers): refused ones stop here
        waived = tiers.waivers(tiers.load(os.path.abspath(path), args.profile))
    except tiers.PolicyFileError as exc:
        raise UsageError(str(exc)) from None

    def verdict(results: tuple[Any, ...]) -> tuple[Any, ...]:
        if waived:
            from ztsa import waivers

            results = waivers.apply(results, waived, path)
        return judge(results) if judge is not None else results

    # a waived or handled blocking rule still runs in exec's first phase: the warnings
    # run only when the first phase blocks once they are applied
    # a gate that passes shows the person its hygiene warnings (no lockfile, no hashes):
    # their rules run with the blocking ones
    report = run(ctx, warnings_if_blocked=only_on_failure
                 and not any(r.blocks for r in extra), verdict=verdict,
                 shown=frozenset({Nature.HYGIENE}) if only_on_failure else frozenset())
    report = report._replace(results=verdict(report.results))
    if extra:
        report = report._replace(results=report.results + extra)
    if only_on_failure and report.passed:
        if args.fmt == "text" and not getattr(args, "quiet", False):
            from ztsa.output.text import render_warnings

            stream.write(render_warnings(report, color=_use_color(stream, False)))
            stream.flush()
        return True
    from ztsa.output import Format, render

    machine = None
    if args.fmt == "text":
        machine = _machine_view(report, path, confinement, args.profile == "untrusted")
    text = render(report, Format(args.fmt), color=_use_color(stream, args.output is not None),
                  machine=machine)
    if args.output:
        try:
            with _open_own_file(args.output) as f:
                f.write(text)
        except OSError as exc:
            raise UsageError(f"cannot write {args.output}: {exc.strerror}") from exc
    else:
        stream.write(text)
        stream.flush()
    return report.passed


def _machine_view(report: Any, path: str, confinement: Any, strict: bool) -> Any:
    """What ztsa exec does (confinement: this run's) or would do with its defaults here
    (from the probe ztsa doctor uses) with the findings about the machine; None when the
    kernel cannot be probed, and the report then claims nothing for ztsa exec."""
    from ztsa.sandbox import handled

    running = confinement is not None
    if confinement is None:
        try:
            from ztsa.sandbox import offer
            from ztsa.sandbox.controls import missing_controls

            confinement = handled.default(missing_controls(offer.probe()))
        except (OSError, ImportError):
            return None
    return handled.view(report.results, confinement, path, running=running, strict=strict)


def _ignored(t: Any) -> list[tuple[str, str, str]]:
    """(where, what, why) of each ignored policy entry: a preset's hosts once, as the
    preset (@NAME)."""
    return list(dict.fromkeys((e.where, e.preset or repr(e.value), e.ignored)
                              for e in t.ignored()))


def cmd_check(args: argparse.Namespace) -> int:
    from ztsa import tiers

    try:
        policy_tiers = tiers.load(os.path.abspath(args.path), args.profile)
        tiers.check_profile(policy_tiers, args.profile)
    except tiers.PolicyFileError as exc:
        raise UsageError(str(exc)) from None
    for where, _, why in _ignored(policy_tiers):
        print(f"ztsa: ignored {where}: {why}", file=sys.stderr)
    return EXIT_PASS if run_gate(args, args.path, sys.stdout) else EXIT_GATE


def cmd_policy(args: argparse.Namespace) -> int:
    import json

    from ztsa import tiers

    if args.action == "presets":
        from ztsa.sandbox import presets

        if args.file:
            raise UsageError("policy presets takes no FILE")
        if args.fmt == "json":
            print(json.dumps(presets.render_json(), indent=2))
        else:
            sys.stdout.write(presets.render_text())
        return EXIT_PASS
    if args.action == "suggest":
        from ztsa.suggest import SuggestError, suggest

        if not args.file:
            raise UsageError("policy suggest needs an audit log: ztsa policy suggest "
                             "AUDIT.jsonl")
        try:
            sys.stdout.write(suggest(args.file, args.run))
        except SuggestError as exc:
            raise UsageError(str(exc)) from None
        return EXIT_PASS
    try:
        if args.action == "check":
            if not args.file:
                raise UsageError("policy check needs a FILE")
            in_pyproject = os.path.basename(args.file) == "pyproject.toml"
            found = tiers.parse(args.file, "workspace" if in_pyproject else "user",
                                in_pyproject, os.path.dirname(os.path.abspath(args.file)))
            n = sum(len(v) for v in found.values())
            print(f"{args.file}: valid, {n} entr{'y' if n == 1 else 'ies'}")
            return EXIT_PASS
        t = tiers.load(os.path.abspath(args.workspace), args.profile)
    except tiers.PolicyFileError as exc:
        raise UsageError(str(exc)) from None
    if args.fmt == "json":
        def plain(v: object) -> object:
            return {k: str(x) for k, x in v._asdict().items() if x} if isinstance(
                v, tiers.Waiver) else v

        doc = {"files": [{"tier": tier, "path": path} for tier, path in t.files],
               "entries": [{"section": sec, "key": key, "value": plain(e.value),
                            "tier": e.tier,
                            "where": e.where, **({"ignored": e.ignored} if e.ignored else {})}
                           for (sec, key), es in sorted(t.entries.items()) for e in es]}
        print(json.dumps(doc, indent=2))
    else:
        sys.stdout.write(tiers.show(t))
    return EXIT_PASS


def cmd_exec(args: argparse.Namespace) -> int:
    """Parse -> request, probe -> offer, the gate, then the run (plan.make inside it)."""
    from ztsa.sandbox import cgroup

    # first: the tree's cgroup, entered after the gate, then costs no wait
    cgroup.prewarm()
    from ztsa.sandbox import offer, plan, request, run
    try:
        req = request.from_args(args, dict(os.environ))
        decoder = request.decoder(req)
        host = offer.probe()
        policy, notes = run.policy(req, host)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    for line in [*req.notes, *notes]:
        print(line, file=sys.stderr)
    # the gate judges the environment CMD will run in: what the confinement removes
    # does not block (unless this host lacks its control; that lack is EXEC001, blocking
    # under untrusted). The report goes only with a failed gate, when CMD never starts:
    # a text report to stderr beside the messages, a JSON or SARIF one to stdout alone
    from ztsa.sandbox.controls import confinement_result, missing_controls

    missing = missing_controls(host)
    if not run_gate(args, args.workspace, sys.stderr if args.fmt == "text" else sys.stdout,
                    only_on_failure=True,
                    extra=(confinement_result(missing, req.strict),) if missing else (),
                    confinement=plan.confinement(req, host, tuple(policy.net))):
        print("ztsa: the gate failed; CMD was not started", file=sys.stderr)
        return EXIT_GATE
    try:  # appending: ztsa's file helper writes its own lines to the same file
        log = _open_own_file(req.audit_log, append=True) if req.audit_log else None
    except OSError as exc:
        raise UsageError(f"cannot write {req.audit_log}: {exc.strerror}") from None
    from ztsa.sandbox.secret import SecretError, load

    try:  # after the gate: a command that prints a secret runs only for a run
        secrets = load(list(req.secret_specs), dict(os.environ))
    except SecretError as exc:
        raise UsageError(str(exc)) from None
    return run.execute(req, host, policy, log, secrets, decoder)


def _port_number(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise argparse.ArgumentTypeError(f"{text!r}: a port is 1-65535")
    return int(text)


def cmd_rules(args: argparse.Namespace) -> int:
    import json

    from ztsa.model import Profile
    from ztsa.registry import load_rules

    rules = load_rules().values()
    profiles = [Profile(args.profile)] if args.profile else list(Profile)
    if args.fmt == "json":
        doc = [{"id": r.id, "slug": r.slug, "category": r.category.value, "title": r.title,
                "severity": r.severity.value,
                "nature": r.nature.value if r.nature else None,
                "actions": {p.value: r.action(p).value for p in profiles}} for r in rules]
        print(json.dumps(doc, indent=2))
        return EXIT_PASS
    head = "ID      SLUG                              CATEGORY SEVERITY " + " ".join(
        p.value.ljust(10) for p in profiles)
    print(head.rstrip())
    for r in rules:
        acts = " ".join(r.action(p).value.ljust(10) for p in profiles)
        print(f"{r.id:<7} {r.slug:<33} {r.category.value:<8} {r.severity.value:<8} "
              f"{acts}".rstrip())
    return EXIT_PASS


def cmd_doctor(args: argparse.Namespace) -> int:
    import json

    from ztsa import doctor

    if args.apparmor_profile:
        from ztsa.sandbox import apparmor

        print(apparmor.profile(), end="")
        return EXIT_PASS
    doc = doctor.probe()
    print(json.dumps(doc, indent=2) if args.fmt == "json" else doctor.render_text(doc),
          end="\n" if args.fmt == "json" else "")
    return EXIT_PASS


def cmd_quarantine_list(args: argparse.Namespace) -> int:
    from ztsa import quarantine

    found = quarantine.listing(args.workspace)
    sys.stdout.write(quarantine.render_json(found) if args.fmt == "json"
                     else quarantine.render_text(found))
    return 1 if found.error else EXIT_PASS


def cmd_quarantine_restore(args: argparse.Namespace) -> int:
    from ztsa import quarantine
    from ztsa.printable import printable

    if args.all == bool(args.paths):
        raise UsageError("quarantine restore takes RUN and PATH..., or RUN --all")
    try:
        outcomes = quarantine.restore(args.workspace, args.run,
                                      None if args.all else list(args.paths), args.force)
    except quarantine.QuarantineError as exc:
        print(f"ztsa: {printable(str(exc))}", file=sys.stderr)
        return 1
    done, failed = quarantine.render_outcomes(outcomes)
    if not outcomes:
        done = f"run {printable(args.run)}: nothing left in the quarantine to restore\n"
    sys.stdout.write(done)
    sys.stdout.flush()
    sys.stderr.write(failed)
    return 1 if failed else EXIT_PASS


def cmd_hook(args: argparse.Namespace) -> int:
    from ztsa import hook

    return hook.main(args.agent, list(args.options))


def cmd_explain(args: argparse.Namespace) -> int:
    from ztsa.registry import load_rules

    if args.rule_id.upper() in ("EXEC001", "CONFINEMENT-INCOMPLETE"):
        from ztsa.sandbox.controls import EXPLAIN_EXEC001

        print(EXPLAIN_EXEC001)
        return EXIT_PASS
    rules = load_rules()
    rule = rules.get(args.rule_id.upper())
    if rule is None:
        rule = {r.slug: r for r in rules.values()}.get(args.rule_id)
    if rule is None:
        raise UsageError(f"no rule {args.rule_id!r}; `ztsa rules` lists them")
    acts = ", ".join(f"{p.value}: {a.value}" for p, a in rule.actions.items())
    print(f"{rule.id} {rule.slug}: {rule.title}")
    print(f"category {rule.category.value}, severity {rule.severity.value}; {acts}")
    print()
    print(rule.doc.split("\n", 1)[-1].strip())
    return EXIT_PASS


# -- entry point -----------------------------------------------------------------------------
def entry() -> None:
    """The console script: run, flush, and leave without the interpreter's teardown
    (its module cleanup would be paid before every agent command). Every file ztsa
    writes is closed by then; nothing registers atexit work."""
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:
        code = code or EXIT_INTERNAL
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    command: list[str] = []
    if "--" in argv:  # everything after the first -- is CMD, untouched
        cut = argv.index("--")
        argv, command = argv[:cut], argv[cut + 1 :]
    parser = build_parser()
    try:
        args, unknown = parser.parse_known_args(argv)
        if unknown:  # reported with the command's own usage, not the top level's
            hint = " (CMD goes after --)" if args.command_name == "exec" and any(
                not a.startswith("-") for a in unknown) else ""
            args.parser.error(f"unrecognized arguments: {' '.join(unknown)}{hint}")
    except SystemExit as exc:  # --help, --version (0) and usage errors (2)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if command:
        if args.command_name != "exec":
            print("ztsa: error: `--` and a command only go with `ztsa exec`", file=sys.stderr)
            return EXIT_USAGE
        args.command = command
    try:
        return int(args.func(args))
    except UsageError as exc:
        print(f"ztsa: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("ztsa: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_INTERNAL
    except Exception as exc:
        if debug:
            import traceback

            traceback.print_exc()
        print(f"ztsa: internal error: {type(exc).__name__}: {exc}"
              " (run with --debug for a traceback)", file=sys.stderr)
        return EXIT_INTERNAL
