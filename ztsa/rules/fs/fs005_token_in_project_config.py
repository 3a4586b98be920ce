"""Auth token in project package-manager config.

## What it checks
Project `.npmrc`, `.yarnrc`, `.yarnrc.yml`, `.pypirc` and `.cargo/credentials(.toml)`
files anywhere in the workspace (outside `node_modules`, `.git`, `target` and
virtual environments) for `_authToken=`, `_auth=`, `_password=`, `npmAuthToken:`,
`npmAuthIdent:`, `password` in `.pypirc`, `token` in Cargo credentials, and literal
token shapes (`npm_…`, `ghp_…`, …). A `${VAR}` placeholder passes. The report names
file and line; the value is never shown.

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
from ztsa.model import Outcome, Severity
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


@rule(id="FS005", slug="token-in-project-config", severity=Severity.HIGH,
      title="Auth token in project package-manager config", actions="B/B/B")
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
    return f.outcome("no token in project package-manager config",
                     f"{len(f.found)} credential(s) in project config")
