"""Follow what runs: the repository files a command runs, read for what they do.

An install hook, a git hook, a hook manager's entry or an editor task is a command
line; when it runs a file of the repository (`node scripts/install.js`, `sh ./setup.sh`,
`bash scripts/x`, `python tools/x.py`, `python -m tools.x`, `./bin/setup`), that file is
what really runs. `follow(ctx, command, cwd)` reads each such file and what it runs in
turn (a script's commands; a Node file's `child_process` calls, `require` and `import`
of relative files; a Python file's `subprocess`/`os.system` calls and `runpy`), at most
MAX_DEPTH files deep, MAX_FILES files and MAX_BYTES each, and reports the hazards of
code that runs outside the sandbox:
- a download piped into an interpreter (`curl … | sh`, SUP005's forms);
- a fetched string run as code (`eval "$(curl …)"`, `source <(curl …)`, JavaScript's
  `eval`/`new Function`/`vm.run*` or Python's `exec` in a file that fetches);
- a download saved and then run (`curl -o x.sh …` then `sh x.sh`, `chmod +x`, `./x`;
  a Node file that fetches, writes a file and starts a process through
  `child_process`; a Python file that fetches, writes and runs a subprocess);
- a write to a shell start-up file (`~/.bashrc`, `~/.zshrc`, `~/.profile`, ...);
- a read of a credential path (`~/.ssh/`, `~/.aws/credentials`, `~/.npmrc`,
  `~/.git-credentials`, `~/.docker/config.json`, `~/.kube/config`, `gh`'s hosts file).
Each hazard names its file and line, and the chain of files that led to it. A file that
cannot be judged (unreadable, not UTF-8 text such as a binary, larger than MAX_BYTES, a
symlink out of the workspace, or one more file past the bounds) is an error: the rule
makes it unknown, never a pass. A file the command names that the repository does not
hold (a build output, a tool on PATH) is not followed: it is not the repository's code.
What a formatter, `node-gyp rebuild` or a script that prints does is none of these."""

from __future__ import annotations

import posixpath
import re

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.host import ProbeError
from ztsa.lazy import LazyRe
from ztsa.records import NamedTuple

MAX_DEPTH = 3  # a command runs a file (1) that runs a file (2) that runs a file (3)
MAX_FILES = 32  # files read for one command
MAX_BYTES = 1 << 20


class Hazard(NamedTuple):
    path: str  # the file it is in, workspace-relative
    line: int
    what: str  # "pipes a download into an interpreter: '...'"
    chain: tuple[str, ...]  # the files followed to reach it, the first one first


class Followed(NamedTuple):
    hazards: tuple[Hazard, ...]
    errors: tuple[ProbeError, ...]  # what could not be judged: the rule is unknown
    files: tuple[str, ...]  # every file read
    # every command line that runs: the command, its `sh -c` programs, the package.json
    # scripts it runs by name (`pnpm fix` -> `ultracite fix`)
    commands: tuple[str, ...] = ()
    # the lines of followed shell files that run a download tool as a command
    downloads: tuple[Hazard, ...] = ()
    # the commands followed files start: a shell file's lines, the command a Node or
    # Python file's spawn line builds (`spawnSync("npm", ["install", "pnpm"])`), as
    # Hazards whose `what` is the command
    spawned: tuple[Hazard, ...] = ()


def describe(h: Hazard, origin: str) -> str:
    """'postinstall runs scripts/install.js, which pipes ... (line 8)': what ran it, the
    files followed, what the last one does and where."""
    return f"{origin} runs {' -> '.join(h.chain)}, which {h.what} (line {h.line})"


# -- which files a command runs --------------------------------------------------------
JS = ("node", "nodejs", "bun", "deno", "tsx", "ts-node", "babel-node", "esno", "esrun")
SH = ("sh", "bash", "zsh", "dash", "ksh", "source", ".", "source_env", "source_env_if_exists")
# `uv run X`, `poetry run X`, ...: X runs, in the project's environment
ENV_RUNNERS = ("uv", "poetry", "pdm", "pipenv", "hatch", "rye")
# their options that take a value (`uv run --with ruff x.py`)
RUNNER_VALUED = {"--with", "--with-editable", "--with-requirements", "--python", "-p",
                 "--group", "--only-group", "--no-group", "--extra", "--package",
                 "--directory", "--project", "--env-file", "--index", "--default-index",
                 "--exclude-newer", "-w", "--env"}
# package managers whose `run X` (and, but npm's, bare `X`) runs package.json's script X
SCRIPT_RUNNERS = ("npm", "pnpm", "yarn", "bun")
# a variable standing for a directory at the start of a path: the project's directory
# (`$CLAUDE_PROJECT_DIR/.claude/hooks/x.sh`), the script's own (`$(dirname "$0")/x.sh`):
# the rest of the path is looked for in the repository all the same
VAR_PREFIX = LazyRe(r"^(?:\$\{?\w+\}?|\$\([^)]*\))/+")
PY = LazyRe(r"^(?:python[0-9.]*|pypy[0-9.]*)$")
OTHER = ("perl", "ruby", "php")
PREFIX = ("exec", "env", "sudo", "time", "nohup", "command", "cross-env", "xargs",
          # shell words before a command (`if ./check; then tools/a.sh; fi`)
          "if", "then", "elif", "else", "while", "until", "do", "!")
VALUED = {"-r", "--require", "--import", "--loader", "--experimental-loader", "-W", "-X",
          "--env-file", "--title", "--config", "-o", "--rcfile", "--init-file"}
ASSIGN = LazyRe(r"^[A-Za-z_][A-Za-z0-9_]*=")
# programs that run the command after their options and N arguments of their own
# (`timeout 300 sh x.sh`, `flock .lock sh x.sh`, `nice -n 5 x`), and their options that
# take a value as the next word
WRAPPERS = {"timeout": 1, "flock": 1, "chrt": 1, "taskset": 1, "nice": 0, "stdbuf": 0,
            "ionice": 0, "setsid": 0, "unbuffer": 0, "chronic": 0, "systemd-inhibit": 0}
WRAPPER_VALUED = {"-n", "-s", "-k", "-w", "-E", "-c", "-p", "--signal", "--kill-after",
                  "--timeout", "--conflict-exit-code", "--class", "--classdata",
                  "--adjustment", "--what", "--who", "--why", "--mode"}
# direnv's loaders of a dotenv file (`.env` when none is named): what it says is the
# shell's environment at every `cd` (GIT_CONFIG_*, PATH, LD_PRELOAD)
DOTENV = ("dotenv", "dotenv_if_exists")


class Ref(NamedTuple):
    lang: str  # js, sh, py, other
    rel: str  # workspace-relative path as named (not yet resolved)
    base: str  # the directory it is relative to


def _segments(command: str) -> list[str]:
    """command split at its unquoted `&&`, `||`, `;`, `|`, `&` and line ends: a `;` or a
    `|` inside `sh -c '…'` or `python -c "…"` belongs to the program."""
    out, cur, quote, i = [], [], "", 0
    while i < len(command):
        c = command[i]
        if c == "\\" and quote != "'" and i + 1 < len(command):
            cur.append(command[i:i + 2])
            i += 2
            continue
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in ";|&\n":
            out.append("".join(cur))
            cur = []
            while i + 1 < len(command) and command[i + 1] in "|&":
                i += 1
            i += 1
            continue
        cur.append(c)
        i += 1
    out.append("".join(cur))
    return out


def _words(segment: str) -> list[str]:
    import shlex

    try:
        return shlex.split(segment, comments=True)
    except ValueError:
        return segment.split()


def simple_commands(text: str) -> list[list[str]]:
    """The words of each simple command of a shell text, split as refs splits them."""
    return [_words(segment) for segment in _segments(text)]


def refs(command: str, cwd: str) -> tuple[list[Ref], list[str]]:
    """(files the command runs, inline programs it runs: `sh -c '…'`, `node -e '…'`)."""
    found, inline = _refs(command, cwd)
    return found, [program for _lang, program in inline]


def _refs(command: str, cwd: str, depth: int = 0) -> tuple[list[Ref], list[tuple[str, str]]]:
    """(files the command runs, (language, program) of each inline program)."""
    out: list[Ref] = []
    inline: list[tuple[str, str]] = []
    before: list[str] = []  # the words of the segment before (`cat F | sh`)
    for segment in _segments(command):
        words = _words(segment)
        while words:
            if ASSIGN.match(words[0]) or words[0] in PREFIX or (
                    words[0].startswith("-") and len(words) > 1):
                words = words[1:]
                continue
            wrapper = posixpath.basename(words[0])
            if wrapper not in WRAPPERS or len(words) < 2:
                break
            words = words[1:]
            while words and words[0].startswith("-"):
                words = words[2:] if words[0] in WRAPPER_VALUED else words[1:]
            words = words[WRAPPERS[wrapper]:]
        last, before = before, words
        if not words:
            continue
        prog = posixpath.basename(words[0])
        args = words[1:]
        if prog in DOTENV:
            files = [a for a in args if not a.startswith("-")]
            out.append(Ref("sh", files[0] if files else ".env", cwd))
            continue
        if prog in SH:
            # a shell reading its commands from a file on standard input: `sh < F`,
            # `sh <F`, `bash -s < F`; `cat F | sh`
            plain = [a for k, a in enumerate(args) if not a.startswith("<")
                     and not (k and args[k - 1] == "<")]
            if not [a for a in plain if not a.startswith("-")] and "-c" not in plain:
                fed = [args[k + 1] for k, a in enumerate(args[:-1]) if a == "<"]
                fed += [a[1:] for a in args if a.startswith("<") and a[1:2] not in (
                    "", "<", "(")]
                if last[:1] and posixpath.basename(last[0]) == "cat":
                    fed += [a for a in last[1:] if not a.startswith("-")]
                out += [Ref("sh", f, cwd) for f in fed]
            args = plain
        if prog in ENV_RUNNERS and args[:1] == ["run"] and depth < 4:
            rest = args[1:]
            while rest and rest[0].startswith("-"):
                rest = rest[2:] if rest[0] in RUNNER_VALUED else rest[1:]
            if rest and rest[0].endswith(".py"):
                out.append(Ref("py", rest[0], cwd))
            elif rest:
                sub, more = _refs(" ".join(_quote(w) for w in rest), cwd, depth + 1)
                out += sub
                inline += more
            continue
        if prog in JS or prog in SH or PY.match(prog) or prog in OTHER:
            lang = "js" if prog in JS else "sh" if prog in SH else \
                "py" if PY.match(prog) else "other"
            if prog in ("bun", "deno") and args[:1] in (["run"], ["x"]):
                args = args[1:]
            i = 0
            while i < len(args):
                a = args[i]
                if a in ("-c", "-e", "--eval", "-p", "--print") and i + 1 < len(args):
                    inline.append((lang, args[i + 1]))
                    if lang == "sh" and depth < 4:
                        sub, more = _refs(args[i + 1], cwd, depth + 1)
                        out += sub
                        inline += more
                    break
                if a == "-m" and lang == "py" and i + 1 < len(args):
                    mod = args[i + 1].replace(".", "/")
                    out.append(Ref("py", f"{mod}.py", cwd))
                    out.append(Ref("py", f"{mod}/__main__.py", cwd))
                    break
                if a in VALUED and i + 1 < len(args):
                    if a in ("-r", "--require", "--import") and lang == "js":
                        out.append(Ref("js", args[i + 1], cwd))
                    i += 2
                    continue
                if a.startswith("-"):
                    i += 1
                    continue
                out.append(Ref(lang, a, cwd))
                break
        elif "/" in words[0] and not words[0].startswith(("/", "~")):
            out.append(Ref("", words[0], cwd))  # ./bin/setup, scripts/x.sh: by its name
    return out, inline


def _quote(word: str) -> str:
    import shlex

    return shlex.quote(word)


def _resolve(ctx: Context, ref: Ref, also: str | None) -> str | None:
    """The repository file a reference names (Node's extensions and index files), or
    None when the repository holds none: outside the workspace, absent."""
    name = VAR_PREFIX.compiled.sub("", ref.rel)
    if name.startswith(("/", "~", "$")) or "$" in name or "`" in name:
        return None
    for base in dict.fromkeys([ref.base, *([also] if also is not None else [])]):
        rel = posixpath.normpath(posixpath.join(base, name))
        if rel == ".." or rel.startswith("../") or rel == ".":
            continue
        candidates = [rel]
        if ref.lang == "js":
            candidates += [rel + ext for ext in (".js", ".cjs", ".mjs", ".ts")]
            candidates += [rel + "/index.js"]
        for c in candidates:
            st = ctx.ws_lstat(c)
            if st is not None and not _is_dir(st.st_mode):
                return c
    return None


def _is_dir(mode: int) -> bool:
    import stat

    return stat.S_ISDIR(mode)


def _lang(rel: str, text: str, given: str) -> str:
    """What a file is: its runner's language, else its suffix, else its #! line."""
    if given:
        return given
    for suffix, lang in ((".js", "js"), (".cjs", "js"), (".mjs", "js"), (".ts", "js"),
                         (".py", "py"), (".sh", "sh"), (".bash", "sh")):
        if rel.endswith(suffix):
            return lang
    first = text.split("\n", 1)[0]
    if first.startswith("#!"):
        if "node" in first or "bun" in first or "deno" in first:
            return "js"
        if "python" in first:
            return "py"
        if re.search(r"\b(?:ba|z|da|k)?sh\b", first):
            return "sh"
        return "other"
    return "sh"  # a file run by name without #! is run by the shell


# -- what a file does --------------------------------------------------------------------
EVAL_FETCHED_SH = LazyRe(r"\beval\b[^\n]*\$\(\s*(?:curl|wget)\b|"
                         r"(?:^|[;&|\s])(?:source|\.)\s+<\(\s*(?:curl|wget)\b")
# a download written to a file: curl -o F / --output F / > F; wget -O F
SAVED = LazyRe(r"\b(?:curl\b[^\n|;&]*?(?:\s-o\s*|\s--output[\s=]|\s>\s*)|"
               r"wget\b[^\n|;&]*?(?:\s-O\s*|\s--output-document[\s=]))[\"']?"
               r"(?P<file>[^\s\"'|;&>]+)")
RC_FILE = LazyRe(r"(?:~/|\$HOME/|\$\{HOME\}/|[\"'/])\.(bashrc|zshrc|bash_profile|zprofile|"
                 r"zshenv|zlogin|profile|bash_login|config/fish/config\.fish)\b|"
                 r"(?<![\w.])/etc/(profile\.d/[\w.-]+|profile|bash\.bashrc|bashrc|zsh/\w+|"
                 r"zshrc|zshenv|zprofile|environment)\b")
WRITES = LazyRe(r">>|(?<![<>=!-])>(?!=)|\btee\b|appendFile|writeFile|createWriteStream|"
                r"open\([^)]*[\"'][aw]|\.write\(")
CREDENTIALS = LazyRe(r"(?:~/|\$HOME/|\$\{HOME\}/|homedir\(\)[^\n]{0,12}[\"']|[\"'/])"
                     r"(\.ssh/(?:id_\w+|[\w.-]*config|authorized_keys)?|\.aws/credentials|"
                     r"\.git-credentials|\.docker/config\.json|\.kube/config|"
                     r"\.config/gh/hosts\.yml|\.gnupg)|"
                     r"(?:~/|\$HOME/|\$\{HOME\}/|homedir\(\)[^\n]{0,12}[\"'])"
                     r"(\.npmrc|\.netrc|\.pypirc)\b")
# a download kept as a file: saved (SAVED), or unpacked (`curl … | tar -x`)
UNPACKED = LazyRe(r"\b(?:curl|wget)\b[^\n;&]*?\|\s*(?:sudo\s+)?(?:tar|unzip|gunzip|bsdtar)\b")
# ... made a program: given the execute bit, or put in a directory of programs
INSTALLED = LazyRe(r"\bchmod\s+(?:-\w+\s+)*(?:[ugoa]*\+\w*x|0?[0-7]?[1357][0-7]{2})\b|"
                   r"\b(?:mv|cp|install|ln)\b[^\n;&|]*?/(?:s?bin|\.local/bin)(?:/|[\"'\s]|$)")
JS_FETCH = LazyRe(r"\bfetch\s*\(|\bhttps?\.(?:get|request)\s*\(|\baxios\b|\bgot\s*\(|"
                  r"node-fetch|\bundici\b|XMLHttpRequest|\bdownload\w*\s*\(")
JS_WRITE = LazyRe(r"writeFile(?:Sync)?\s*\(|createWriteStream\s*\(|\bpipeline\s*\(")
JS_CHILD = LazyRe(r"child_process|\bexeca\b|\bBun\.spawn|Deno\.Command")
JS_SPAWN = LazyRe(r"\b(?:exec|execSync|execFile|execFileSync|spawn|spawnSync|fork|execa|"
                  r"execaSync|Bun\.spawn|Bun\.spawnSync)\s*\(|new\s+Deno\.Command\s*\(")
JS_EVAL = LazyRe(r"(?<![\w.])eval\s*\(|\bnew\s+Function\s*\(|\bvm\.(?:runIn\w*|Script)\b|"
                 r"\brunInThisContext\b")
JS_REQUIRE = LazyRe(r"\brequire\s*\(\s*[\"'](\.{1,2}/[^\"']+)[\"']|"
                    r"\bimport\s*(?:\(\s*|[^\n;\"']*?\bfrom\s*|)[\"'](\.{1,2}/[^\"']+)[\"']")
PY_FETCH = LazyRe(r"\burlopen\s*\(|\burlretrieve\s*\(|\brequests\.(?:get|post|request)\b|"
                  r"\bhttpx\.|\burllib\.request\b|\burllib3\b")
PY_WRITE = LazyRe(r"open\([^)]*[\"'][wa]b?[\"']|\burlretrieve\s*\(|\.write_bytes\s*\(")
PY_RUN = LazyRe(r"\bsubprocess\.\w+\s*\(|\bos\.(?:system|popen|exec\w*|spawn\w*)\s*\(|"
                r"\b(?:check_call|check_output|call|run|Popen)\s*\(")
PY_EVAL = LazyRe(r"(?<![\w.])(?:exec|eval)\s*\(")
PY_RUNPATH = LazyRe(r"\brunpy\.run_path\s*\(\s*[\"']([^\"']+)[\"']|"
                    r"\bexec\s*\(\s*open\s*\(\s*[\"']([^\"']+)[\"']")
STRING = LazyRe(r"\"((?:[^\"\\\n]|\\.)*)\"|'((?:[^'\\\n]|\\.)*)'|`([^`\\]*)`")


PATH_JOIN = LazyRe(r"\b(?:path\.)?(?:join|resolve)\s*\(([^()]*)\)|"
                   r"\bos\.path\.join\s*\(([^()]*)\)")


def _literals(text: str) -> list[str]:
    return [next(g for g in m.groups() if g is not None) for m in STRING.finditer(text)]


def _strings(line: str) -> str:
    """The string literals of a line, joined by spaces: the command a call builds
    (`spawn('sh', ['./x.sh'])` -> `sh ./x.sh`); a path joined from literals
    (`path.join(__dirname, 'tools', 'x.sh')`, `os.path.join(...)`) is one word."""
    line = PATH_JOIN.compiled.sub(
        lambda m: '"' + "/".join(_literals(m.group(1) or m.group(2) or "")) + '"', line)
    # an options object (`{ stdio: "inherit", cwd: "x" }`, `dict(...)`) is no argument
    line = re.sub(r"\{[^{}]*\}|\b(?:cwd|env|stdio|shell|encoding)\s*=\s*[^,)]*", "", line)
    return " ".join(_literals(line))


def _lines(text: str, lang: str) -> list[tuple[int, str]]:
    """(line number, code) without comments: a shell's `#`, a `//` or `#` line."""
    from ztsa.parsing import continued_lines
    from ztsa.rules.sup.sup005_piped_shell_installer import uncommented

    out = []
    quote = ""
    for lineno, line in continued_lines(text) if lang == "sh" else enumerate(
            text.splitlines(), start=1):
        if lang == "sh":
            line, quote = uncommented(line, quote)
        elif line.lstrip().startswith(("//", "#", "*", "/*")) and not line.startswith("#!"):
            continue
        out.append((lineno, line))
    return out


def _excerpt(line: str) -> str:
    return repr(line.strip()[:80])


def scan(rel: str, text: str, lang: str) -> list[tuple[int, str]]:
    """(line, what) for each hazard in one file's text."""
    from ztsa.rules.sup.sup005_piped_shell_installer import PATTERNS as PIPED

    out: list[tuple[int, str]] = []
    lines = _lines(text, lang)
    code = "\n".join(line for _, line in lines)
    saved: dict[str, int] = {}
    kept: list[int] = []  # lines that unpack a download
    values: dict[str, str] = {}  # a shell file's literal assignments
    for lineno, line in lines:
        if any(p.search(line) for p in PIPED):
            out.append((lineno, f"pipes a download into an interpreter: {_excerpt(line)}"))
        elif EVAL_FETCHED_SH.search(line):
            out.append((lineno, f"runs a fetched string as code: {_excerpt(line)}"))
        for m in SAVED.finditer(line):
            name = posixpath.basename(m.group("file").rstrip(")"))
            if name and name not in ("-", "/dev/null"):
                saved.setdefault(name, lineno)
        for name, at in saved.items():
            if at < lineno and _runs_name(line, name):
                out.append((lineno, f"runs {name!r}, downloaded at line {at}: "
                                    f"{_excerpt(line)}"))
        if lang == "sh":  # `rc=/etc/bash.bashrc` ... `tee -a "$rc"`: the path, named
            assign = ASSIGNED.match(line)
            if assign:
                values[assign.group(1)] = assign.group(2)
            line = _expand(line, values)
        rc = RC_FILE.search(line)
        if rc and (WRITES.search(line) or (lang != "sh" and WRITES.search(code))):
            name = f"~/.{rc.group(1)}" if rc.group(1) else f"/etc/{rc.group(2)}"
            out.append((lineno, f"writes to the shell start-up file {name}"))
        if (saved or kept) and lang == "sh" and INSTALLED.search(line) and not any(
                n == lineno for n, _ in out):
            out.append((lineno, "installs a downloaded program (line "
                                f"{min([*saved.values(), *kept])}): {_excerpt(line)}"))
        if UNPACKED.search(line):
            kept.append(lineno)
        cred = CREDENTIALS.search(line)
        if cred:
            out.append((lineno, "reads the credential path "
                                f"~/{cred.group(1) or cred.group(2)}"))
    if lang == "js" and JS_FETCH.search(code):
        for lineno, line in lines:
            if JS_EVAL.search(line):
                out.append((lineno, f"runs fetched code: {_excerpt(line)}"))
            elif JS_CHILD.search(code) and JS_WRITE.search(code) and JS_SPAWN.search(line):
                out.append((lineno, "downloads a file and runs it through child_process: "
                                    f"{_excerpt(line)}"))
    if lang == "py" and PY_FETCH.search(code):
        for lineno, line in lines:
            if PY_EVAL.search(line):
                out.append((lineno, f"runs fetched code: {_excerpt(line)}"))
            elif PY_WRITE.search(code) and PY_RUN.search(line):
                out.append((lineno, f"downloads a file and runs it: {_excerpt(line)}"))
    return sorted(set(out))


ASSIGNED = LazyRe(r"^\s*(?:local\s+|export\s+|readonly\s+)?([A-Za-z_]\w*)=[\"']?"
                  r"([^\s\"'$`;|&]+)[\"']?\s*$")


def _expand(line: str, values: dict[str, str]) -> str:
    """line with `$name` and `${name}` of literal assignments replaced by their values."""
    if not values or "$" not in line:
        return line
    return re.sub(r"\$\{?([A-Za-z_]\w*)\}?",
                  lambda m: values.get(m.group(1), m.group(0)), line)


def _runs_name(line: str, name: str) -> bool:
    """Does a shell line run the file `name`: through an interpreter, `chmod +x`, or by
    its path?"""
    n = re.escape(name)
    return re.search(rf"(?:\b(?:ba|z|da|k)?sh|\bsource|(?:^|[\s;&|])\.|\bpython[0-9.]*|"
                     rf"\bnode|\bperl|\bruby|\bchmod\s+\S+)\s+[\"']?(?:[^\s\"']*/)?{n}\b|"
                     rf"(?:^\s*|[;&|(]\s*|\b(?:exec|then|do|else|sudo|nohup|env|time)\s+)"
                     rf"[\"']?(?:\.|\$\w+|\$\{{\w+\}}|[^\s\"']*)/{n}\b(?!\.)",
                     line) is not None


def _further(rel: str, text: str, lang: str, cwd: str) -> list[Ref]:
    """What a followed file runs in turn."""
    here = posixpath.dirname(rel)
    out: list[Ref] = []
    for _, line in _lines(text, lang):
        if lang == "sh":
            out += refs(line, cwd)[0]
        elif lang == "js":
            for m in JS_REQUIRE.finditer(line):
                out.append(Ref("js", m.group(1) or m.group(2), here))
            if JS_SPAWN.search(line):
                fork = re.search(r"\bfork\s*\(\s*[\"']([^\"']+)", line)
                if fork:
                    out.append(Ref("js", fork.group(1), cwd))
                out += refs(_strings(line), cwd)[0]
        elif lang == "py":
            for m in PY_RUNPATH.finditer(line):
                out.append(Ref("py", m.group(1) or m.group(2), cwd))
            if PY_RUN.search(line):
                out += refs(_strings(line), cwd)[0]
    return out


def runs_in_turn(rel: str, text: str, given: str, cwd: str) -> list[Ref] | None:
    """The files a shell script runs by path (each line read as refs reads a command,
    from cwd), or None when rel is no shell script (_lang: its runner GIVEN, its suffix,
    its #! line). `ztsa exec` keeps them with the script (ztsa.surfaces)."""
    if _lang(rel, text, given) != "sh":
        return None
    return _further(rel, text, "sh", cwd)


# -- the walk ----------------------------------------------------------------------------
def follow(ctx: Context, command: str, cwd: str = "") -> Followed:
    """The hazards of the repository files `command` runs from `cwd` (workspace-relative
    directory), followed MAX_DEPTH deep. Memoised per run: several rules ask."""
    memo: dict[tuple[str, str], Followed] = ctx.cache.setdefault("follow", {})
    key = (command, cwd)
    if key not in memo:
        memo[key] = _follow(ctx, command, cwd)
    return memo[key]


def package_scripts(ctx: Context, command: str, cwd: str) -> list[tuple[str, str]]:
    """(name, command) of the package.json scripts (of cwd's package.json) that `command`
    runs by name: `npm run X` / `npm test`, `pnpm [run] X`, `yarn [run] X`, `bun run X`,
    with X's `preX` and `postX`, and what those run by name in turn (3 deep)."""
    from ztsa.manifests import MAX_MANIFEST_BYTES
    from ztsa.manifests.npm import parse_package_json
    from ztsa.manifests.project import load

    rel = posixpath.join(cwd, "package.json") if cwd else "package.json"
    if not any(re.search(rf"(?:^|[\s;&|(]){m}\s", command + " ") for m in SCRIPT_RUNNERS) \
            or not ctx.ws_exists(rel):
        return []
    scripts = load(ctx, rel, parse_package_json, MAX_MANIFEST_BYTES).scripts
    out: list[tuple[str, str]] = []
    todo, seen = [(command, 0)], set()
    while todo:
        line, depth = todo.pop(0)
        for segment in _segments(line):
            words = _words(segment)
            while words and (ASSIGN.match(words[0]) or words[0] in PREFIX):
                words = words[1:]
            if len(words) < 2 or posixpath.basename(words[0]) not in SCRIPT_RUNNERS:
                continue
            args = [w for w in words[1:] if not w.startswith("-")]
            if not args:
                continue
            name = args[1] if args[0] in ("run", "run-script") and len(args) > 1 else \
                {"t": "test", "tst": "test"}.get(args[0], args[0])
            if words[0] == "npm" and args[0] not in ("run", "run-script", "test", "t",
                                                     "tst", "start", "stop", "restart"):
                continue
            for each in (f"pre{name}", name, f"post{name}"):
                if each in scripts and each not in seen and depth < MAX_DEPTH:
                    seen.add(each)
                    out.append((each, scripts[each]))
                    todo.append((scripts[each], depth + 1))
    return out


INLINE_FETCH = LazyRe(r"\b(?:curl|wget)\b|\bfetch\s*\(|\bhttps?\.(?:get|request)\b|"
                      r"\burlopen\b|\burlretrieve\b|\brequests\.|\bhttpx\.|https?://")


def _follow(ctx: Context, command: str, cwd: str) -> Followed:
    hazards: list[Hazard] = []
    errors: list[ProbeError] = []
    files: list[str] = []
    commands = [command]
    try:
        commands += [cmd for _name, cmd in package_scripts(ctx, command, cwd)]
    except ProbeError as exc:
        errors.append(exc)
    first: list[Ref] = []
    downloads: list[Hazard] = []
    spawned: list[Hazard] = []
    i = 0
    while i < len(commands):  # the command, its scripts, their `sh -c` programs
        line = commands[i]
        i += 1
        hazards += [Hazard("", n, what, ()) for n, what in scan("", line, "sh")]
        found, inline = _refs(line, cwd)
        first += found
        for lang, program in inline:  # `sh -c '…'`, `node -e '…'`
            if lang == "sh":
                commands.append(program)
            elif lang in ("js", "py") and INLINE_FETCH.search(program):
                hazards.append(Hazard("", 1, "runs an inline program that downloads: "
                                             f"{_excerpt(program)}", ()))
    todo: list[tuple[Ref, tuple[str, ...], str | None]] = [(ref, (), None) for ref in first]
    todo.reverse()
    seen: set[str] = set()
    while todo:
        ref, chain, also = todo.pop()
        try:
            rel = _resolve(ctx, ref, also)
        except ProbeError as exc:
            errors.append(exc)
            continue
        if rel is None or rel in seen:
            continue
        if len(chain) >= MAX_DEPTH:
            errors.append(ProbeError(rel, f"run by {' -> '.join(chain)}, deeper than "
                                          f"{MAX_DEPTH} files: not read"))
            continue
        if len(seen) >= MAX_FILES:
            errors.append(ProbeError(rel, f"more than {MAX_FILES} files run by "
                                          f"{command[:60]!r}: not read"))
            break
        seen.add(rel)
        try:
            text = ctx.ws_text(rel, MAX_BYTES)
        except ProbeError as exc:
            errors.append(ProbeError(rel, f"run by {command[:60]!r}, cannot be judged: "
                                          f"{exc.reason}"))
            continue
        if text is None:
            continue
        files.append(rel)
        lang = _lang(rel, text, ref.lang if ref.lang != "other" else "other")
        here = (*chain, rel)
        hazards += [Hazard(rel, line, what, here) for line, what in scan(rel, text, lang)]
        for n, code in _lines(text, lang):
            if lang == "sh":
                spawned.append(Hazard(rel, n, code, here))
                tool = downloader(code)
                if tool:
                    downloads.append(Hazard(rel, n, f"runs {tool}: {_excerpt(code)}", here))
            elif (lang == "js" and JS_SPAWN.search(code)) or (lang == "py" and
                                                               PY_RUN.search(code)):
                spawned.append(Hazard(rel, n, _strings(code), here))
        more = _further(rel, text, lang, cwd)  # its inline programs: its lines, scanned
        # a script's own relative names are often relative to its directory
        todo += [(r, here, posixpath.dirname(rel)) for r in reversed(more)]
    return Followed(tuple(sorted(set(hazards))), tuple(errors), tuple(files),
                    tuple(dict.fromkeys(commands)), tuple(downloads), tuple(spawned))


# -- judging a command that runs outside the sandbox ----------------------------------------
# a program that fetches, as a command of its own (`curl …`, `VERSION=$(curl …)`)
DOWNLOADERS = ("curl", "wget", "nc", "ncat", "netcat", "aria2c", "fetch")
FETCH_SUBST = LazyRe(r"(?:\$\(|`)\s*(?:curl|wget|nc|ncat|aria2c)\b")
# what `echo` or `printf` prints is text, not a command: `echo "run: curl … | sh"`
# (unless a command substitution in it runs)
# (a `$VAR`, `${VAR}` or make's `$(VAR)` in it is text too)
PRINTED = LazyRe(r"\b(?:echo|printf)\s+(?:-\w+\s+)*"
                 r"(?:\"(?:[^\"\\$`]|\\.|\$(?!\()|\$\(\w+\))*\"|'[^']*')")


def printed_text_removed(line: str) -> str:
    """line without the quoted text `echo` and `printf` print: an install hint is no
    command."""
    return PRINTED.compiled.sub("echo ''", line)


def downloader(command: str) -> str | None:
    """The download tool a command line runs as a command (`curl …`, `$(wget …)`), if
    any; not one it only names (`command -v curl`, `echo "curl …"`)."""
    command = printed_text_removed(command)
    if FETCH_SUBST.search(command):
        return FETCH_SUBST.search(command).group(0).lstrip("$(` ")  # type: ignore[union-attr]
    for segment in _segments(command):
        words = _words(segment)
        while words and (ASSIGN.match(words[0]) or words[0] in PREFIX):
            words = words[1:]
        if words and posixpath.basename(words[0]) in DOWNLOADERS:
            return posixpath.basename(words[0])
    return None


def _package(spec: str) -> str:
    """`@scope/name@1` -> `@scope/name`, `name@latest` -> `name`."""
    return "@" + spec[1:].partition("@")[0] if spec.startswith("@") else spec.partition("@")[0]


def _dependencies(ctx: Context, cwd: str) -> set[str]:
    """The packages cwd's package.json (or the root's) depends on: `npx NAME` of one runs
    the installed copy, which the lockfile pins."""
    from ztsa.manifests import MAX_MANIFEST_BYTES
    from ztsa.manifests.npm import parse_package_json
    from ztsa.manifests.project import load

    names: set[str] = set()
    for d in dict.fromkeys([cwd, ""]):
        rel = posixpath.join(d, "package.json") if d else "package.json"
        try:
            if ctx.ws_exists(rel):
                names |= {n for _f, n, _s in load(ctx, rel, parse_package_json,
                                                   MAX_MANIFEST_BYTES).deps()}
        except ProbeError:
            continue  # then nothing is known installed: every runner is judged
    return names


def _repository_packages(ctx: Context) -> dict[str, set[str]]:
    """name -> the commands (`bin`) of each package.json of the repository, read once a
    run and only when a runner's package is no dependency; one that cannot be read adds
    nothing (then what it would provide is judged)."""
    cached = ctx.cache.get("follow-packages")
    if isinstance(cached, dict):
        return cached
    from ztsa.manifests import MAX_MANIFEST_BYTES
    from ztsa.manifests.npm import parse_package_json
    from ztsa.manifests.project import load, named

    out: dict[str, set[str]] = {}
    for rel in named(ctx, "package.json"):
        try:
            data = load(ctx, rel, parse_package_json, MAX_MANIFEST_BYTES).data
        except ProbeError:
            continue
        name, bins = data.get("name"), data.get("bin")
        if not isinstance(name, str) or not name:
            continue
        commands = {c for c in bins if isinstance(c, str)} if isinstance(bins, dict) else \
            {name.rpartition("/")[2]} if isinstance(bins, str) else set()
        out.setdefault(name, set()).update(commands)
    ctx.cache["follow-packages"] = out
    return out


def _provided(ctx: Context, deps: set[str], spec: str) -> bool:
    """`npx NAME` (no version) of a command that a dependency provides, by the `bin` of
    its package.json in the repository (`npx playwright` beside `@playwright/test`, in
    Playwright's own repository), where NAME is also a package of the repository: the
    installed copy runs, and before an install npx fetches the project's own package,
    not a name anyone else may hold."""
    if not deps or _package(spec) != spec:
        return False
    packages = _repository_packages(ctx)
    return spec in packages and any(spec in packages.get(d, ()) for d in deps)


def judge(ctx: Context, f: Findings, what: str, cmd: str, cwd: str, rel: str | None,
          line: int | None) -> bool:
    """A command that runs outside the sandbox (a git hook, an agent hook, a status line,
    a worktree setup, `.envrc`), judged by what it runs: a download piped or saved and
    run, a fetched string run as code, a download tool run as a command, a package
    fetched at no fixed version, a write to a shell start-up file or a read of a
    credential path (in the command, its `sh -c` programs, the package.json scripts it
    runs by name, or the repository files those run: ztsa.follow) fails, naming file and
    line; a file that cannot be judged is unknown; the rest (a formatter, a linter, a
    test run, a tool started by name) is listed as advice. True when it failed."""
    from ztsa.rules.sup.sup017_install_hook_unpinned_runner import RUNNER, unpinned_runner

    before = len(f.found)
    done = follow(ctx, cmd, cwd)
    for h in done.hazards:
        if h.path:
            f.fail(describe(h, what), h.path, h.line)
        else:
            f.fail(f"{what}: {cmd[:80]!r}, which {h.what}", rel, line)
    for each in done.commands if not any(not h.path for h in done.hazards) else ():
        tool = downloader(each)
        if tool:
            f.fail(f"{what}: {cmd[:80]!r}, which runs {tool}: a download outside the "
                   "sandbox" + (f" (in {each[:60]!r})" if each != cmd else ""), rel, line)
            break
    said = {(h.path, h.line) for h in done.hazards}
    for h in [d for d in done.downloads if (d.path, d.line) not in said][:1]:
        # one is enough to say it: the file downloads
        f.fail(describe(h, what) + ": a download outside the sandbox", h.path, h.line)
    deps = _dependencies(ctx, cwd)
    for each in done.commands:
        runner = next((r for m in RUNNER.finditer(each) if _package(m.group("pkg")) not in deps
                       and not _provided(ctx, deps, m.group("pkg"))
                       for r in [unpinned_runner(m.group(0))] if r), None)
        if runner:
            f.fail(f"{what}: {cmd[:80]!r}, which runs {runner}, a package fetched at no "
                   "fixed version", rel, line)
            break
    for exc in done.errors:
        f.error(exc)
    failed = len(f.found) > before
    if not failed and not done.errors:
        f.advise(f"{what}: {cmd[:80]!r}" + (f" ({', '.join(done.files[:3])} read: nothing "
                                              "downloaded and run)" if done.files else ""),
                 rel, line)
    return failed
