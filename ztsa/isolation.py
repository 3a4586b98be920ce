"""Isolation detection shared by ENV003 and AGT008: every sign found, by kind."""

from __future__ import annotations

import re

from ztsa.context import Context
from ztsa.host import ProbeError
from ztsa.lazy import LazyRe

CONTAINER_FILES = {
    "/.dockerenv": "docker",
    "/run/.containerenv": "podman",
    "/run/systemd/container": None,  # the file names the manager
    "/run/host/container-manager": None,
}
CGROUP_SIGNS = LazyRe(r"(docker|kubepods|containerd|libpod|lxc|crio|machine\.slice/machine-)")
DMI_VENDORS = LazyRe(
    r"(qemu|kvm|vmware|virtualbox|innotek|xen|bochs|parallels|bhyve|"
    r"amazon ec2|google compute engine|microsoft corporation|openstack|firecracker|"
    r"cloud hypervisor)",
    re.I,
)
GVISOR_VERSION = "#1 SMP Sun Jan 10 15:06:54 PST 2016"


class Isolation:
    __slots__ = ("errors", "kinds", "wsl")

    def __init__(self) -> None:
        self.kinds: dict[str, list[str]] = {}  # kind -> signs
        self.wsl: list[str] = []
        self.errors: list[str] = []

    def add(self, kind: str, sign: str) -> None:
        self.kinds.setdefault(kind, []).append(sign)

    @property
    def isolated(self) -> bool:
        return bool(self.kinds)


def detect(ctx: Context) -> Isolation:
    cached = ctx.cache.get("isolation")
    if isinstance(cached, Isolation):
        return cached
    iso = Isolation()
    host = ctx.host

    def read(p: str) -> str | None:
        try:
            return host.read_text(p, limit=1 << 20)
        except ProbeError as exc:
            iso.errors.append(str(exc))
            return None

    def exists(p: str) -> bool:
        try:
            return host.exists(p)
        except ProbeError as exc:
            iso.errors.append(str(exc))
            return False

    # containers
    for path, runtime in CONTAINER_FILES.items():
        if exists(path):
            name = runtime or (read(path) or "").strip() or "unknown runtime"
            iso.add(f"container ({name})", f"{path} exists")
    for p in ("/proc/1/cgroup", "/proc/self/cgroup"):
        text = read(p) or ""
        hit = CGROUP_SIGNS.search(text)
        if hit:
            iso.add(f"container ({hit.group(1)})", f"{p} mentions {hit.group(1)}")
            break
    try:
        mounts = host.mounts() or []
    except ProbeError as exc:
        iso.errors.append(str(exc))
        mounts = []
    for m in mounts:
        if m.mount_point == "/" and m.fstype in ("overlay", "aufs", "fuse-overlayfs"):
            iso.add("container (overlay root)", f"/ is mounted as {m.fstype}")
        if "/docker/containers/" in m.root or "/var/lib/containers/" in m.root:
            iso.add("container (docker)", f"mount from {m.root}")
            break

    # virtual machines
    cpuinfo = read("/proc/cpuinfo") or ""
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            if re.search(r"\bhypervisor\b", line):
                iso.add("vm", "cpu flag hypervisor in /proc/cpuinfo")
            break
    for p in ("/sys/class/dmi/id/sys_vendor", "/sys/class/dmi/id/product_name",
              "/sys/class/dmi/id/bios_vendor"):
        text = (read(p) or "").strip()
        if text and DMI_VENDORS.search(text):
            iso.add("vm", f"{p} is {text!r}")
    hv = (read("/sys/hypervisor/type") or "").strip()
    if hv:
        iso.add("vm", f"/sys/hypervisor/type is {hv!r}")

    # kernel strings: gVisor, Kata, WSL
    version = read("/proc/version") or ""
    if GVISOR_VERSION in version:
        iso.add("gvisor", "kernel version string is gVisor's")
    cmdline = read("/proc/cmdline") or ""
    if "kata" in version.lower() or re.search(r"\bagent\.\w+=", cmdline):
        iso.add("kata", "kernel version or command line names the Kata agent")
    if re.search(r"microsoft|wsl", version, re.I):
        iso.wsl.append("/proc/version names Microsoft/WSL (WSL is not isolation)")

    # user namespace sandbox
    try:
        umap = host.uid_map()
    except ProbeError as exc:
        iso.errors.append(str(exc))
        umap = None
    if umap is not None and umap != [(0, 0, 4294967295)]:
        rows = "; ".join(f"{a} {b} {c}" for a, b, c in umap) or "empty"
        iso.add("user-namespace sandbox", f"/proc/self/uid_map is not the identity map ({rows})")

    ctx.cache["isolation"] = iso
    return iso
