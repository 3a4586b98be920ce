"""Auth token in project package-manager config.

## What it checks
Project `.npmrc`, `.yarnrc`, `.yarnrc.yml`, `.pypirc` and `.cargo/credentials(.toml)`
files anywhere in the workspace (outside `node_modules`, `.git`, `target` and
virtual environments) for `_authToken=`, `_auth=`, `_password=`, `npmAuthToken:`,
`npmAuthIdent:`, `password` in `.pypirc`, `token` in Cargo credentials, and literal
token shapes (`npm_…`, `ghp_…`, …). And the project MCP configurations (`.mcp.json`,
`.cursor/mcp.json`, `.vscode/mcp.json` and the `mcp` setting of `.vscode/settings.json`,
`.gemini/settings.json`, `.roo/mcp.json`, `.kiro/settings/mcp.json`, `.amazonq/mcp.json`,
`.codex/config.toml`):
a server's `env`, `headers` (`http_headers`) and `args` holding a token shape, or a
literal value of a secret-named variable (`*_TOKEN`, `*_API_KEY`, ...) or an
`Authorization` header. A `${VAR}` placeholder (`${env:VAR}`, `$VAR`) passes, and so
do example values (`your-key-here`, `<token>`, `xxxx`). The report names file and
line; the value is never shown. What is found only in test data (a scanner's inputs, a
fixture project's `.npmrc` for a loopback registry) or a project nothing of the root
installs, builds or names is reported as advisory (ztsa.manifests.scope).

## Why it matters
A committed token is readable by every process that can read the repository and by
everyone who can clone it. It also gives untrusted code the right to publish.

## How to fix
Remove the token from the file and rotate it. Keep the file with a placeholder
(`//registry.npmjs.org/:_authToken=${NPM_TOKEN}`) and provide the variable only to the
step that publishes.
"""

from __future__ import annotations

import re

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.lazy import LazyRe
from ztsa.manifests.scope import in_play
from ztsa.model import Nature, Outcome, Severity
from ztsa.registry import rule
from ztsa.secrets import token_kind
from ztsa.walk import find_files

NAMES = {".npmrc", ".yarnrc", ".yarnrc.yml", ".pypirc", "credentials", "credentials.toml"}
KEY = LazyRe(
    r"""(?:^|[\s:])(_authToken|_auth|_password|npmAuthToken|npmAuthIdent)\s*[=:]\s*["']?([^\s"']*)""")
PYPI = LazyRe(r"^\s*password\s*[=:]\s*(\S*)")
CARGO = LazyRe(r"""^\s*token\s*=\s*["']?([^"'\s]*)""")


def _placeholder(value: str) -> bool:
    return value == "" or bool(re.fullmatch(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?", value))


EXAMPLE = LazyRe(r"(?i)your|example|xxxx|changeme|placeholder|redacted|dummy|<[^>]*>|\.\.\.|"
                 r"^\$\{(env:|input:)?[A-Za-z_][A-Za-z0-9_.-]*\}$|^\$[A-Za-z_]\w*$")


def _literal_secret(value: str) -> bool:
    """A value that looks like a real secret rather than a placeholder or an example."""
    v = value.strip().removeprefix("Bearer ").removeprefix("bearer ").removeprefix("token ")
    return (len(v) >= 12 and not any(c.isspace() for c in v) and not EXAMPLE.search(v)
            and any(c.isdigit() for c in v) and any(c.isalpha() for c in v))


def _mcp(ctx: Context, f: Findings) -> None:
    from ztsa.agentfiles import MCP_JSON, get, json_file, toml_file
    from ztsa.parsing import line_of
    from ztsa.secrets import NOT_SECRET_NAMES, SECRET_NAME

    files: list[tuple[str, object, str]] = []
    for rel, keys in MCP_JSON:
        loaded = f.attempt(json_file, ctx, rel)
        if loaded is not None and isinstance(loaded[0], dict):
            files.append((rel, get(loaded[0], *keys), loaded[1]))
    loaded_toml = f.attempt(toml_file, ctx, ".codex/config.toml")
    if loaded_toml is not None:
        files.append((".codex/config.toml", loaded_toml[0].get("mcp_servers"), loaded_toml[1]))
    for rel, servers, text in files:
        for name, server in servers.items() if isinstance(servers, dict) else ():
            if not isinstance(server, dict):
                continue
            values: list[tuple[str, str]] = []
            for key in ("env", "headers", "http_headers"):
                table = server.get(key)
                values += [(str(k), v) for k, v in (table.items() if isinstance(
                    table, dict) else ()) if isinstance(v, str)]
            values += [("args", a) for a in server.get("args") or [] if isinstance(a, str)]
            for var, value in values:
                kind = token_kind(value)
                named = var != "args" and (SECRET_NAME.search(var) or var.lower() in (
                    "authorization", "x-api-key")) and var not in NOT_SECRET_NAMES
                if kind or (named and _literal_secret(value)):
                    what = kind or f"a literal {var}"
                    f.fail(f"{what} in MCP server {name!r} of {rel} (redacted)", path=rel,
                           line=line_of(text, value[:40]) or line_of(text, f'"{name}"'))


@rule(id="FS005", slug="token-in-project-config", severity=Severity.HIGH,
      title="Auth token in project package-manager config",
      nature=Nature.CREDENTIAL, actions="B/B/B")
def check(ctx: Context) -> Outcome:
    f = Findings()
    for rel in find_files(ctx, lambda name: name in NAMES):
        base = rel.rsplit("/", 1)[-1]
        if base.startswith("credentials") and not rel.endswith(
                (".cargo/credentials", ".cargo/credentials.toml")):
            continue
        text = f.attempt(ctx.ws_text, rel, 1 << 20) or ""
        for lineno, line in enumerate(text.splitlines(), start=1):
            what = None
            m = KEY.search(line)
            if m and not _placeholder(m.group(2)):
                what = m.group(1)
            elif base == ".pypirc" and (p := PYPI.match(line)) and not _placeholder(p.group(1)):
                what = "password"
            elif base.startswith("credentials") and (c := CARGO.match(line)) and \
                    not _placeholder(c.group(1)):
                what = "token"
            elif kind := token_kind(line):
                what = kind
            if what:
                f.fail(f"{what} value in {rel} (redacted)", path=rel, line=lineno)
    _mcp(ctx, f)
    return f.outcome("no token in project package-manager config",
                     f"{len(f.found)} credential(s) in project config",
                     scope=lambda rel: in_play(ctx, rel))
