"""The catalogue's settings (ztsa.surfaces.SETTINGS) judged on a workspace: the rules
AGT010-AGT012 call check() with their ID.

For each setting: its files (globs over the workspace walk, or each plugin directory of
an in-repo Claude Code marketplace), read through ctx.ws_* (size-capped, no symlink
followed out) and parsed by its format; each value its key paths select judged by its
safe predicates (SAFE, by name, some with an argument after a `:`). A value none of them
accepts is a finding; a file that does not parse makes the rule unknown. Nothing here
knows an agent: a new setting is a record in ztsa/surfaces.py and two fixtures."""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.host import ProbeError
from ztsa.lazy import LazyRe
from ztsa.model import Outcome
from ztsa.parsing import ParseError, line_of
from ztsa.surfaces import SETTINGS, Setting, rule_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

MAX_BYTES = 1 << 20  # a settings file larger than this is not a settings file: unknown
MAX_FILES = 200  # files one setting reads (a glob over a directory of thousands)

# programs that run whatever their arguments or the repository say
RUNNERS = frozenset((
    "sh", "bash", "zsh", "dash", "fish", "ksh", "csh", "tcsh", "pwsh", "powershell", "cmd",
    "python", "python2", "python3", "node", "nodejs", "deno", "bun", "ruby", "perl", "php",
    "lua", "osascript", "tclsh", "npx", "pnpx", "bunx", "uvx", "pipx", "env", "xargs",
    "eval", "exec", "sudo", "doas", "nohup", "nice", "timeout", "setsid", "command",
    "curl", "wget", "nc", "ncat", "socat", "docker", "podman", "kubectl", "ssh", "make",
    "just", "task", "npm", "pnpm", "yarn", "uv", "pip", "pip3", "go", "cargo", "gradle",
    "mvn", "find", "awk", "gawk", "sed", "source", ".",
))
# formatters and linters: a hook that runs one of these by name changes source files the
# person reviews, and runs nothing of the repository's choosing
FORMATTERS = frozenset((
    "prettier", "black", "ruff", "isort", "gofmt", "goimports", "rustfmt", "clang-format",
    "shfmt", "eslint", "biome", "dprint", "stylua", "yapf", "autopep8", "taplo",
    "markdownlint", "mdformat", "ktlint", "swiftformat", "swift-format", "rubocop",
    "standardrb", "mix", "terraform", "tofu", "buf", "jq", "yamlfmt", "zig",
))
QUIET = frozenset(("echo", "printf", "true", ":"))
SHELL_SYNTAX = LazyRe(r"[|;&<>`\n]|\$\(")
ENV_EXPANSION = LazyRe(r"\$\{?[A-Za-z_][A-Za-z0-9_:]*\}?|\{env:")
LOOPBACK = frozenset(("localhost", "127.0.0.1", "::1", "[::1]", "0.0.0.0"))
# what chooses the shell a command starts in, or what that shell (or the loader under
# it) runs or loads before the command: a shell prefix (`ztsa hook claude`'s wrapper)
# and Claude Code's own shell snapshot run these unconfined (measured with 2.1.197)
_SHELL_LOADING = (r"PATH|SHELL|CLAUDE_CODE_SHELL|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS4|"
                  r"PROMPT_COMMAND|ZDOTDIR|GCONV_PATH|LD_\w*|BASH_FUNC_.*")
# where ztsa finds its policy and state (the user policy under XDG_CONFIG_HOME or
# ~/.config, ZTSA_SYSTEM_POLICY, the cache), and what of the hidden home it shows a
# confined command (the directory CLAUDE_PROJECT_DIR names)
_CONFINEMENT = r"HOME|XDG_\w*|ZTSA_\w*|CLAUDE_PROJECT_DIR"
# an environment variable that loads code into, or chooses a program for, what runs
CODE_LOADING = LazyRe(
    rf"^({_SHELL_LOADING}|NODE_OPTIONS|DYLD_INSERT_LIBRARIES|"
    r"PYTHONPATH|PYTHONSTARTUP|PYTHONHOME|PERL5OPT|"
    r"PERL5LIB|RUBYOPT|RUBYLIB|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|GIT_SSH_COMMAND|GIT_SSH|"
    r"GIT_EXEC_PATH|GIT_CONFIG_GLOBAL|GIT_CONFIG_PARAMETERS|EDITOR|VISUAL|PAGER|"
    r"GIT_PAGER|GIT_EDITOR|CLAUDE_CODE_SHELL_PREFIX)$", re.S)
# an environment variable whose effect lands before any shell prefix or sandbox, in
# the program that starts a command (Claude Code's shell, `ztsa hook claude`'s wrapper,
# which Claude Code starts with a project's settings `env` and an MCP server's `env`),
# or in what ztsa reads and shows: _SHELL_LOADING and _CONFINEMENT (the guard of `ztsa
# hook claude` denies a Bash call on these)
PREFIX_ESCAPING = LazyRe(rf"^({_SHELL_LOADING}|{_CONFINEMENT})$", re.S)
# what chooses the compiler, linker or a runner of a build, or loads code into it (Cargo's
# `[env]`), beside CODE_LOADING
BUILD_VARIABLES = LazyRe(
    r"^(RUSTC|RUSTC_WRAPPER|RUSTC_WORKSPACE_WRAPPER|RUSTDOC|RUSTFLAGS|"
    r"CARGO_ENCODED_RUSTFLAGS|RUSTDOCFLAGS|CARGO_BUILD_RUSTC_WRAPPER|CC|CXX|AR|LD|LINKER|"
    r"PYO3_PYTHON|PYTHON_SYS_EXECUTABLE|PROTOC|CMAKE|PKG_CONFIG|\w+_RUNNER|\w+_LINKER)$")
# node flags that change warnings, limits, diagnostics or defaults and load nothing;
# any other (`--require`, `--import`, `--loader`, `--inspect`, `--openssl-config`,
# `--env-file`, one this list does not know) loads or opens something
INERT_NODE_FLAGS = LazyRe(
    r"^--(?:no-warnings|no-deprecation|trace-warnings|trace-deprecation|throw-deprecation|"
    r"pending-deprecation|trace-uncaught|enable-source-maps|no-experimental-fetch|"
    r"experimental-vm-modules|openssl-legacy-provider|use-openssl-ca|use-bundled-ca|"
    r"no-network-family-autoselection|report-on-fatalerror|"
    r"disable-warning=[\w-]+|max-old-space-size=\d+|max-semi-space-size=\d+|"
    r"stack-size=\d+|max-http-header-size=\d+|unhandled-rejections=[\w-]+|"
    r"dns-result-order=[\w-]+|heapsnapshot-near-heap-limit=\d+)$")
# a mount source that hands the container the person's home, credentials or the host
HOST_SECRET = LazyRe(
    r"(?:^|[=\s,:])(?:~|\$\{?HOME\}?|\$\{localEnv:(?:HOME|USERPROFILE)\}|/home/[^/\s,]+|"
    r"/root|/Users/[^/\s,]+)(?:[/\s,:]|$)"
    r"|(?:docker|podman|containerd|crio|buildkitd)\.sock\b"
    r"|(?:^|[=\s])/(?:etc|proc|sys|dev|var/run|run|boot)?(?=$|[\s,:])")
# what a plugin script may not do: start processes, reach the network, read credentials
SCRIPT_HAZARDS = LazyRe(
    r"child_process|\b(?:spawn|spawnSync|execSync|execFile|execFileSync|fork)\s*\("
    r"|\bexec\s*\(|Bun\.spawn|Bun\.\$|\$`|Deno\.(?:Command|run)|\bfetch\s*\(|"
    r"XMLHttpRequest|WebSocket|\bnet\.connect|https?\.request|"
    r"\.ssh\b|\.aws\b|\.npmrc|\.netrc|id_rsa|id_ed25519|credentials|\bprocess\.env\b|"
    r"\beval\s*\(|new\s+Function\s*\(|\bimport\s*\(\s*[^'\"]")
# an import of an instruction file (`@docs/x.md`, `@~/.aws/credentials`); `@/` only into
# the machine's own directories (`@/components` is a bundler's alias, named in prose)
IMPORT = LazyRe(r"(?:^|[\s(])@((?:~|\$HOME|\$\{HOME\})(?:/\S*)?|/(?:home|root|etc|Users|var|"
                r"proc|run|tmp|opt|usr|private)(?:/\S*)?|\.\.?/\S*)")
GO_RELEASE = LazyRe(r"^go1\.\d+(?:\.\d+)?(?:(?:rc|beta)\d+)?$")
PACKAGE_SPEC = LazyRe(r"^(?:npm|pnpm|yarn|bun)@\d+\.\d+\.\d+[\w.-]*(?:\+sha(?:1|224|256|384"
                      r"|512)\.[0-9a-fA-F]+)?$")
# variables a front-end build bundles into the pages it serves (Vite, Next.js, CRA, ...)
PUBLIC_PREFIXES = ("VITE_", "NEXT_PUBLIC_", "REACT_APP_", "EXPO_PUBLIC_", "NUXT_PUBLIC_",
                   "PUBLIC_", "GATSBY_", "VUE_APP_", "STORYBOOK_")
# what a build hook may not do: run commands, reach the network, decode and run a payload
BUILD_HAZARDS = LazyRe(
    r"\b(?:subprocess|os\.system|os\.popen|os\.exec\w*|os\.spawn\w*|pty\.spawn|"
    r"urllib|urlopen|requests|httpx|http\.client|socket|ftplib|base64|marshal|ctypes|"
    r"exec|eval|compile|__import__)\b")
PLACEHOLDER = LazyRe(r"^(?:|changeme|change-me|example|dummy|test|secret|password|xxx+|"
                     r"your[-_a-z]*|<[^>]*>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\*+)$", re.I)


# -- Claude Code's permission rules: what a pre-approved command runs --------------------
# a pre-approved command that runs code the repository (a Makefile, package.json's
# scripts, build.rs, conftest.py, a script the pull request rewrites) or its own
# arguments choose: approving it approves anything
RUNS_ANYTHING = LazyRe(
    r"^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*("
    r"(bash|sh|zsh|dash|fish|ksh|python\d*(\.\d+)?|node|deno|bun|bunx|ruby|perl|php|"
    r"docker|podman|kubectl|sudo|env|xargs|eval|exec|find|make|gmake|just|task|rake|"
    r"ninja|bazel|gradle|mvn|npx|pnpx|pnpm|yarn|uvx|tox|nox|pytest|py\.test|"
    r"\./\S+|\.\./\S+|scripts/\S+)(\s|$)"
    r"|cargo\s+(run|test|build|check|bench|clippy|insta|nextest|doc|install|xtask)\b"
    r"|npm\s+(run|run-script|test|start|exec|x|install|i|ci|rebuild)\b"
    r"|uv\s+(run|tool\s+run|sync|pip\s+install)\b"
    r"|(poetry|pdm|hatch|rye)\s+run\b|go\s+(run|test|generate)\b"
    r"|dotnet\s+(run|test)\b|pip\d*\s+install\b"
    r"|python\d*(\.\d+)?\s+-m\s+\S+)")
# linters, formatters and test runners, by name or as `python -m NAME`: with any
# arguments they read the repository and run its tests, as every test run does; none
# takes a command to run (`Bash(python -m pytest tests/*)`)
CHECKERS = LazyRe(r"^(?:python\d*(?:\.\d+)?\s+-m\s+)?(?:pytest|ruff|mypy|black|isort|"
                  r"flake8|pylint|pyright|ty)(?:\s+(?:check|format))?(?:\s+[\w./-]+)*/?\s*$")
# a wildcard over one of these runs anything: their subcommands run the repository's
# scripts (npm run, uv run, cargo run, go run, pip install of a path, git aliases, gh)
WHOLE_TOOLS = frozenset(("npm", "uv", "cargo", "go", "pip", "pip3", "git", "gh", "poetry",
                         "pdm", "hatch", "rye", "dotnet", "deno", "mise", "asdf"))
UNSCOPED_EDITS = frozenset(("Edit", "Edit(*)", "Edit(**)", "Edit(/**)", "Edit(./**)",
                            "Write", "Write(*)", "Write(**)", "Write(/**)", "Write(./**)",
                            "MultiEdit", "MultiEdit(*)", "MultiEdit(**)", "NotebookEdit"))
# environment names that send an agent's traffic elsewhere (beside CODE_LOADING)
REDIRECTING = LazyRe(
    r"^([A-Z0-9_]*_BASE_URL|[A-Za-z_]*_PROXY|NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|"
    r"REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE|CLAUDE_CODE_USE_BEDROCK|CLAUDE_CODE_USE_VERTEX)$")


class Advice(str):
    """A predicate's reason that is advice only: listed, never gating on its own."""


class Command(str):
    """A predicate's answer that a value is a command line to judge by what it runs
    (ztsa.follow.judge): a finding when it runs something fetched, advice otherwise."""


class Hit:
    """A value a key path selected: its path, its key and the objects around it."""

    __slots__ = ("key", "parents", "path", "rel", "value")

    def __init__(self, path: str, key: str, value: Any, parents: tuple[Any, ...],
                 rel: str = "") -> None:
        self.path, self.key, self.value, self.parents = path, key, value, parents
        self.rel = rel  # the file it was read from


def select(doc: Any, keypath: str) -> Iterator[Hit]:
    """Every value a key path selects (`a/*/b`: `*` any key or element, fnmatch within a
    level); none where a level is missing or of another kind."""
    parts = [p for p in keypath.split("/") if p] if keypath else []

    def walk(node: Any, i: int, shown: str, key: str,
             parents: tuple[Any, ...]) -> Iterator[Hit]:
        if i == len(parts):
            if node is not None:
                yield Hit(shown, key, node, parents)
            return
        part = parts[i]
        if isinstance(node, dict):
            if any(c in part for c in "*?["):
                items = [(k, v) for k, v in node.items()
                         if isinstance(k, str) and fnmatch.fnmatchcase(k, part)]
            else:
                items = [(part, node[part])] if part in node else []
            for k, v in items:
                yield from walk(v, i + 1, f"{shown}/{k}" if shown else k, k,
                                (*parents, node))
        elif isinstance(node, list) and part == "*":
            for n, v in enumerate(node):
                yield from walk(v, i + 1, f"{shown}[{n}]", key, (*parents, node))

    yield from walk(doc, 0, "", "", ())


# -- formats ----------------------------------------------------------------------------
def _pairs(text: str, separators: str, export: bool) -> dict[str, str]:
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#!;":
            continue
        if export and line.startswith("export "):
            line = line[7:].lstrip()
        cut = min((i for i in (line.find(c) for c in separators) if i > 0), default=-1)
        if cut < 0:
            continue
        key, value = line[:cut].strip(), line[cut + 1 :].strip()
        if export:
            if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            elif " #" in value:
                value = value.split(" #", 1)[0].rstrip()
        else:  # java.util.Properties: a backslash escapes the next character
            value = re.sub(r"\\(.)", r"\1", value)
        out[key] = value
    return out


def _frontmatter(text: str, name: str) -> Any:
    if not text.startswith("---"):
        return {}
    end = re.search(r"^(?:---|\.\.\.)\s*$", text[3:], re.M)
    if end is None:
        raise ParseError(name, "front matter is not closed by a `---` line")
    from ztsa.manifests.common import load_yaml

    block = text[3 : 3 + end.start()]
    try:
        doc = load_yaml(block, name)
    except ParseError:
        # agents read front matter leniently (an unquoted `description: a: b`): what they
        # would read, the top-level `key: value` lines, as text; but a key whose value is
        # a nested block (`hooks:` then indented lines) cannot be read so: undecided
        nested = re.search(r"^([A-Za-z\"'][\w\"'-]*):[ \t]*(?:#.*)?\n[ \t]+\S", block, re.M)
        if nested:
            raise
        return {m.group(1): m.group(2).strip() for m in
                re.finditer(r"^([A-Za-z][\w-]*):[ \t]*(.*)$", block, re.M)}
    return doc if doc is not None else {}


def _gomod(text: str, name: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for raw in text.splitlines():
        words = raw.split("//", 1)[0].split()
        if len(words) == 2 and words[0] in ("go", "toolchain"):
            out[words[0]] = words[1]
    return out


def _starlark(text: str, name: str) -> list[dict[str, Any]]:
    """Top-level calls (`prefix_rule(pattern=[...], decision="allow")`) as objects of their
    keyword arguments and `call`; Starlark's call syntax is Python's."""
    import ast

    try:
        tree = ast.parse(text, name)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ParseError(name, f"not valid Starlark: {exc}") from exc
    out: list[dict[str, Any]] = []
    for stmt in tree.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
            continue
        entry: dict[str, Any] = {"call": call.func.id}
        for kw in call.keywords:
            if kw.arg is None:
                continue
            try:
                entry[kw.arg] = ast.literal_eval(kw.value)
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                entry[kw.arg] = "<not a literal>"
        out.append(entry)
    return out


LEGACY_SYML = LazyRe(r"^(?:#.*\r?\n)*?#\s+yarn\s+lockfile\s+v1\r?\n")
SYML_LINE = LazyRe(r'^"?([A-Za-z0-9_.@/-]+)"?(?:\s*:\s*|\s+)"?(.*?)"?\s*$')


def legacy_syml(text: str) -> dict[str, str]:
    """The top-level `key value` / `key "value"` lines of Yarn's old configuration syntax
    (classic `.yarnrc`, a `.yarnrc.yml` headed `# yarn lockfile v1`, which YAML reads as
    one string)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if not line or line[0] in " \t#":
            continue
        m = SYML_LINE.match(line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def parse(fmt: str, text: str, name: str) -> Any:
    from ztsa.parsing import load_jsonc, load_toml

    if fmt == "json":
        # strict JSON by the C decoder first; comments and trailing commas (VS Code's
        # files) by the slower reader; every settings file is an object
        import json

        try:
            doc = json.loads(text)
        except (ValueError, RecursionError):
            doc = load_jsonc(text, name)
        if not isinstance(doc, dict):
            raise ParseError(name, f"top level is {type(doc).__name__}, not an object")
        return doc
    if fmt == "json|yaml":
        return parse("json" if name.endswith(".json") else "yaml", text, name)
    if fmt == "toml":
        return load_toml(text, name)
    if fmt == "yaml":
        from ztsa.manifests.common import load_yaml

        return load_yaml(text, name)
    if fmt == "frontmatter":
        return _frontmatter(text, name)
    if fmt == "dotenv":
        return _pairs(text, "=", export=True)
    if fmt == "properties":
        return _pairs(text, "=:", export=False)
    if fmt == "ini":  # npm's .npmrc: `key = value` lines, no sections
        from ztsa.parsing import parse_ini_pairs

        return {k: v for k, v, _line in parse_ini_pairs(text)}
    if fmt == "yarnrc":  # .yarnrc.yml, read by Yarn's old parser when headed so
        if LEGACY_SYML.match(text):
            return legacy_syml(text)
        from ztsa.manifests.common import load_yaml

        return load_yaml(text, name)
    if fmt == "syml":  # Yarn 1's .yarnrc
        return legacy_syml(text)
    if fmt == "words":
        return {w[0]: " ".join(w[1:]) for w in (ln.split("#", 1)[0].split()
                                                 for ln in text.splitlines()) if w}
    if fmt == "gomod":
        return _gomod(text, name)
    if fmt == "starlark":
        return _starlark(text, name)
    if fmt == "text":
        return text
    raise ValueError(f"unknown format {fmt!r}")


# -- safe predicates: (argument, hit, ctx) -> None when safe, else why not ---------------
def _words(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, str):
        import shlex

        try:
            return shlex.split(value)
        except ValueError:
            return value.split()
    return [str(value)]


def _program(value: Any) -> tuple[str, str]:
    """(the program a command runs, the command as one string)."""
    words = _words(value)
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        words = words[1:]
    joined = value if isinstance(value, str) else " ".join(words)
    return (words[0] if words else ""), joined


def _command_in(names: frozenset[str] | set[str], value: Any, what: str) -> str | None:
    if isinstance(value, dict):  # {"command": ...} or {"run": ...} forms
        value = value.get("command", value.get("run", value.get("script", "")))
    program, joined = _program(value)
    if SHELL_SYNTAX.search(joined):
        return "a shell command line (pipes, lists, substitutions)"
    if program not in names:
        return f"runs {program!r}, not {what}"
    return None


def _url(value: Any) -> tuple[str, str] | None:
    if not isinstance(value, str):
        return None
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(value.strip())
        return parts.scheme.lower(), (parts.hostname or "").lower()
    except ValueError:
        return None


def _loopback(host: str) -> bool:
    return host in LOOPBACK or host.startswith("127.") or host.endswith(".localhost")


def _in_repo(value: str) -> bool:
    v = value.strip()
    for prefix in ("${workspaceFolder}/", "${workspaceRoot}/", "./"):
        v = v.removeprefix(prefix)
    if v in ("${workspaceFolder}", "${workspaceRoot}", ".", ""):
        return True
    if v.startswith(("/", "~", "$", "%")) or re.match(r"^[A-Za-z]:[\\/]", v):
        return False
    return not posixpath.normpath(v).startswith("..")


def p_outside_workspace(arg: str, hit: Hit, ctx: Context) -> str | None:
    """Each directory (a string, a list, `{path = ...}`) is outside the workspace: an
    absolute path or the home's (`~/.cargo/bin`). A workspace directory first on PATH
    (jdx/mise's `_.path = ["./target/debug"]`, `{{config_root}}/bin`) makes what the
    agent builds or writes there run later as the person's own commands."""
    items = hit.value if isinstance(hit.value, list) else [hit.value]
    for item in items:
        d = item.get("path") if isinstance(item, dict) else item
        if not isinstance(d, str):
            return "not a path"
        d = d.strip()
        if "config_root" in d or "{{" in d or "$" in d or not d.startswith(("/", "~")):
            return f"puts the workspace's {d[:60]!r} on PATH"
    return None


def p_absent(arg: str, hit: Hit, ctx: Context) -> str | None:
    return "present"


def p_bool(want: bool) -> Callable[[str, Hit, Context], str | None]:
    def pred(arg: str, hit: Hit, ctx: Context) -> str | None:
        v = hit.value
        if isinstance(v, str):
            v = {"true": True, "1": True, "on": True, "yes": True, "false": False,
                 "0": False, "off": False, "no": False}.get(v.strip().lower(), v)
        return None if v is want else f"not {str(want).lower()}"
    return pred


def p_empty(arg: str, hit: Hit, ctx: Context) -> str | None:
    return None if not hit.value else "not empty"


def p_not(arg: str, hit: Hit, ctx: Context) -> str | None:
    return f"is {arg!r}" if str(hit.value).strip().lower() == arg.lower() else None


def p_not_in(arg: str, hit: Hit, ctx: Context) -> str | None:
    v = hit.value[0] if isinstance(hit.value, list) and hit.value else hit.value
    return f"is {v!r}" if isinstance(v, str) and v.strip() in arg.split(",") else None


def p_approves_nothing(arg: str, hit: Hit, ctx: Context) -> str | None:
    """False, an empty list, or a rule set whose every entry denies (`{"rm": false}`):
    `true`, a list of allowed commands, or an entry that is true or `{"approve": true}`
    approves without asking."""
    v = hit.value
    if isinstance(v, dict):
        on = [k for k, w in v.items()
              if w is True or (isinstance(w, dict) and w.get("approve") is True)]
        return f"approves {str(on[0])[:60]!r} without asking" if on else None
    if isinstance(v, list):
        return f"approves {str(v[0])[:60]!r} without asking" if v else None
    return "approves every use without asking" if v is True else None


def _with_args(hit: Hit) -> Any:
    """A `command` value with the `args` list beside it (a hook's exec form, which runs
    the program with those arguments, no shell), as one command line; else the value."""
    parent = hit.parents[-1] if hit.parents else None
    if hit.key == "command" and isinstance(parent, dict) and \
            isinstance(parent.get("args"), list):
        return command_line(hit) or hit.value
    return hit.value


def p_formatter(arg: str, hit: Hit, ctx: Context) -> str | None:
    return _command_in(FORMATTERS, _with_args(hit), "a known formatter or linter")


def p_quiet(arg: str, hit: Hit, ctx: Context) -> str | None:
    """A script, a table with its `script`, or a list of either (mise's hook forms)."""
    scripts = hit.value if isinstance(hit.value, list) else [_with_args(hit)]
    for script in scripts:
        why = _command_in(FORMATTERS | QUIET, script, "echo or a known formatter")
        if why is not None:
            return why
    return None


def p_program_in(arg: str, hit: Hit, ctx: Context) -> str | None:
    return _command_in(set(arg.split(",")), _with_args(hit), " or ".join(arg.split(",")))


def p_program_on_path(arg: str, hit: Hit, ctx: Context) -> str | None:
    program, joined = _program(hit.value)
    if SHELL_SYNTAX.search(joined):
        return "a shell command line (pipes, lists, substitutions)"
    if "/" in program or "\\" in program or "${" in program:
        return f"runs {program!r}, a file of the repository or a path, not a program " \
               "installed by name"
    if os.path.basename(program) in RUNNERS:
        return f"runs {program!r}, which runs whatever its arguments say"
    return None


def p_loopback_url(arg: str, hit: Hit, ctx: Context) -> str | None:
    url = _url(hit.value)
    if url is not None and _loopback(url[1]):
        return None
    return "sends to a host other than this machine"


def p_https_url(arg: str, hit: Hit, ctx: Context) -> str | None:
    url = _url(hit.value)
    if url is None:
        return "not a URL"
    if url[0] == "https" or (url[0] == "http" and _loopback(url[1])):
        return None
    return f"{url[0]}:// to {url[1] or 'an unnamed host'}: readable and changeable on the way"


def p_host(arg: str, hit: Hit, ctx: Context) -> str | None:
    url = _url(hit.value)
    if url is not None and url[0] == "https" and (url[1] == arg or url[1].endswith("." + arg)):
        return None
    return f"downloads from {url[1] if url else hit.value!r}, not https://{arg}"


def p_with(arg: str, hit: Hit, ctx: Context) -> str | None:
    parent = hit.parents[-1] if hit.parents else None
    if isinstance(parent, dict) and parent.get(arg):
        return None
    return f"without {arg}"


def p_in_repo_path(arg: str, hit: Hit, ctx: Context) -> str | None:
    """A relative path inside the repository (from the folder of a settings file at any
    depth), or a list of them."""
    base = folder(hit.rel)
    for v in hit.value if isinstance(hit.value, list) else [hit.value]:
        if not isinstance(v, str):
            return "a path outside the repository"
        nested = base and not v.strip().startswith(("/", "~", "$", "%"))
        if not _in_repo(v) and not (nested and _in_repo(posixpath.join(base, v.strip()))):
            return "a path outside the repository" + (
                f": {v[:60]!r}" if isinstance(hit.value, list) else "")
    return None


def _folder(rel: str) -> str:
    """The folder an editor opened for a settings file: the one holding its `.vscode/`
    (`${workspaceFolder}`), else the file's own directory."""
    head, sep, _tail = ("/" + rel).rpartition("/.vscode/")
    return head.lstrip("/") if sep else posixpath.dirname(rel)


def p_not_committed_file(arg: str, hit: Hit, ctx: Context) -> str | None:
    for v in _words(hit.value)[:1] if isinstance(hit.value, (str, list)) else []:
        v = re.sub(r"^\$\{workspace(?:Folder|Root)\}(?:/|$)", "", v.strip())
        if v.startswith(("/", "~", "$", "%")) or re.match(r"^[A-Za-z]:[\\/]", v):
            continue  # an installed interpreter
        rel = posixpath.normpath(posixpath.join(_folder(hit.rel), v))
        if rel == ".." or rel.startswith("../"):
            continue  # above the workspace: not the repository's
        st = ctx.ws_lstat(rel) if rel not in (".", "") else None
        if st is not None:
            import stat

            if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
                return f"{rel} is a file of the repository"
    return None


def p_no_env_expansion(arg: str, hit: Hit, ctx: Context) -> str | None:
    values = [hit.value] if isinstance(hit.value, str) else _words(hit.value)
    for v in values:
        if ENV_EXPANSION.search(v):
            return "sends the value of an environment variable"
    return None


def p_no_plain_http_server(arg: str, hit: Hit, ctx: Context) -> str | None:
    for parent in reversed(hit.parents):
        if isinstance(parent, dict):
            for key in ("url", "httpUrl", "serverUrl"):
                if key in parent:
                    return p_https_url("", Hit(key, key, parent[key], ()), ctx)
    return None


def p_no_grant(arg: str, hit: Hit, ctx: Context) -> str | None:
    """No entry grants a whole tool of arg (`Bash`, `Bash(*)`), nor a command of one that
    runs anything (`Shell(bash)`, `run_shell_command(python3 ...)`, `bash`)."""
    tools = {t.strip().lower() for t in arg.split(",")}
    values = hit.value if isinstance(hit.value, list) else \
        [t for t in re.split(r",\s*|\s+(?![^(]*\))", str(hit.value)) if t]
    for entry in values:
        text = str(entry).strip().strip("[]'\"").strip()
        m = re.match(r"^([\w.*-]+)\s*(?:\((.*)\))?$", text, re.S)
        name, scope = (m.group(1), m.group(2)) if m else (text, None)
        if name == "*" or (name.lower() in tools and (
                scope is None or scope.strip() in ("", "*", "**", ":*"))):
            return f"grants {text!r} whole"
        command = scope if scope is not None else (text if m is None or " " in text
                                                  or name.lower() not in tools else "")
        first = _words(command.replace(":*", " "))[:1] if command else []
        if first and os.path.basename(first[0]) in RUNNERS:
            return f"grants {text!r}: {first[0]} runs whatever its arguments say"
    return None


def p_no_wildcard_allow(arg: str, hit: Hit, ctx: Context) -> str | None:
    v = hit.value
    if v == "allow" or (isinstance(v, dict) and any(
            k in ("*", "**") and w == "allow" for k, w in v.items())):
        return "allows every use without asking"
    return None


def p_prefix_rule(arg: str, hit: Hit, ctx: Context) -> str | None:
    rule = hit.value
    if not isinstance(rule, dict) or rule.get("call") != "prefix_rule":
        return None
    if rule.get("decision", "allow") != "allow":
        return None
    pattern = rule.get("pattern")
    first = pattern[0] if isinstance(pattern, list) and pattern else pattern
    firsts = first if isinstance(first, list) else [first]
    for f in firsts:
        if isinstance(f, str) and os.path.basename(f) in RUNNERS:
            return f"allows every {f!r} command without asking"
    return None


def p_not_code_loading(arg: str, hit: Hit, ctx: Context) -> str | None:
    """arg `build`: a build's own variables too (BUILD_VARIABLES: the compiler, the
    linker, a runner)."""
    if CODE_LOADING.match(hit.key) or (arg == "build" and BUILD_VARIABLES.match(hit.key)):
        return f"sets {hit.key}, which loads code or chooses a program"
    return None


def p_not_runner(arg: str, hit: Hit, ctx: Context) -> str | None:
    """A command whose program (by its base name, `/bin/bash` too) is not a shell, an
    interpreter or a runner."""
    words = _words(hit.value) if isinstance(hit.value, (str, list)) else []
    program = posixpath.basename(words[0]) if words else ""
    return f"runs {program!r}, which runs whatever its arguments say" \
        if program in RUNNERS or re.match(r"^python\d", program) else None


def p_no_daemon_socket(arg: str, hit: Hit, ctx: Context) -> str | None:
    return "the daemon socket" if DAEMON_SOCKET.search(str(hit.value)) else None


def p_not_redirecting(arg: str, hit: Hit, ctx: Context) -> str | None:
    if REDIRECTING.match(hit.key) or CODE_LOADING.match(hit.key):
        return "it redirects the agent's traffic or loads code into what it runs"
    return None


def p_not_prefix_escaping(arg: str, hit: Hit, ctx: Context) -> str | None:
    """The variable is none of PREFIX_ESCAPING (with ARG `keys`: no key of the `env`
    object is): Claude Code starts its shell, and the shell prefix before each command
    and MCP server, with that `env`."""
    if arg == "keys":
        names = sorted(k for k in (hit.value if isinstance(hit.value, dict) else ())
                       if isinstance(k, str) and PREFIX_ESCAPING.match(k))
        return f"sets {', '.join(names)[:100]}" if names else None
    if PREFIX_ESCAPING.match(hit.key):
        return "Claude Code's own shell, which starts each Bash call before any shell " \
               "prefix (`ztsa hook claude`'s), runs or loads what it names, unconfined, " \
               "or ztsa reads another policy"
    return None


def p_own_shell_wrapper(arg: str, hit: Hit, ctx: Context) -> str | None:
    """CLAUDE_CODE_SHELL_PREFIX naming the wrapper that `ztsa hook claude --install
    --scope project` (or `local`) writes for this settings file on this machine: in the
    person's ztsa configuration directory (ztsa.hook.wrapper_path, of the audited
    machine's environment), which no repository and no confined run can write."""
    if hit.key != "CLAUDE_CODE_SHELL_PREFIX" or not isinstance(hit.value, str):
        return "not ztsa's own wrapper"
    from ztsa.hook import wrapper_path

    scope = "local" if hit.rel.endswith(".local.json") else "project"
    own = wrapper_path(scope, os.path.join(ctx.workspace, hit.rel), ctx.host.environ)
    # an environment without XDG_CONFIG_HOME or HOME names a relative path: the
    # repository's own file, never the install's
    return None if os.path.isabs(own) and hit.value == own else "not ztsa's own wrapper"


def _in_repo_market(market: Any) -> bool:
    source = market.get("source") if isinstance(market, dict) else None
    path = source.get("path") if isinstance(source, dict) else None
    return isinstance(source, dict) and source.get("source") == "directory" and \
        isinstance(path, str) and not path.startswith(("/", "~")) and \
        ".." not in path.split("/")


def p_in_repo_marketplace(arg: str, hit: Hit, ctx: Context) -> str | None:
    """A plugin marketplace that is a directory of the repository (its own content, which
    AGT002 and AGT006 read)."""
    return None if _in_repo_market(hit.value) else "from outside the repository"


def p_in_repo_plugin(arg: str, hit: Hit, ctx: Context) -> str | None:
    """Off, or a plugin of a marketplace the same settings add from a directory of the
    repository."""
    if not hit.value:
        return None
    doc = hit.parents[0] if hit.parents else None
    markets = doc.get("extraKnownMarketplaces") if isinstance(doc, dict) else None
    market = markets.get(hit.key.rpartition("@")[2]) if isinstance(markets, dict) else None
    return None if _in_repo_market(market) else "from outside the repository"


def p_allow_rule(arg: str, hit: Hit, ctx: Context) -> str | None:
    """A Claude Code allow rule that pre-approves nothing that runs what the repository or
    its arguments say: not `Bash` whole, not an unscoped edit, not a wildcard over a
    whole package or version-control tool or over a command that runs anything. One
    fixed command line is a Command (judged by what it runs); a wildcard over a
    checker's arguments is Advice."""
    entry = hit.value
    if not isinstance(entry, str):
        return None
    if entry.replace(" ", "") in ("Bash", "Bash(*)", "Bash(:*)"):
        return "every shell command is pre-approved"
    if entry.replace(" ", "") in UNSCOPED_EDITS:
        return "any file may be changed without a prompt, a hook or a Makefile included"
    command = entry.strip()
    if not (command.startswith("Bash(") and command.endswith(")")):
        return None
    command = command[5:-1].strip()
    wild = command.endswith("*")
    command = command.removesuffix(":*").removesuffix("*").strip()
    if wild and command in WHOLE_TOOLS:
        return f"every {command} subcommand is pre-approved, and some run whatever the " \
               "repository says"
    m = RUNS_ANYTHING.match(command)
    if m and not wild:  # the agent's ordinary work (a lint, a test run): what it runs
        return Command(command)
    if m and CHECKERS.match(command):
        return Advice("a checker or test runner over arguments of the agent's choosing")
    if m:
        return f"{m.group(1).split()[0]} runs whatever the repository or its arguments " \
               "say, without a prompt"
    return None


# capabilities that reach past the container: the host's administration, modules, any
# file by handle (Shocker), raw devices (SYS_PTRACE, common for debuggers, does not)
HOST_CAPABILITIES = frozenset(("SYS_ADMIN", "ALL", "SYS_MODULE", "DAC_READ_SEARCH",
                               "SYS_RAWIO"))


def _host_cap(value: str) -> bool:
    return value.strip().upper().removeprefix("CAP_") in HOST_CAPABILITIES


def p_no_host_capability(arg: str, hit: Hit, ctx: Context) -> str | None:
    return f"adds the capability {hit.value}" if _host_cap(str(hit.value)) else None


def p_no_host_run_arg(arg: str, hit: Hit, ctx: Context) -> str | None:
    """A `docker run` argument (with the next one, for `--flag value`) that gives the
    container the host: `--privileged`, the host's PID namespace, a host capability, an
    unconfined seccomp or AppArmor profile."""
    args = hit.parents[-1] if hit.parents and isinstance(hit.parents[-1], list) else []
    m = re.search(r"\[(\d+)\]$", hit.path)
    i = int(m.group(1)) if m else -1
    word = str(hit.value).strip()
    flag, eq, value = word.partition("=")
    if not eq and 0 <= i < len(args) - 1:
        value = str(args[i + 1]).strip()
    if flag == "--privileged":
        return "runArgs hold --privileged"
    if flag == "--pid" and value == "host":
        return "runArgs hold --pid=host"
    if flag == "--cap-add" and _host_cap(value):
        return f"runArgs add the capability {value}"
    if flag == "--security-opt":
        return _unconfined(value, "runArgs hold --security-opt")
    return None


def _unconfined(opt: str, said: str) -> str | None:
    """A container security option that turns a confinement off. `seccomp=unconfined`
    is what the Go, C++ and Rust devcontainer templates set beside SYS_PTRACE for a
    debugger (delve and gdb turn address randomisation off, which Docker's default
    filter refuses): the kernel is reached by more system calls, but the container keeps
    its namespaces, capabilities and AppArmor profile, so it is advice. Any other
    unconfined option fails: the AppArmor profile, the system paths
    (`systempaths=unconfined` unmasks /proc and /sys: a writable core_pattern runs a
    program on the host)."""
    opt = opt.strip()
    if "unconfined" not in opt:
        return None
    if re.match(r"seccomp[=:]unconfined$", opt):
        return Advice(f"{said} {opt}: the container's system-call filter is off (more "
                      "of the kernel reachable; by itself no way out of the container)")
    return f"{said} {opt}"


def p_no_host_security_opt(arg: str, hit: Hit, ctx: Context) -> str | None:
    """A `securityOpt` (Compose `security_opt`) entry, judged as `--security-opt` is in
    runArgs (_unconfined)."""
    return _unconfined(str(hit.value), f"{hit.key} holds")


def p_system_program(arg: str, hit: Hit, ctx: Context) -> str | None:
    """A program of the system, by name or absolute path (`aarch64-linux-gnu-gcc`,
    `qemu-arm -L /usr/arm`), that is not a shell, an interpreter or a runner."""
    words = _words(hit.value) if isinstance(hit.value, (str, list)) else []
    program = words[0] if words else ""
    if not program:
        return "not a program"
    if program.startswith(".") or "$" in program or (
            "/" in program and not program.startswith("/")):
        return f"runs {program[:60]!r}, a file of the checkout"
    if posixpath.basename(program) in RUNNERS:
        return f"runs {program[:60]!r}, which runs whatever its arguments say"
    return None


def p_inert_node_options(arg: str, hit: Hit, ctx: Context) -> str | None:
    """Node flags that load nothing (INERT_NODE_FLAGS; npm strips a `#` or `;` comment)."""
    words = re.split(r"[#;]", str(hit.value), maxsplit=1)[0].strip().strip("\"'").split()
    bad = next((w for w in words if not INERT_NODE_FLAGS.match(w)), None)
    if not words:
        return None
    return f"passes {bad[:60]!r} to node, which loads or opens something" if bad else None


def p_released_yarn(arg: str, hit: Hit, ctx: Context) -> str | None:
    """The file yarnPath names (beside its .yarnrc.yml) is a released Yarn, byte for byte
    (ztsa.manifests.yarn_releases): what `yarn set version` writes."""
    import hashlib

    from ztsa.manifests.yarn_releases import RELEASES

    value = str(hit.value).strip()
    target = posixpath.normpath(posixpath.join(posixpath.dirname(hit.rel), value))
    if target.startswith(("../", "/")) or target == "..":
        return f"runs {value[:60]!r}, outside the repository"
    data = ctx.ws_bytes(target, 16 << 20) if ctx.ws_exists(target) else None
    if data is not None and hashlib.sha256(data).hexdigest() in RELEASES:
        return None
    return f"runs {value[:60]!r}, not a released Yarn"


def p_no_host_secret_mount(arg: str, hit: Hit, ctx: Context) -> str | None:
    v = hit.value
    if isinstance(v, dict):
        v = str(v.get("source", ""))
    if not isinstance(v, str):
        return None
    source = v.split(",")[0] if "source=" not in v and "src=" not in v else \
        next((p.split("=", 1)[1] for p in v.split(",")
              if p.startswith(("source=", "src="))), "")
    if isinstance(hit.value, str) and ":" in source and not source.startswith("$"):
        source = source.split(":", 1)[0]  # compose short syntax SRC:DST[:MODE]
    if HOST_SECRET.search(" " + source.strip()):
        return f"mounts {source.strip()!r} of the host"
    return None


def p_lacks(arg: str, hit: Hit, ctx: Context) -> str | None:
    text = hit.value if isinstance(hit.value, str) else " ".join(_words(hit.value))
    for needle in arg.split("|"):
        if needle in text or needle.replace(" ", "") in text.replace(" ", ""):
            return f"holds {needle!r}"
    return None


def p_no_piped_download(arg: str, hit: Hit, ctx: Context) -> str | None:
    from ztsa.rules.sup.sup005_piped_shell_installer import PATTERNS

    for line in str(hit.value).splitlines():
        # every pattern names curl or wget: the other lines skip the regular expressions
        if ("curl" in line or "wget" in line) and any(rx.search(line) for rx in PATTERNS):
            return "runs a download as code: " + line.strip()[:80]
    return None


def p_no_outside_import(arg: str, hit: Hit, ctx: Context) -> str | None:
    """No `@path` import (outside code spans and blocks, which Claude Code does not read as
    imports) of the home directory, the machine's directories, or a relative path that
    leaves the repository from the importing file's directory."""
    fenced = False
    here = posixpath.dirname(hit.rel)
    for line in str(hit.value).splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced:
            continue
        for m in IMPORT.finditer(re.sub(r"`[^`]*`", "", line)):
            path = m.group(1).rstrip(".,;:)")
            if path.startswith(".") and not posixpath.normpath(
                    posixpath.join(here, path)).startswith(".."):
                continue  # stays in the repository
            return f"imports '@{path}', a file outside the repository"
    return None


def p_build_module_inert(arg: str, hit: Hit, ctx: Context) -> str | None:
    """The module a build hook names (`pkg.mod:Class`, `pkg.mod.Class`, or a path) is a
    file of the repository that runs no command, reaches no network and decodes nothing
    to run (as SUP013 reads a setup.py's hooks)."""
    value = hit.value.get("script") if isinstance(hit.value, dict) else hit.value
    if not isinstance(value, str) or not value.strip():
        return None
    value = value.strip()
    if value.endswith(".py") or "/" in value:
        candidates = [value]
    else:
        module = value.split(":")[0]
        parts = module.split(".")
        candidates = []
        for n in range(len(parts), 0, -1):  # `a.b.Class`: a/b.py, a/b/__init__.py, a.py
            stem = "/".join(parts[:n])
            candidates += [f"{pre}{stem}.py" for pre in ("", "src/")]
            candidates += [f"{pre}{stem}/__init__.py" for pre in ("", "src/")]
    for rel in candidates:
        if not _in_repo(rel):
            return f"names {value!r}, outside the repository"
        rel = posixpath.normpath(rel)
        if ctx.ws_lstat(rel) is None:
            continue
        text = ctx.ws_text(rel, MAX_BYTES) or ""
        return _build_module_hazard(ctx, rel, text)
    return f"names {value!r}, no module of the repository (one a build requirement installs)"


PROCESS_CALL = LazyRe(r"\b(?:subprocess\.\w+|os\.system|os\.popen|os\.exec\w*|os\.spawn\w*|"
                      r"pty\.spawn)\s*\(")


def _build_module_hazard(ctx: Context, rel: str, text: str) -> str | None:
    """What in a build module runs code from elsewhere: a network call, a payload decoded
    or evaluated (BUILD_HAZARDS but the process calls), or a command it starts that
    downloads, pipes a download into an interpreter, runs a package at no fixed version,
    or runs a repository file that does (ztsa.follow). A command that runs a tool by name
    (OpenHands' build script: `npm install`, `npm run package-vsix`) is the build's own
    work, judged by what it runs."""
    from ztsa.follow import downloader, follow, printed_text_removed
    from ztsa.rules.sup.sup005_piped_shell_installer import PATTERNS as PIPED
    from ztsa.rules.sup.sup017_install_hook_unpinned_runner import unpinned_runner

    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    for m in BUILD_HAZARDS.finditer(code):
        if m.group() not in ("subprocess",) and not m.group().startswith("os."):
            return f"{rel} calls {m.group()!r} at build time"
    for m in PROCESS_CALL.finditer(code):
        call = code[m.end():m.end() + 400].split(")", 1)[0]
        command = " ".join(re.findall(r"[\"']([^\"'\n]*)[\"']", call))
        if any(p.search(command) for p in PIPED) or downloader(
                printed_text_removed(command)) or unpinned_runner(command):
            return f"{rel} runs {command[:60]!r} at build time"
        for h in follow(ctx, command, "").hazards:  # a call spread over lines
            return f"{rel} runs {' -> '.join(h.chain) or command[:60]!r}, which {h.what}"
    for h in follow(ctx, f"python {rel}", "").hazards:
        return f"{rel} runs {' -> '.join(h.chain)}, which {h.what} (line {h.line})"
    return None


def p_no_script_hazard(arg: str, hit: Hit, ctx: Context) -> str | None:
    m = SCRIPT_HAZARDS.search(str(hit.value))
    return f"starts processes, reaches the network or reads credentials ({m.group()!r})" \
        if m else None


FETCHING_RUNNERS = ("uvx", "bunx", "pnpx", "pipx")
INLINE_FLAGS = ("-c", "-e", "--eval", "-p", "--print", "--command")
DAEMON_SOCKET = LazyRe(r"(?:docker|podman|containerd|crio|buildkitd)\.sock\b")


def p_no_fetching_launch(arg: str, hit: Hit, ctx: Context) -> str | None:
    """How a server is started, before what it runs is followed: no package runner that
    fetches (`uvx`, `bunx`, `pnpx`, `npx -y` of a package at no version), no shell or
    interpreter given an inline program, no container mounting the home, a daemon
    socket or a system directory of the host."""
    words = _words(command_line(hit))
    if not words:
        return None
    base, args = posixpath.basename(words[0]), words[1:]
    if base == "npx" and ("-y" in args or "--yes" in args):
        pkgs = [a for a in args if not a.startswith("-")]
        if pkgs and not re.search(r".@\d", pkgs[0]):
            return f"npx -y of {pkgs[0][:60]} without a pinned version"
    if base == "uvx" and _repository_python_project(ctx, args):
        return Advice("uvx fetches a release of a Python project of the repository")
    if base in FETCHING_RUNNERS:
        return f"{base} fetches and runs a package"
    if base in RUNNERS and any(a in INLINE_FLAGS for a in args[:3]):
        return "runs a shell command line" if base in ("sh", "bash", "zsh", "dash", "ksh",
                                                       "fish", "csh", "tcsh") else \
            f"{base} runs a program written inline"
    if any(DAEMON_SOCKET.search(w) for w in words):
        return "mounts the container daemon socket"
    for i, w in enumerate(args):
        flag, eq, val = w.partition("=")
        if flag in ("-v", "--volume", "--mount") and (eq or i + 1 < len(args)):
            why = p_no_host_secret_mount("", Hit("", "", val if eq else args[i + 1], ()),
                                         ctx)
            if why:
                return why
    return None


def _repository_python_project(ctx: Context, args: list[str]) -> bool:
    """Is uvx's package (its first word that is no option, `@` or `==` version dropped),
    by PEP 503's normalised names, the `[project] name` of a pyproject.toml of the
    repository: a monorepo's server package whose skill ships the MCP configuration that
    starts its (or a sibling's) release, as awslabs/mcp's do? The repository's own code,
    as `npx` of its own package is (ztsa.follow); one that cannot be read names nothing."""
    words = [a for a in args if not a.startswith("-")]
    if not words:
        return False

    def norm(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    names = ctx.cache.get("surface-python-projects")
    if not isinstance(names, set):
        from ztsa.manifests.project import named

        names = set()
        try:
            found = named(ctx, "pyproject.toml")
        except ProbeError:
            found = []
        for rel in found:
            try:
                text = ctx.ws_text(rel, MAX_BYTES)
                doc = parse("toml", text, rel) if text is not None else None
            except (ProbeError, ParseError):
                continue
            project = doc.get("project") if isinstance(doc, dict) else None
            if isinstance(project, dict) and isinstance(project.get("name"), str):
                names.add(norm(project["name"]))
        ctx.cache["surface-python-projects"] = names
    return norm(re.split(r"@|==|\[", words[0], maxsplit=1)[0]) in names


def p_runs_nothing_fetched(arg: str, hit: Hit, ctx: Context) -> str | None:
    """A command judged by what it runs (ztsa.follow.judge), as a git hook is: None when
    it runs nothing downloaded or fetched; a file it runs that cannot be judged raises
    (the rule is unknown)."""
    from ztsa.follow import judge as judge_command

    command = command_line(hit)
    if not command:
        return None
    scratch = Findings()
    judge_command(ctx, scratch, "runs", command, folder(hit.rel), hit.rel, None)
    if scratch.found:
        return scratch.found[0].detail
    if scratch.errors:
        raise ProbeError(hit.rel, scratch.errors[0])
    return None


def p_go_release(arg: str, hit: Hit, ctx: Context) -> str | None:
    return None if GO_RELEASE.match(str(hit.value)) else "not a Go release"


def p_package_spec(arg: str, hit: Hit, ctx: Context) -> str | None:
    return None if PACKAGE_SPEC.match(str(hit.value).strip()) else \
        "not name@version of npm, pnpm, Yarn or Bun (a URL or a tag is fetched and run)"


def p_no_secret_value(arg: str, hit: Hit, ctx: Context) -> str | None:
    from ztsa.secrets import NOT_SECRET_NAMES, SECRET_NAME, token_kind

    if hit.key.startswith(PUBLIC_PREFIXES):
        return None  # bundled into the pages a browser loads: public by design
    value = str(hit.value).strip()
    kind = token_kind(value)
    if kind:
        return f"holds a {kind}"
    if SECRET_NAME.search(hit.key) and hit.key not in NOT_SECRET_NAMES and \
            not PLACEHOLDER.match(value) and _credential_like(value):
        return "holds a literal secret"
    return None


def _credential_like(value: str) -> bool:
    """Long and mixed like a generated key (`wJalrXUtnFEMI/K7MDENG/bPxRfiCY...`), not a
    development default (`postgres`, `dev-secret-not-for-prod`)."""
    classes = sum(bool(re.search(rx, value)) for rx in (r"[a-z]", r"[A-Z]", r"[0-9]",
                                                        r"[^A-Za-z0-9]"))
    return len(value) >= 16 and " " not in value and classes >= 3


# name -> (what a safe value is, for docs/surfaces.md; the predicate)
SAFE: dict[str, tuple[str, Callable[[str, Hit, Context], str | None]]] = {
    "absent": ("the key or file is absent", p_absent),
    "outside-workspace": ("every directory it names is outside the workspace (absolute, "
                          "or the home's)", p_outside_workspace),
    "false": ("a boolean false", p_bool(False)),
    "true": ("a boolean true", p_bool(True)),
    "empty": ("an empty list, object or string", p_empty),
    "not": ("any value but ARG", p_not),
    "not-in": ("none of the comma-separated ARG", p_not_in),
    "approves-nothing": ("false, an empty list, or a rule set whose every entry denies",
                         p_approves_nothing),
    "formatter": ("a command that is a known formatter or linter, by name, no shell syntax",
                  p_formatter),
    "quiet": ("echo, printf, true or a known formatter, by name, no shell syntax", p_quiet),
    "program-in": ("a command whose program is one of ARG, no shell syntax", p_program_in),
    "program-on-path": ("a program by name that is not a shell, an interpreter or a "
                        "runner, no shell syntax", p_program_on_path),
    "loopback-url": ("a URL on this machine (localhost, 127.0.0.0/8, ::1)", p_loopback_url),
    "https-url": ("an https URL (or http on loopback)", p_https_url),
    "host": ("an https URL on the host ARG or below it", p_host),
    "with": ("the same object also holds ARG (a checksum)", p_with),
    "in-repo-path": ("a relative path inside the repository", p_in_repo_path),
    "not-committed-file": ("not a path to a file of the repository (an installed program, "
                           "or a virtual environment the person makes)",
                           p_not_committed_file),
    "no-env-expansion": ("no `${VAR}` expansion: no environment value sent", p_no_env_expansion),
    "no-plain-http-server": ("the server it is sent to is https", p_no_plain_http_server),
    "no-grant": ("grants no whole tool of ARG, and no command that runs anything (a shell, "
                 "an interpreter, a runner)", p_no_grant),
    "no-wildcard-allow": ("not `allow` for everything", p_no_wildcard_allow),
    "prefix-rule-no-runner": ("no `prefix_rule` allowing a shell, an interpreter or a runner",
                              p_prefix_rule),
    "not-code-loading-variable": ("a variable that loads no code and chooses no program "
                                  "(not PATH, NODE_OPTIONS, LD_PRELOAD, ...; with ARG "
                                  "`build`, not a compiler, linker or runner either: "
                                  "RUSTC_WRAPPER, RUSTFLAGS, CC, `*_RUNNER`, ...)",
                                  p_not_code_loading),
    "not-runner": ("a command whose program (by base name) is not a shell, an interpreter "
                   "or a runner", p_not_runner),
    "no-daemon-socket": ("no container daemon's socket (docker, podman, containerd, ...)",
                         p_no_daemon_socket),
    "not-redirecting-variable": ("a variable that neither sends the agent's traffic "
                                 "elsewhere (`*_BASE_URL`, proxies, CA bundles) nor loads "
                                 "code or chooses a program (as `not-code-loading-variable`)",
                                 p_not_redirecting),
    "not-prefix-escaping-variable": ("a variable (with ARG `keys`: an `env` object none of "
                                     "whose keys is one) that neither chooses nor loads "
                                     "what the shell or shell prefix starting a command "
                                     "runs (PATH, SHELL, CLAUDE_CODE_SHELL, BASH_ENV, "
                                     "ENV, SHELLOPTS, BASHOPTS, PS4, PROMPT_COMMAND, "
                                     "ZDOTDIR, GCONV_PATH, `LD_*`, `BASH_FUNC_*`) nor "
                                     "where ztsa finds its policy or what of the hidden "
                                     "home it shows (HOME, `XDG_*`, `ZTSA_*`, "
                                     "CLAUDE_PROJECT_DIR)", p_not_prefix_escaping),
    "own-shell-wrapper": ("CLAUDE_CODE_SHELL_PREFIX naming the wrapper `ztsa hook claude "
                          "--install --scope project` (or `local`) wrote for this settings "
                          "file on this machine (in the person's ztsa configuration "
                          "directory)",
                          p_own_shell_wrapper),
    "in-repo-marketplace": ("a marketplace that is a directory of the repository",
                            p_in_repo_marketplace),
    "in-repo-plugin": ("off, or a plugin of a marketplace the same settings add from a "
                       "directory of the repository", p_in_repo_plugin),
    "allow-rule": ("pre-approves no shell whole, no unscoped edit, no wildcard over a whole "
                   "package or version-control tool or over a command that runs what the "
                   "repository says; one fixed command line is judged by what it runs, a "
                   "checker over any arguments is advice", p_allow_rule),
    "no-host-capability": ("no capability that reaches past the container (SYS_ADMIN, "
                           "ALL, SYS_MODULE, DAC_READ_SEARCH, SYS_RAWIO)",
                           p_no_host_capability),
    "no-host-run-arg": ("no `docker run` argument that gives the container the host "
                        "(`--privileged`, `--pid=host`, a host capability, an unconfined "
                        "AppArmor profile or system paths; `seccomp=unconfined` "
                        "alone is advice)", p_no_host_run_arg),
    "no-host-security-opt": ("no unconfined security option (the AppArmor profile, the "
                             "masking of /proc and /sys); `seccomp=unconfined` alone is "
                             "advice", p_no_host_security_opt),
    "system-program": ("a program of the system by name or absolute path, not a file of "
                       "the checkout, a shell, an interpreter or a runner", p_system_program),
    "inert-node-options": ("node flags that load nothing (`--no-warnings`, "
                           "`--max-old-space-size=N`, `--enable-source-maps`, ...)",
                           p_inert_node_options),
    "released-yarn": ("names a released Yarn, byte for byte (SHA-256), beside the file",
                      p_released_yarn),
    "no-host-secret-mount": ("mounts neither the home directory, credentials, a daemon "
                             "socket nor a system directory of the host",
                             p_no_host_secret_mount),
    "lacks": ("holds none of the `|`-separated ARG", p_lacks),
    "no-piped-download": ("runs no download as code (`curl ... | sh`, as SUP005 reads it)",
                          p_no_piped_download),
    "no-outside-import": ("imports no file outside the repository (`@~/...`, `@/etc/...`, "
                          "`@../...` above the top)", p_no_outside_import),
    "build-module-inert": ("the module or script it names is a file of the repository that "
                           "reaches no network, decodes nothing to run, and runs only "
                           "commands that download nothing (a tool by name: `npm ci`)",
                           p_build_module_inert),
    "no-script-hazard": ("starts no process, reaches no network, reads no credential or "
                         "environment", p_no_script_hazard),
    "no-fetching-launch": ("started by no package runner that fetches (`uvx`, `npx -y` of "
                           "a package at no version), no shell or interpreter given an "
                           "inline program, no container mounting the home, a daemon "
                           "socket or a system directory", p_no_fetching_launch),
    "runs-nothing-fetched": ("a command that runs nothing downloaded or fetched, judged by "
                             "what it runs (`ztsa.follow.judge`: no download run or saved "
                             "and run, no fetched code, no package at no fixed version, no "
                             "shell start-up write, no credential read, in it or in the "
                             "repository files it runs)", p_runs_nothing_fetched),
    "go-release": ("a Go release (`go1.22.3`)", p_go_release),
    "package-spec": ("`name@version` of npm, pnpm, Yarn or Bun, with an optional hash",
                     p_package_spec),
    "no-secret-value": ("no token shape, and no generated-looking literal (16 characters "
                        "or more, three character classes) for a secret-named key",
                        p_no_secret_value),
}


def safe_name(spec: str) -> tuple[str, str]:
    name, _, arg = spec.partition(":")
    return name, arg


def judge(s: Setting, hit: Hit, ctx: Context) -> str | None:
    """None when one of the setting's safe predicates holds, else the first's reason."""
    reasons = []
    for spec in s.safe:
        why = holds(spec, hit, ctx)
        if why is None:
            return None
        reasons.append(why)
    return reasons[0]


def holds(spec: str, hit: Hit, ctx: Context) -> str | None:
    """One safe spec: a predicate, or predicates joined by `+` that must all hold."""
    for part in spec.split("+"):
        name, arg = safe_name(part)
        why = SAFE[name][1](arg, hit, ctx)
        if why is not None:
            return why
    return None


# -- files ------------------------------------------------------------------------------
def plugin_dirs(ctx: Context, f: Findings) -> dict[str, bool]:
    """The plugin directories (workspace-relative) of the in-repo Claude Code marketplace
    (`.claude-plugin/marketplace.json`: each plugin whose `source` is a relative path), and
    the repository itself when it is a plugin (`.claude-plugin/plugin.json`); each with
    whether the project's settings enable it (`enabledPlugins` names `plugin@marketplace`),
    so that it acts for whoever opens the repository. One nothing enables acts only once a
    person installs it: its findings are advice."""
    cached = ctx.cache.get("surface-plugins")
    if isinstance(cached, dict):
        return cached
    from ztsa.parsing import load_jsonc

    def document(rel: str) -> Any:
        text = f.attempt(ctx.ws_text, rel, MAX_BYTES)
        if text is None:
            return None
        try:
            return load_jsonc(text, rel)
        except ParseError as exc:
            f.error(exc)
            return None

    enabled: set[str] = set()
    for rel in (".claude/settings.json", ".claude/settings.local.json"):
        doc = document(rel) if ctx.ws_exists(rel) else None
        plugins = doc.get("enabledPlugins") if isinstance(doc, dict) else None
        if isinstance(plugins, dict):
            enabled |= {k for k, v in plugins.items() if v and isinstance(k, str)}
    out: dict[str, bool] = {}
    if ctx.ws_exists(".claude-plugin/plugin.json"):
        doc = document(".claude-plugin/plugin.json")
        name = doc.get("name") if isinstance(doc, dict) else None
        out[""] = any(e.partition("@")[0] == name for e in enabled)
    doc = document(".claude-plugin/marketplace.json") \
        if ctx.ws_exists(".claude-plugin/marketplace.json") else None
    if isinstance(doc, dict):
        market = doc.get("name")
        meta = doc.get("metadata")
        root = meta.get("pluginRoot", "") if isinstance(meta, dict) else ""
        plugins = doc.get("plugins")
        for plugin in plugins if isinstance(plugins, list) else []:
            source = plugin.get("source") if isinstance(plugin, dict) else None
            if isinstance(source, str) and _in_repo(source):
                if isinstance(root, str) and root and not source.startswith("./"):
                    source = posixpath.join(root, source)
                path = posixpath.normpath(source.removeprefix("./"))
                path = "" if path == "." else path
                on = f"{plugin.get('name')}@{market}" in enabled
                out[path] = out.get(path, False) or on
    ctx.cache["surface-plugins"] = out
    return out


def devcontainer_compose(ctx: Context, f: Findings) -> list[str]:
    """The Compose files (workspace-relative) the devcontainer configurations name by
    `dockerComposeFile`, relative to each configuration; one above the workspace is not
    the repository's."""
    from ztsa.surfaces import SETTINGS

    cached = ctx.cache.get("surface-devcontainer-compose")
    if isinstance(cached, list):
        return cached
    configs = next(s for s in SETTINGS if s.id == "devcontainer-initialize-command")
    out: list[str] = []
    for rel, _advisory in files_of(ctx, configs, Findings()):  # its errors: reported below
        try:
            text = ctx.ws_text(rel, MAX_BYTES)
            doc = parse("json", text, rel) if text is not None else None
        except ProbeError:
            continue  # the configuration's own settings make the rule unknown
        names = doc.get("dockerComposeFile") if isinstance(doc, dict) else None
        for name in [names] if isinstance(names, str) else names or []:
            path = posixpath.normpath(posixpath.join(posixpath.dirname(rel), str(name)))
            if path != ".." and not path.startswith(("../", "/")):
                out.append(path)
    out = list(dict.fromkeys(out))
    ctx.cache["surface-devcontainer-compose"] = out
    return out


def _listing(ctx: Context, rel: str, f: Findings) -> list[str]:
    """The names of the files and symlinks of a workspace directory, sorted, memoised."""
    memo: dict[str, list[str]] = ctx.cache.setdefault("surface-listings", {})
    if rel not in memo:
        names: list[str] = []
        try:
            with os.scandir(ctx.ws_path(rel)) as it:
                names = sorted(e.name for e in it if not e.is_dir(follow_symlinks=False))
        except FileNotFoundError:
            pass
        except OSError as exc:
            f.error(f"cannot list {rel or 'the workspace'}: {exc.strerror}", rel or None)
        memo[rel] = names
    return memo[rel]


def files_of(ctx: Context, s: Setting, f: Findings) -> list[tuple[str, bool]]:
    """(file, advisory) of a setting: advisory for a plugin's file that nothing enables."""
    globs: list[tuple[str, bool]] = []
    excluded = [g[1:] for g in s.files if g.startswith("!")]
    for g in s.files:
        if g.startswith("!"):
            continue
        if g.startswith("{plugin}/"):
            rest = g.removeprefix("{plugin}/")
            globs += [(posixpath.join(d, rest) if d else rest, not on)
                      for d, on in plugin_dirs(ctx, f).items()]
        elif g == "{devcontainer-compose}":
            globs += [(rel, False) for rel in devcontainer_compose(ctx, f)]
        elif g == ".claude-plugin/marketplace.json":  # plugins declared inline in it
            globs.append((g, not any(plugin_dirs(ctx, f).values())))
        else:
            globs.append((g, False))
    found: dict[str, bool] = {}
    for g, advisory in globs:
        for rel in _matches(ctx, g, f):
            if any(fnmatch.fnmatchcase(posixpath.basename(rel).lower(), x)
                   for x in excluded):
                continue
            found[rel] = found.get(rel, True) and advisory
    if len(found) > MAX_FILES:  # the rest unread: undecided, never a pass
        f.error(f"{s.id}: {len(found)} files, more than {MAX_FILES} to judge")
    return list(found.items())[:MAX_FILES]


def _matches(ctx: Context, g: str, f: Findings) -> list[str]:
    """The workspace files a glob names: a plain path by one lstat; a glob by its literal
    directory first (a workspace without it costs one stat), then the listings of the
    directories it names; `**/REST`: REST at the top, and below every directory the
    workspace walk visits (but in an installed package)."""
    if g.startswith("**/"):
        return _anywhere(ctx, g[3:], f)
    if not any(c in g for c in "*?["):
        return [g] if f.attempt(ctx.ws_lstat, g) is not None else []
    head = g[: min(g.find(c) for c in "*?[" if c in g)].rpartition("/")[0]
    if head and not os.path.isdir(ctx.ws_path(head)):
        return []
    dirglob, _, baseglob = g.rpartition("/")
    if not any(c in dirglob for c in "*?["):
        return [posixpath.join(dirglob, n) for n in _listing(ctx, dirglob, f)
                if fnmatch.fnmatchcase(n, baseglob)]
    return [posixpath.join(d, n) for d in _dirs(ctx, dirglob, f)
            for n in _listing(ctx, d, f) if fnmatch.fnmatchcase(n, baseglob)]


def _anywhere(ctx: Context, rest: str, f: Findings) -> list[str]:
    """REST at the workspace's top (as a plain glob) and below any directory of the walk:
    a tool that obeys the file in whatever directory it is opened or entered in (mise,
    direnv, VS Code) obeys a nested one as it does the top's."""
    from ztsa.manifests.project import named, named_where
    from ztsa.surfaces import installed, spec_matches

    top = _matches(ctx, rest, f)
    # memoised per run: the settings of one tool share their files (mise's three, twenty
    # names each), and a pattern (`*.toml`) reads every distinct name of the walk
    memo: dict[str, list[str]] = ctx.cache.setdefault("surface-anywhere", {})
    if rest not in memo:
        base = rest.rpartition("/")[2]
        names: dict[str, list[str]] = ctx.cache.setdefault("surface-named", {})
        try:
            if base not in names:
                names[base] = named_where(ctx, lambda n: fnmatch.fnmatchcase(n, base)) \
                    if any(c in base for c in "*?[") else named(ctx, base)
        except ProbeError as exc:
            f.error(exc)
            return top
        found = names[base]
        memo[rest] = [p for p in found if "/" in p and spec_matches(p, "**/" + rest)
                      and not installed(p)]
    return list(dict.fromkeys([*top, *memo[rest]]))


def _dirs(ctx: Context, dirglob: str, f: Findings) -> list[str]:
    """The workspace directories a directory pattern names, level by level (a pattern
    level lists its parent; a symbolic link to a directory is not followed, as the walk
    does not), at most MAX_FILES."""
    found = [""]
    for part in dirglob.split("/"):
        nxt: list[str] = []
        for d in found:
            if not any(c in part for c in "*?["):
                if os.path.isdir(ctx.ws_path(posixpath.join(d, part))):
                    nxt.append(posixpath.join(d, part))
                continue
            try:
                with os.scandir(ctx.ws_path(d)) as it:
                    nxt += sorted(posixpath.join(d, e.name) for e in it
                                  if e.is_dir(follow_symlinks=False)
                                  and fnmatch.fnmatchcase(e.name, part))
            except OSError as exc:
                f.error(f"cannot list {d or 'the workspace'}: {exc.strerror}", d or None)
        found = nxt[:MAX_FILES]
    return found


def _shown(s: Setting, hit: Hit) -> str:
    if s.effect.startswith("holds credentials") or s.format == "text":
        return ""
    v = hit.value
    text = v if isinstance(v, str) else repr(v)
    return f" = {text[:80]!r}" if len(text) <= 80 else f" = {text[:77]!r}..."


def hits(ctx: Context, f: Findings, s: Setting) -> Iterator[tuple[Hit, str, bool]]:
    """(value, the text of its file, advisory) of each value a setting's key paths select
    in each of its files; a file that cannot be read or parsed is an error in f."""
    docs: dict[str, tuple[Any, str]] = ctx.cache.setdefault("surface-docs", {})
    for rel, advisory in files_of(ctx, s, f):
        key = f"{s.format}:{rel}"
        if key not in docs:
            try:
                text = ctx.ws_text(rel, MAX_BYTES)
                if text is None:
                    continue
                docs[key] = (parse(s.format, text, rel), text)
            except ProbeError as exc:
                f.error(f"{s.id}: {exc}", rel)
                continue
        doc, text = docs[key]
        for keypath in s.keys or ("",):
            for hit in select(doc, keypath):
                hit.rel = rel
                yield hit, text, advisory


def line_for(s: Setting, hit: Hit, text: str, why: str) -> int | None:
    """The line of a value in its file: each level of its key path looked for from the
    line of the one above it (`[profiles.ci]`, then its `sandbox_mode`); of a whole text,
    the line the reason quotes."""
    line = None
    parts = hit.path.split("/")
    for n, part in enumerate(parts):
        part = re.sub(r"\[\d+\]$", "", part)
        if n == len(parts) - 1 and isinstance(hit.value, str) and hit.value.strip():
            # a string value: its own line (`"type": "command"` holds the key's name)
            value = hit.value.strip().splitlines()[0][:40]
            at = line_of(text, value, line or 1) or line_of(text, part, line or 1)
        else:
            at = line_of(text, part, line or 1) if part else None
        line = at if at is not None else line
    if isinstance(hit.value, dict) and why:
        # an object judged by its keys (an `env`): the line of the first key the reason
        # names
        named = [(m.start(), k) for k in hit.value if isinstance(k, str) and k
                 for m in [re.search(rf"(?<!\w){re.escape(k)}(?!\w)", why)] if m]
        if named:
            key = min(named)[1]
            at = line_of(text, f'"{key}"', line or 1) or line_of(text, key, line or 1)
            line = at if at is not None else line
    if s.format == "text":
        quoted = re.search(r"'([^']+)'|: (.+)$", why)
        needle = (quoted.group(1) or quoted.group(2))[:60] if quoted else ""
        line = line_of(text, needle) if needle else None
    return line


def verdicts(ctx: Context, f: Findings, s: Setting) -> Iterator[tuple[Hit, str, int | None,
                                                                      bool]]:
    """(value, why it is not safe, its line, advisory) of each value of a setting that
    none of its safe predicates accepts; what cannot be judged is an error in f."""
    for hit, text, advisory in hits(ctx, f, s):
        try:
            why = judge(s, hit, ctx)
        except (ProbeError, ValueError, OSError) as exc:  # a path with a NUL...
            f.error(f"{s.id}: {hit.rel}: {hit.path}: {exc}", hit.rel)
            continue
        if why is not None:
            yield hit, why, line_for(s, hit, text, why), advisory


def audit(ctx: Context, f: Findings, s: Setting) -> None:
    for hit, why, line, advisory in verdicts(ctx, f, s):
        where = f"{hit.path}{_shown(s, hit)}: " if hit.path else ""
        detail = f"{s.id}: {where}{why} ({s.tool}, {s.acts}; {s.runs})"
        if advisory:
            f.advise(detail + " (a plugin no project setting enables: it acts once "
                     "a person installs it)", hit.rel, line)
        else:
            f.fail(detail, hit.rel, line)


def settings_of(rule_id: str) -> list[Setting]:
    return [s for s in SETTINGS if rule_of(s) == rule_id]


def dotted(hit: Hit) -> str:
    """A value's key path as the tools' documentation writes it: `profiles.ci.x`."""
    return hit.path.replace("/", ".")


def shown(value: Any) -> str:
    """A value as its file wrote it: `true`, `never`, a list as JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value[:80]
    import json

    try:
        return json.dumps(value)[:80]
    except (TypeError, ValueError):
        return repr(value)[:80]


def older(ctx: Context, f: Findings, rule_id: str,
          word: Callable[[Setting, Hit, str], str],
          what: Callable[[Setting, Hit], str] | None = None,
          skip: tuple[str, ...] = ()) -> None:
    """An older rule's settings (the catalogue's `rule` column; but the ids in skip, which
    the rule reads itself) judged as the catalogue judges them, each finding worded by
    the rule (`word(setting, value, why)`). A value whose safe predicate is
    `runs-nothing-fetched` is a command judged by what it runs (ztsa.follow.judge, which
    also lists advice): `what(setting, value)` names it."""
    from ztsa.follow import judge as judge_command

    for s in settings_of(rule_id):
        if s.id in skip:
            continue
        parts = s.safe[0].split("+") if len(s.safe) == 1 else []
        if "runs-nothing-fetched" in parts:
            rest = "+".join(p for p in parts if p != "runs-nothing-fetched")
            for hit, text, advisory in hits(ctx, f, s):
                # a whole file (a hook script) runs by its name
                command = f"./{hit.rel}" if s.format == "text" else command_line(hit)
                if not command:
                    continue
                try:
                    why = holds(rest, hit, ctx) if rest else None
                except (ProbeError, ValueError, OSError) as exc:
                    f.error(f"{s.id}: {hit.rel}: {hit.path}: {exc}", hit.rel)
                    continue
                line = line_for(s, hit, text, "")
                if why is not None:
                    (f.advise if advisory or isinstance(why, Advice) else f.fail)(
                        word(s, hit, why), hit.rel, line)
                else:
                    # a whole file runs by its path from the top
                    judge_command(ctx, f, what(s, hit) if what else dotted(hit), command,
                                  "" if s.format == "text" else folder(hit.rel), hit.rel,
                                  line)
            continue
        for hit, why, line, advisory in verdicts(ctx, f, s):
            if isinstance(why, Command):
                judge_command(ctx, f, word(s, hit, why), str(why), folder(hit.rel), hit.rel,
                              line)
            else:
                (f.advise if advisory or isinstance(why, Advice) else f.fail)(
                    word(s, hit, why), hit.rel, line)
    f.found.sort(key=lambda e: (e.path or "", e.line or 0))


def folder(rel: str) -> str:
    """The folder the command of a setting in file rel runs from: the one a tool opens or
    starts in for a file of a `**/` spec at any depth, what is before the longest spec it
    matches (`examples/app/.vscode/mcp.json`: `examples/app`, whose package.json says
    what `npx NAME` finds installed; `pkg/.claude/settings.json`: `pkg`), the top
    otherwise."""
    if "/" not in rel:
        return ""
    from ztsa.surfaces import SETTINGS, spec_matches

    best = ""
    for s in SETTINGS:
        for spec in s.files:
            if spec.startswith("**/") and spec.count("/") > best.count("/") \
                    and spec_matches(rel, spec):
                best = spec
    return "/".join(rel.split("/")[:rel.count("/") - best.count("/") + 1]) if best else ""


def command_line(hit: Hit) -> str:
    """A command value as one command line, with the `args` list beside a `command` key
    (an MCP or language server's form)."""
    command = command_of(hit.value)
    parent = hit.parents[-1] if hit.parents else None
    args = parent.get("args") if hit.key == "command" and isinstance(parent, dict) else None
    if command and isinstance(args, list):
        import shlex

        command += "".join(" " + shlex.quote(str(a)) for a in args
                           if isinstance(a, (str, int)))
    return command


def command_of(value: Any) -> str:
    """A command value as one command line: a string, an argv list (quoted), or the
    `command` (`run`, `script`) of an object; empty for anything else."""
    if isinstance(value, dict):
        value = value.get("command", value.get("run", value.get("script", "")))
    if isinstance(value, list) and all(isinstance(w, (str, int)) for w in value):
        import shlex

        return " ".join(shlex.quote(str(w)) for w in value)
    return value.strip() if isinstance(value, str) else ""


def check(ctx: Context, rule_id: str, passed: str, failed: str) -> Outcome:
    f = Findings()
    for s in SETTINGS:
        if rule_of(s) == rule_id:
            audit(ctx, f, s)
    return f.outcome(passed, failed.format(n=len(f.found)))
