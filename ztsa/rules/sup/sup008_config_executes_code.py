"""Package-manager config executes repo code.

## What it checks
Project configuration that makes the package manager run a program of the
repository's choosing: `.npmrc` `script-shell`, `node-options` (unless it holds only
flags that load nothing: `--no-warnings`, `--max-old-space-size=N`,
`--enable-source-maps`, ...), `shell` and `git`;
`.yarnrc.yml` `yarnPath` (unless its file is a released Yarn, byte for byte, by
SHA-256) and `plugins` (in YAML, or in the old syntax Yarn reads a file headed `# yarn
lockfile v1` with), and a classic `.yarnrc`'s `yarn-path`; a `.pnpmfile.cjs` or `.pnpmfile.mjs`;
`.cargo/config.toml` `rustc-wrapper`, `rustc-workspace-wrapper`, a `[target.*]`
`runner` or `linker` that is a program of the checkout (a relative path) or a shell or
interpreter (a bare toolchain name, `aarch64-linux-gnu-gcc`, is the system's), and
`[env]` variables that choose a program or load code (`LD_PRELOAD`, `RUSTC_WRAPPER`,
`RUSTFLAGS`, `CC`, `PATH`, `*_RUNNER`, ...; not plain values such as a feature flag).
What is found only in test data or in a project nothing of the root installs, builds
or names (ztsa.manifests.scope.in_play) is reported as advisory.

## Why it matters
These run with every install or build, before and around any dependency code:
`yarnPath` replaces Yarn itself with a file from the repository, a pnpmfile hooks
every resolution, a rustc wrapper sees and can rewrite every compilation.

## How to fix
Remove these keys from the repository's configuration, or review the programs they
name like any other code (`yarn set version` writes a released Yarn, which passes).
"""

from __future__ import annotations

import posixpath
import re

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.lazy import LazyRe
from ztsa.manifests import MAX_MANIFEST_BYTES
from ztsa.manifests.common import load_yaml
from ztsa.manifests.project import load, matching, named
from ztsa.manifests.scope import in_play
from ztsa.model import Nature, Outcome, Severity
from ztsa.parsing import line_of, load_toml, parse_ini_pairs
from ztsa.registry import rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NPMRC_KEYS = {"script-shell", "node-options", "shell", "git"}
SHELLS = {"sh", "bash", "zsh", "dash", "fish", "python", "python3", "node", "perl", "ruby",
          "env", "sudo"}
# [env] names that choose a program or load code into what cargo runs
CODE_VARS = {"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "RUSTC",
             "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "RUSTDOC", "RUSTFLAGS",
             "CARGO_ENCODED_RUSTFLAGS", "RUSTDOCFLAGS", "CC", "CXX", "AR", "LD", "LINKER",
             "PATH", "PYO3_PYTHON", "PYTHON_SYS_EXECUTABLE", "NODE_OPTIONS", "BASH_ENV", "ENV",
             "PROTOC", "CMAKE", "PKG_CONFIG", "CARGO_BUILD_RUSTC_WRAPPER"}


# node flags that change warnings, limits, diagnostics or defaults and load nothing;
# any other (`--require`, `--import`, `--loader`, `--inspect`, `--openssl-config`,
# `--env-file`, one this list does not know) is judged a program of the repository's
INERT_NODE_FLAGS = LazyRe(
    r"^--(?:no-warnings|no-deprecation|trace-warnings|trace-deprecation|throw-deprecation|"
    r"pending-deprecation|trace-uncaught|enable-source-maps|no-experimental-fetch|"
    r"experimental-vm-modules|openssl-legacy-provider|use-openssl-ca|use-bundled-ca|"
    r"no-network-family-autoselection|report-on-fatalerror|"
    r"disable-warning=[\w-]+|max-old-space-size=\d+|max-semi-space-size=\d+|"
    r"stack-size=\d+|max-http-header-size=\d+|unhandled-rejections=[\w-]+|"
    r"dns-result-order=[\w-]+|heapsnapshot-near-heap-limit=\d+)$")


def _inert_node_options(value: str) -> bool:
    """Do `.npmrc`'s node-options hold only flags that load no code (INERT_NODE_FLAGS)?"""
    words = re.split(r"[#;]", value, maxsplit=1)[0].strip().strip("\"'").split()
    return bool(words) and all(INERT_NODE_FLAGS.match(w) for w in words)


def _repo_program(value: object) -> bool:
    """A runner or linker the checkout provides: a relative path, or a shell or an
    interpreter (which then runs whatever it is given)."""
    first = value[0] if isinstance(value, list) and value else value
    words = str(first).split()
    prog = words[0] if words else ""
    return ("/" in prog and not prog.startswith("/")) or prog.startswith(".") or \
        posixpath.basename(prog) in SHELLS


def _cargo(ctx: Context, f: Findings, rel: str) -> None:
    doc: Any = f.attempt(load, ctx, rel, load_toml, MAX_MANIFEST_BYTES)
    if doc is None:
        return
    text = ctx.ws_text(rel, MAX_MANIFEST_BYTES) or ""
    build = doc.get("build") or {}
    for key in ("rustc-wrapper", "rustc-workspace-wrapper", "rustc"):
        if isinstance(build, dict) and build.get(key):
            f.fail(f"[build] {key} = {str(build[key])[:80]}", path=rel, line=line_of(text, key))
    targets = doc.get("target") or {}
    for triple, cfg in targets.items() if isinstance(targets, dict) else []:
        for key in ("runner", "linker"):
            if isinstance(cfg, dict) and cfg.get(key) and _repo_program(cfg[key]):
                f.fail(f"[target.{triple}] {key} = {str(cfg[key])[:80]}", path=rel,
                       line=line_of(text, key))
    env = doc.get("env")
    risky = [str(k) for k in env if str(k) in CODE_VARS or str(k).endswith("_RUNNER")
             or str(k).endswith("_LINKER")] if isinstance(env, dict) else []
    if risky:
        f.fail("[env] sets " + ", ".join(risky)[:100], path=rel, line=line_of(text, "[env]"))


LEGACY_SYML = LazyRe(r"^(?:#.*\r?\n)*?#\s+yarn\s+lockfile\s+v1\r?\n")
SYML_LINE = LazyRe(r'^"?([A-Za-z0-9_.@/-]+)"?(?:\s*:\s*|\s+)"?(.*?)"?\s*$')


def _legacy_syml(text: str) -> dict[str, str]:
    """The top-level `key value` / `key "value"` lines of Yarn's old configuration syntax
    (classic `.yarnrc`, a `.yarnrc.yml` headed `# yarn lockfile v1`)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if not line or line[0] in " \t#":
            continue
        m = SYML_LINE.match(line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def _released_yarn(ctx: Context, rel: str, yarn_path: str) -> bool:
    """Is the file yarnPath names (beside the .yarnrc.yml rel) a released Yarn, byte for
    byte (ztsa.manifests.yarn_releases)?"""
    import hashlib

    from ztsa.manifests.yarn_releases import RELEASES

    target = posixpath.normpath(posixpath.join(posixpath.dirname(rel), yarn_path))
    if target.startswith(("../", "/")) or not ctx.ws_exists(target):
        return False
    data = ctx.ws_bytes(target, 16 << 20)
    return data is not None and hashlib.sha256(data).hexdigest() in RELEASES


@rule(id="SUP008", slug="config-executes-code", severity=Severity.HIGH,
      title="Package-manager config executes repo code",
      nature=Nature.ATTACK, actions="W/W/B")
def check(ctx: Context) -> Outcome:
    f = Findings()
    for rel in named(ctx, ".npmrc"):
        text = f.attempt(ctx.ws_text, rel, MAX_MANIFEST_BYTES) or ""
        for key, value, line in parse_ini_pairs(text):
            if key == "node-options" and _inert_node_options(value):
                continue  # trpc: `--no-warnings`, memory limits, source maps load nothing
            if key in NPMRC_KEYS:
                f.fail(f"{key} = {value[:80]}", path=rel, line=line)
    for rel in named(ctx, ".yarnrc.yml"):
        read: str | None = f.attempt(ctx.ws_text, rel, MAX_MANIFEST_BYTES)
        text = read or ""
        # Yarn reads a file headed `# yarn lockfile v1` with its old parser (`key "value"`
        # lines), which YAML reads as one string
        doc: Any = _legacy_syml(text) if LEGACY_SYML.match(text) else f.attempt(
            load, ctx, rel, load_yaml, MAX_MANIFEST_BYTES)
        if isinstance(doc, dict) and doc.get("yarnPath") and not f.attempt(
                _released_yarn, ctx, rel, str(doc["yarnPath"])):
            f.fail(f"yarnPath runs {doc['yarnPath']}", path=rel, line=line_of(text, "yarnPath"))
        if isinstance(doc, dict) and doc.get("plugins"):
            f.fail("plugins load code into Yarn", path=rel, line=line_of(text, "plugins"))
    for rel in named(ctx, ".yarnrc"):  # Yarn 1 runs the file yarn-path names instead
        read = f.attempt(ctx.ws_text, rel, MAX_MANIFEST_BYTES)
        text = read or ""
        found = _legacy_syml(text).get("yarn-path")
        if found:
            f.fail(f"yarn-path runs {found}", path=rel, line=line_of(text, "yarn-path"))
    for rel in named(ctx, ".pnpmfile.cjs", ".pnpmfile.mjs"):
        f.fail(f"{posixpath.basename(rel)} hooks every pnpm install", path=rel)
    for rel in matching(ctx, lambda p: p.endswith((".cargo/config.toml", ".cargo/config"))):
        _cargo(ctx, f, rel)
    return f.outcome("no package-manager config runs repository code",
                     f"{len(f.found)} config setting(s) run repository code",
                     scope=lambda rel: in_play(ctx, rel))
