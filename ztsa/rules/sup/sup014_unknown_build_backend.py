"""Unknown or in-tree build backend.

## What it checks
`[build-system]` of every `pyproject.toml`: a `backend-path` (the backend is loaded
from the repository itself); a `build-backend` outside setuptools, hatchling,
flit_core, poetry.core, pdm.backend, maturin, scikit_build_core, mesonpy, uv_build,
their older spellings (`pdm.pep517.api`, `poetry.masonry.api`, `flit.buildapi`,
`skbuild`'s `scikit_build`) and a few other published backends (sip, pbr,
py-build-cmake, sphinx-theme-builder, enscons, whey); and URL entries
(`name @ https://…`) in `requires`.
What is found only in test data or in a project nothing of the root installs, builds
or names (ztsa.manifests.scope.in_play) is reported as advisory.

## Why it matters
`pip install`, `pip wheel` and `uv build` import and run the build backend. An
in-tree or unknown backend is arbitrary code that runs at install time; a URL
requirement fetches it from wherever the URL points.

## How to fix
Use one of the standard backends from the index, without `backend-path`, and pin it
in the lockfile.
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.manifests import MAX_MANIFEST_BYTES
from ztsa.manifests.project import load, named
from ztsa.manifests.scope import in_play
from ztsa.model import Nature, Outcome, Severity
from ztsa.registry import rule

KNOWN = ("setuptools", "hatchling", "flit_core", "poetry.core", "pdm.backend", "maturin",
         "scikit_build_core", "mesonpy", "uv_build",
         # older spellings of the same projects, and other published backends
         "pdm.pep517", "poetry.masonry", "flit.buildapi", "scikit_build", "sipbuild",
         "pbr.build", "py_build_cmake", "sphinx_theme_builder", "enscons", "whey")


@rule(id="SUP014", slug="unknown-build-backend", title="Unknown or in-tree build backend",
      severity=Severity.HIGH,
      nature=Nature.ATTACK, actions="W/W/B")
def check(ctx: Context) -> Outcome:
    from ztsa.manifests.python import parse_pyproject  # lazily: start-up cost

    f = Findings()
    for rel in named(ctx, "pyproject.toml"):
        pp = f.attempt(load, ctx, rel, parse_pyproject, MAX_MANIFEST_BYTES)
        bs = pp.table("build-system") if pp else None
        if pp is None or not isinstance(bs, dict):
            continue
        if bs.get("backend-path"):
            f.fail(f"backend-path {bs['backend-path']!r} loads the backend from the repository",
                   path=rel, line=pp.line("backend-path"))
        backend = bs.get("build-backend")
        if isinstance(backend, str) and backend.split(".")[0] not in KNOWN and \
                not backend.startswith(KNOWN):
            f.fail(f"build-backend {backend!r} is not a known backend", path=rel,
                   line=pp.line("build-backend"))
        for req in bs.get("requires") or []:
            if isinstance(req, str) and "://" in req:
                f.fail(f"requires {req[:80]!r} is a URL", path=rel, line=pp.line(req[:30]))
    return f.outcome("build backends are standard and come from the index",
                     f"{len(f.found)} unknown or in-tree build backend setting(s)",
                     scope=lambda rel: in_play(ctx, rel))
