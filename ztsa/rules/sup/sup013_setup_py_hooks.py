"""setup.py install hooks.

## What it checks
Every `setup.py`, parsed with Python's `ast` and never executed: a `cmdclass` that
overrides `install`, `develop`, `egg_info`, `build_py`, `bdist_wheel` or `sdist`;
classes that subclass `setuptools.command.*` (or `distutils.command.*`) commands; and,
at module level, calls to `subprocess`, `os.system`/`os.popen`/`os.exec*`, `exec`,
`eval`, `compile`, `__import__`, `urllib`, `requests`, `socket` and base64 decoding.
The build hooks of the other backends, which run at build time the same way:
hatch's (`hatch_build.py`, and every file a `[tool.hatch.build.hooks.custom]` or
`[tool.hatch.build.targets.*.hooks.custom]` table names by `path`) and pdm-backend's
(`pdm_build.py`, or the file `[tool.pdm.build] custom-hook` names), and hatch's metadata
hooks (`[tool.hatch.metadata.hooks.custom]`): any of the calls above anywhere in the
file, since the whole file is the hook, however imported (`from subprocess import
run`). Each finding says what the call does where its arguments tell: runs a download
as code, runs a command, downloads. A hook whose only such calls download, and that
names no file of code (`.py`, `.pth`, `.so`, an archive, ...), fetches data (a CA
bundle, a schema) at build time: advisory. Beside a `pyproject.toml` whose backend is
scikit-build-core or meson-python, the build files it runs: `CMakeLists.txt` downloads
(`file(DOWNLOAD)`, `FetchContent_Declare` or `ExternalProject_Add` with a URL or git
repository, an `execute_process`, `add_custom_command` or `add_custom_target` whose
command fetches with curl, wget or git, a shell's `-c` string included) and
`meson.build`'s `run_command` or `custom_target` that does. A file that does not parse
is unknown.
What is found only in test data or in a project nothing of the root installs, builds
or names (ztsa.manifests.scope.in_play) is reported as advisory.

## Why it matters
`pip install` of a source distribution runs `setup.py`, or the backend's build hooks.
Custom commands, hooks and module-level code there execute on the installing machine,
before anything can be reviewed; base64 and exec are how payloads hide, and a download
at build time builds whatever the server sends that day.

## How to fix
Move to a declarative build (`pyproject.toml` with a standard backend), drop custom
install commands, and never run network or shell code from `setup.py`.
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.lazy import LazyRe
from ztsa.manifests import MAX_MANIFEST_BYTES
from ztsa.manifests.project import load, named
from ztsa.manifests.scope import in_play
from ztsa.model import Nature, Outcome, Severity
from ztsa.parsing import ParseError
from ztsa.registry import rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ast

HOOKED = {"install", "develop", "egg_info", "build_py", "bdist_wheel", "sdist"}
BAD_CALLS = {
    "exec", "eval", "compile", "__import__",
    "os.system", "os.popen", "os.execv", "os.execve", "os.execl", "os.execlp", "os.execvp",
    "os.spawnl", "os.spawnv", "os.startfile",
    "subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
    "subprocess.Popen", "subprocess.getoutput", "subprocess.getstatusoutput",
    "urllib.request.urlopen", "urllib.request.urlretrieve", "urlopen", "urlretrieve",
    "requests.get", "requests.post", "requests.request",
    "socket.socket", "socket.create_connection",
    "base64.b64decode", "base64.b32decode", "base64.b16decode", "base64.a85decode",
    "base64.decodebytes", "b64decode", "codecs.decode",
}


def dotted(node: ast.AST) -> str:
    import ast

    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else node.attr
    return ""


def _aliases(tree: ast.AST) -> dict[str, str]:
    """Local names of imported modules and functions, as their dotted names:
    `from subprocess import run` (run -> subprocess.run), `import subprocess as sp`."""
    import ast

    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    out[a.asname] = a.name
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def call_name(node: ast.Call, aliases: dict[str, str]) -> str:
    """The dotted name a call reaches, through the file's imports."""
    name = dotted(node.func)
    head, dot, rest = name.partition(".")
    return aliases[head] + dot + rest if head in aliases else name


# names of files of code: a hook that names one may write what it downloads as code
CODE_SUFFIXES = (".py", ".pth", ".pyc", ".so", ".dylib", ".dll", ".exe", ".sh", ".js",
                 ".whl", ".tar.gz", ".tgz", ".zip", ".egg")
SHELLS = ("os.system", "os.popen", "subprocess.", "os.exec", "os.spawn")
NETWORK = ("urllib.", "urlopen", "urlretrieve", "requests.", "socket.")


def what_it_does(node: ast.Call, name: str) -> str:
    """What the call does, as far as its literal arguments tell: runs a download as code
    (SUP005's forms), runs a shell command, or downloads."""
    import ast

    from ztsa.rules.sup.sup005_piped_shell_installer import PATTERNS

    words = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant)
             and isinstance(n.value, str)]
    text = " ".join(words)
    if any(p.search(text) for p in PATTERNS):
        return f": runs a download as code ({text[:60]!r})"
    if name.startswith(SHELLS):
        return f": runs a command ({text[:60]!r})" if text else ": runs a command"
    if name.startswith(NETWORK) or any(w.startswith(("http://", "https://")) for w in words):
        return ": downloads"
    return ""


def _module_level(tree: ast.Module) -> list[ast.AST]:
    """Every node not inside a function or class body."""
    import ast

    out: list[ast.AST] = []
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        out.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return out


def audit_hook(f: Findings, rel: str, text: str, backend: str) -> None:
    """A build hook file: every bad call in it, at any depth (the file is the hook)."""
    import ast

    try:
        tree = ast.parse(text, filename=rel)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        f.error(ParseError(rel, f"not valid Python: {exc}"))
        return
    aliases = _aliases(tree)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    bad = [(node, call_name(node, aliases)) for node in sorted(
        calls, key=lambda n: (n.lineno, n.col_offset))]
    bad = [(node, name) for node, name in bad if name in BAD_CALLS]
    # awslabs/mcp's hook fetches a CA bundle over https into the wheel: a download of
    # data, with nothing in the file that runs code or writes a file of code, is advice
    data_only = all(name.startswith(NETWORK) for _, name in bad) and not any(
        isinstance(n, ast.Constant) and isinstance(n.value, str)
        and n.value.lower().endswith(CODE_SUFFIXES) for n in ast.walk(tree))
    for node, name in bad:
        if data_only:
            f.advise(f"the {backend} build hook calls {name}(): downloads data at build "
                     "time, and nothing in the hook runs code (advisory)", path=rel,
                     line=node.lineno)
        else:
            f.fail(f"the {backend} build hook calls {name}(){what_it_does(node, name)}",
                   path=rel, line=node.lineno)


# a command that fetches: curl, wget, or git fetching, wherever in the command (a shell's
# -c string included)
FETCH = r"\b(?:curl|wget|git\s+(?:clone|fetch|pull|submodule|archive))\b"
CMAKE_DOWNLOAD = LazyRe(
    r"(?im)^\s*(file\s*\(\s*DOWNLOAD\b|FetchContent_Declare\s*\((?=[^)]*\b(URL|GIT_REPOSITORY)\b)"
    r"|ExternalProject_Add\s*\((?=[^)]*\b(URL|GIT_REPOSITORY)\b)"
    r"|(?:execute_process|add_custom_command|add_custom_target)\s*\((?=[^)]*\bCOMMAND\b"
    r"[^)]*" + FETCH + r"))")
MESON_DOWNLOAD = LazyRe(r"(?m)^[^#\n]*\b(?:run_command|custom_target)\s*\([^\n]*" + FETCH)


def audit_native_build(f: Findings, rel: str, text: str) -> None:
    pattern = MESON_DOWNLOAD if rel.endswith("meson.build") else CMAKE_DOWNLOAD
    for m in pattern.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        what = " ".join(m.group(0).split())[:60]
        f.fail(f"the build downloads at build time: {what}", path=rel, line=line)


def _hooks(ctx: Context, f: Findings) -> None:
    """The hatch and pdm build hooks and the native build files of the pyproject.toml
    files whose backend runs them."""
    from ztsa.manifests.python import parse_pyproject

    for rel in named(ctx, "pyproject.toml"):
        pp = f.attempt(load, ctx, rel, parse_pyproject, MAX_MANIFEST_BYTES)
        if pp is None:
            continue
        base = rel.rsplit("/", 1)[0] + "/" if "/" in rel else ""
        backend = str((pp.table("build-system") or {}).get("build-backend") or "")
        hooks: dict[str, str] = {}
        hatch = pp.table("tool", "hatch", "build")
        metadata = pp.table("tool", "hatch", "metadata")
        if backend.startswith("hatchling") or isinstance(hatch, dict):
            # build hooks, and metadata hooks (they run at every build too)
            tables = [hatch.get("hooks") if isinstance(hatch, dict) else None,
                      metadata.get("hooks") if isinstance(metadata, dict) else None]
            targets = hatch.get("targets") if isinstance(hatch, dict) else None
            tables += [t.get("hooks") for t in (targets or {}).values() if isinstance(t, dict)]
            for t in tables:
                custom = t.get("custom") if isinstance(t, dict) else None
                if isinstance(custom, dict):
                    hooks[str(custom.get("path") or "hatch_build.py")] = "hatch"
        pdm = pp.table("tool", "pdm", "build")
        if backend.startswith("pdm.backend"):
            hook = pdm.get("custom-hook") if isinstance(pdm, dict) else None
            hooks[str(hook or "pdm_build.py")] = "pdm"
        for path, name in hooks.items():
            target = base + path.removeprefix("./")
            text = f.attempt(ctx.ws_text, target, MAX_MANIFEST_BYTES)
            if text is not None:
                audit_hook(f, target, text, name)
        if backend.startswith(("scikit_build_core", "mesonpy")):
            for build in ("CMakeLists.txt", "meson.build"):
                text = f.attempt(ctx.ws_text, base + build, MAX_MANIFEST_BYTES)
                if text is not None:
                    audit_native_build(f, base + build, text)


def audit(f: Findings, rel: str, text: str) -> None:
    import ast  # only when there is a setup.py: start-up cost matters

    try:
        tree = ast.parse(text, filename=rel)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        f.error(ParseError(rel, f"not valid Python: {exc}"))
        return
    command_names: dict[str, str] = {}  # local name -> command module
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and \
                node.module.startswith(("setuptools.command", "distutils.command")):
            for alias in node.names:
                command_names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                name = dotted(base)
                if name in command_names or name.startswith(
                        ("setuptools.command.", "distutils.command.")):
                    f.fail(f"class {node.name} subclasses the {name} command", path=rel,
                           line=node.lineno)
        if isinstance(node, ast.keyword) and node.arg == "cmdclass" and \
                isinstance(node.value, ast.Dict):
            for key in node.value.keys:
                if isinstance(key, ast.Constant) and key.value in HOOKED:
                    f.fail(f"cmdclass overrides {key.value!r}", path=rel, line=key.lineno)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and any(
                dotted(t).endswith("cmdclass") for t in node.targets):
            for key in node.value.keys:
                if isinstance(key, ast.Constant) and key.value in HOOKED:
                    f.fail(f"cmdclass overrides {key.value!r}", path=rel, line=key.lineno)
    aliases = _aliases(tree)
    calls = [n for n in _module_level(tree) if isinstance(n, ast.Call)]
    for node in sorted(calls, key=lambda n: (n.lineno, n.col_offset)):
        name = call_name(node, aliases)
        if name in BAD_CALLS:
            f.fail(f"module-level call to {name}(){what_it_does(node, name)}", path=rel,
                   line=node.lineno)


@rule(id="SUP013", slug="setup-py-hooks", title="setup.py install hooks",
      severity=Severity.HIGH,
      nature=Nature.ATTACK, actions="W/W/B")
def check(ctx: Context) -> Outcome:
    f = Findings()
    for rel in named(ctx, "setup.py"):
        text = f.attempt(ctx.ws_text, rel, MAX_MANIFEST_BYTES)
        if text is not None:
            audit(f, rel, text)
    _hooks(ctx, f)
    return f.outcome("no setup.py install hook, build hook or module-level execution",
                     f"{len(f.found)} build-time hook(s)",
                     scope=lambda rel: in_play(ctx, rel))
