"""No integrity lockfile.

## What it checks
Every project in the workspace has a lockfile in its directory or an ancestor up to
the workspace root: a `package.json` with dependencies or workspaces needs
`package-lock.json`, `npm-shrinkwrap.json`, `yarn.lock`, `pnpm-lock.yaml`, `bun.lock`
or `bun.lockb` (one that declares none installs nothing); a binary or workspace
`Cargo.toml` (a `[workspace]`, `[[bin]]` or `src/main.rs`) needs `Cargo.lock`; a
Python project with dependencies (`pyproject.toml` with dependencies, `setup.py`,
`requirements*.txt`) needs `uv.lock`, `poetry.lock`, `pdm.lock`, `Pipfile.lock`,
`pylock.toml` or a requirements file in which every requirement has `--hash`.
What is found only in test data or in a project nothing of the root installs, builds
or names (ztsa.manifests.scope.in_play) is reported as advisory.

## Why it matters
Without a lockfile every install resolves afresh: a newly published malicious
version, a typosquat or a hijacked maintainer account reaches you on the next
`npm install`, `cargo build` or `pip install`.

## How to fix
Commit the lockfile your tool writes (`npm install --package-lock-only`,
`cargo generate-lockfile`, `uv lock`, `poetry lock`,
`pip-compile --generate-hashes`) and install from it (`npm ci`, `cargo build
--locked`, `uv sync --locked`, `pip install --require-hashes -r requirements.txt`).
"""

from __future__ import annotations

import posixpath

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.manifests import MAX_MANIFEST_BYTES
from ztsa.manifests.common import ancestors
from ztsa.manifests.project import (
    NPM_LOCKS,
    PY_LOCKS,
    by_dir,
    file_set,
    is_pylock,
    load,
    named,
    nearest,
)
from ztsa.manifests.scope import in_play
from ztsa.model import Nature, Outcome, Severity
from ztsa.registry import rule


def _requirements(name: str) -> bool:
    return name.startswith("requirements") and name.endswith((".txt", ".in"))


def python_lock(ctx: Context, f: Findings, d: str) -> bool:
    from ztsa.manifests.python import parse_requirements

    if nearest(ctx, d, PY_LOCKS):
        return True
    dirs = by_dir(ctx)
    for cur in ancestors(d):
        for base in dirs.get(cur, []):
            if is_pylock(base):
                return True
            if base.startswith("requirements") and base.endswith(".txt"):
                rel = f"{cur}/{base}" if cur else base
                rf = f.attempt(load, ctx, rel, parse_requirements, MAX_MANIFEST_BYTES)
                if rf is not None and rf.fully_hashed:
                    return True
    return False


@rule(id="SUP001", slug="no-lockfile", title="No integrity lockfile",
      severity=Severity.HIGH,
      nature=Nature.HYGIENE, actions="W/W/W")
def check(ctx: Context) -> Outcome:
    from ztsa.manifests.cargo import parse_cargo_toml  # lazily: start-up cost
    from ztsa.manifests.npm import parse_package_json
    from ztsa.manifests.python import (  # lazily: start-up cost
        parse_pyproject,
    )

    f = Findings()
    files = file_set(ctx)
    for pj in named(ctx, "package.json"):
        d = posixpath.dirname(pj)
        if not nearest(ctx, d, NPM_LOCKS):
            manifest = f.attempt(load, ctx, pj, parse_package_json, MAX_MANIFEST_BYTES)
            if manifest is None or (not manifest.deps() and not manifest.workspaces):
                continue  # nothing to install (unreadable: the error is the finding)
            f.fail(f"{pj} has no lockfile (package-lock.json, yarn.lock, pnpm-lock.yaml, "
                   "bun.lock)", path=pj)
    for ct in named(ctx, "Cargo.toml"):
        d = posixpath.dirname(ct)
        manifest = f.attempt(load, ctx, ct, parse_cargo_toml, MAX_MANIFEST_BYTES)
        if manifest is None:
            continue
        main_rs = posixpath.join(d, "src/main.rs") if d else "src/main.rs"
        binary = manifest.is_workspace or bool(manifest.data.get("bin")) or main_rs in files
        if binary and not nearest(ctx, d, ["Cargo.lock"]):
            f.fail(f"{ct} builds a binary or workspace and has no Cargo.lock", path=ct)
    py_dirs: dict[str, str] = {}
    for p in sorted(files):
        base = posixpath.basename(p)
        d = posixpath.dirname(p)
        if base == "setup.py" or _requirements(base):
            py_dirs.setdefault(d, p)
        elif base == "pyproject.toml":
            pp = f.attempt(load, ctx, p, parse_pyproject, MAX_MANIFEST_BYTES)
            if pp is not None and pp.has_dependencies:
                py_dirs.setdefault(d, p)
    for d, evidence_file in sorted(py_dirs.items()):
        if not python_lock(ctx, f, d):
            f.fail(f"Python project {d or '.'} ({posixpath.basename(evidence_file)}) has no "
                   "lockfile or fully hashed requirements file", path=evidence_file)
    return f.outcome("every project has a lockfile",
                     f"{len(f.found)} project(s) without a lockfile",
                     scope=lambda rel: in_play(ctx, rel))
