"""Manifest and lockfile readers. Each raises ParseError (a ProbeError) on bad input,
never another exception, and is bounded in input size and structure."""

from __future__ import annotations

MAX_LOCK_BYTES = 32 * 1024 * 1024
MAX_MANIFEST_BYTES = 8 * 1024 * 1024

# the parse cache (ztsa.manifests.parsecache): smaller files share the workspace's bundle
# entry; larger lockfiles missing from the cache are parsed by forked workers
BUNDLE_BYTES = 64 * 1024
PARALLEL_BYTES = 256 * 1024
