"""Host credentials readable.

## What it checks
Credential files in the home directory (`$HOME`) that the process can read:
`~/.ssh/id_*` and any other private key in `~/.ssh`, `~/.aws/credentials`,
`~/.kube/config`, gcloud credentials (`~/.config/gcloud/credentials.db`,
`application_default_credentials.json`, `access_tokens.db`, `legacy_credentials/`),
`~/.azure/` token caches, `~/.docker/config.json` with `auths` entries,
`~/.git-credentials`, `~/.netrc`, `~/.pypirc`, `~/.npmrc` with tokens,
`~/.cargo/credentials(.toml)`, `~/.config/gh/hosts.yml`, `~/.vault-token`,
`~/.claude/.credentials.json` and `~/.codex/auth.json`. Also a host home directory
bind-mounted into the sandbox (from `/proc/self/mountinfo`).

## Why it matters
Untrusted code that can read these files can push to your repositories, publish
packages under your name, and reach your cloud accounts and clusters.

## How to fix
Run the agent with a separate, empty home (`HOME=$(mktemp -d)`, `bwrap --tmpfs
$HOME`, or `ztsa exec`), and do not bind-mount your real home into sandboxes. Move
long-lived credentials to a credential helper or agent that the sandbox cannot reach.
"""

from __future__ import annotations

import os
import re

from ztsa.context import Context
from ztsa.host import ProbeError
from ztsa.lazy import LazyRe
from ztsa.model import Evidence, Nature, Outcome, Severity
from ztsa.registry import rule

PLAIN = (
    ".aws/credentials", ".kube/config", ".config/gcloud/credentials.db",
    ".config/gcloud/application_default_credentials.json", ".config/gcloud/access_tokens.db",
    ".config/gcloud/legacy_credentials", ".azure/msal_token_cache.json",
    ".azure/accessTokens.json", ".azure/service_principal_entries.json",
    ".git-credentials", ".netrc", ".pypirc", ".cargo/credentials",
    ".cargo/credentials.toml", ".config/gh/hosts.yml", ".vault-token",
    ".claude/.credentials.json", ".codex/auth.json",
)
NPM_TOKEN = LazyRe(r"(_authToken|_auth|_password)\s*=\s*(?!\$\{)\S")
PRIVATE_KEY = b"PRIVATE KEY"


@rule(id="FS002", slug="host-credentials-readable", title="Host credentials readable",
      severity=Severity.CRITICAL,
      nature=Nature.ENV_SECRETS, actions="-/B/B")
def check(ctx: Context) -> Outcome:
    host = ctx.host
    home = host.home
    if home is None:
        return Outcome.unknown("HOME is not set to an absolute path: cannot find credentials")
    found: list[Evidence] = []
    errors: list[str] = []

    def readable(rel: str) -> bool:
        p = f"{home}/{rel}"
        try:
            return bool(host.access(p, os.R_OK))
        except ProbeError as exc:
            errors.append(str(exc))
            return False

    try:
        ssh = host.listdir(f"{home}/.ssh") or []
    except ProbeError as exc:
        errors.append(str(exc))
        ssh = []
    for name in ssh:
        rel = f".ssh/{name}"
        if name.endswith(".pub") or name in ("known_hosts", "config", "authorized_keys"):
            continue
        if not readable(rel):
            continue
        if name.startswith("id_"):
            found.append(Evidence(f"SSH key ~/{rel} is readable", path=f"{home}/{rel}"))
            continue
        try:
            head = host.read_bytes(f"{home}/{rel}", limit=1 << 20) or b""
        except ProbeError:
            continue  # sockets, directories: not key files
        if PRIVATE_KEY in head[:200]:
            found.append(Evidence(f"private key ~/{rel} is readable", path=f"{home}/{rel}"))
    for rel in PLAIN:
        if readable(rel):
            found.append(Evidence(f"~/{rel} is readable", path=f"{home}/{rel}"))
    if readable(".docker/config.json"):
        try:
            text = host.read_text(f"{home}/.docker/config.json") or ""
            if re.search(r'"auths"\s*:\s*\{\s*"', text) and '"auth"' in text:
                found.append(Evidence("~/.docker/config.json holds registry auths",
                                      path=f"{home}/.docker/config.json"))
        except ProbeError as exc:
            errors.append(str(exc))
    if readable(".npmrc"):
        try:
            text = host.read_text(f"{home}/.npmrc") or ""
            if NPM_TOKEN.search(text):
                found.append(Evidence("~/.npmrc holds a registry token",
                                      path=f"{home}/.npmrc"))
        except ProbeError as exc:
            errors.append(str(exc))
    mounts = host.mounts()
    if mounts is None:
        errors.append("/proc/self/mountinfo is absent")
    for m in mounts or []:
        if (m.mount_point == home or m.mount_point.startswith(("/home/", "/root"))) and \
                re.match(r"^/(home|root)(/|$)", m.root):
            found.append(Evidence(f"host home {m.root} is bind-mounted at {m.mount_point}",
                                  path="/proc/self/mountinfo"))
    if found:
        return Outcome.failed(f"{len(found)} host credential(s) readable", found)
    if errors:
        return Outcome.unknown("could not check every credential path",
                               [Evidence(e) for e in errors])
    return Outcome.passed(f"no credential file readable under {home}")
