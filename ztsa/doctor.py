"""`ztsa doctor`: the confinement controls this machine offers, and so what each profile
of `ztsa exec` does here."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ztsa.sandbox.offer import HostOffer


def _tree_cgroup() -> str:
    """What would hold the tree's totals: a cgroup of its own (made and removed here to
    find out), else only each process's rlimits, and why."""
    from ztsa.sandbox import cgroup

    group, why = cgroup.make("doctor", 0, 0)
    if group is None:
        return f"rlimits only ({why})"
    cgroup.remove(group)
    return group.kind


def _resources(host: HostOffer) -> dict[str, Any]:
    """The tree's share of its user's resources (ztsa.sandbox.resources): its own inotify
    limits, locks refused outside the writable places, the private HOME and TMPDIR's
    bound; None where this machine offers none."""
    from ztsa.sandbox import resources

    namespaces = host.mounts
    inotify = resources.inotify_share(host.inotify_limits)
    return {"inotify_limits": list(inotify) if namespaces and inotify != (0, 0) else None,
            "locks_outside_refused": namespaces,
            "private_disk_bound": "tmpfs, --max-disk" if namespaces else None}


CONTAINER_FILES = ("/.dockerenv", "/run/.containerenv", "/run/systemd/container")


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(1 << 20)
    except OSError:
        return None


def masked_proc(mountinfo: str) -> list[str]:
    """The mounts over parts of /proc (a container runtime's masked paths): with any,
    the kernel refuses a new /proc in a user namespace, so the tree gets no PID
    namespace of its own."""
    out = []
    for line in mountinfo.splitlines():
        fields = line.split(" - ")[0].split()
        if len(fields) >= 5 and fields[4].startswith("/proc/"):
            out.append(fields[4].replace("\\040", " "))
    return out


def container_hints(controls: dict[str, Any], in_container: bool, masked: list[str],
                    max_userns: str | None) -> list[str]:
    """Why a control the runtime can give back is missing here, and the option that
    gives it back: only for what is missing, never a reason to run without it."""
    hints = []
    if not controls["user_namespaces"]:
        if max_userns is not None and max_userns.strip() == "0":
            hints.append("user namespaces: user.max_user_namespaces is 0 here")
        elif controls["apparmor_restricts_user_namespaces"]:
            pass  # the line above says so
        elif in_container:
            hints.append(
                "user namespaces: the container runtime refuses them (Docker's default "
                "seccomp profile refuses unshare and clone of a namespace, and "
                "pidfd_getfd, to a container without CAP_SYS_ADMIN and CAP_SYS_PTRACE): "
                "run with a profile that allows them (podman's default does: docker run "
                "--security-opt seccomp=/usr/share/containers/seccomp.json), or with "
                "rootless podman; see docs/container.md")
    elif not controls["pid_namespaces"] and masked:
        shown = ", ".join(masked[:4]) + (", ..." if len(masked) > 4 else "")
        hints.append(
            f"PID namespaces: the container runtime masks parts of /proc ({shown}), so "
            "the kernel refuses the tree a /proc of its own. Unmask them only where the "
            "container has a user namespace of its own (rootless podman, podman "
            "--userns=auto, a Kubernetes pod with hostUsers: false): podman "
            "--security-opt unmask=/proc/*, Docker --security-opt systempaths=unconfined, "
            "Kubernetes securityContext.procMount: Unmasked; see docs/container.md")
    return hints


def probe() -> dict[str, Any]:
    from ztsa.sandbox import apparmor, landlock, offer
    from ztsa.sandbox.controls import missing_controls

    host = offer.probe()
    feat = offer.features()
    abi = host.landlock_abi
    missing = missing_controls(host)
    controls = {
        "kernel": feat.kernel,
        "root": host.root,
        "landlock_abi": abi,
        "landlock_features": {
            "file system (ABI 1)": abi >= 1, "refer (ABI 2)": abi >= 2,
            "truncate (ABI 3)": abi >= 3, "device ioctls (ABI 5)": abi >= 5,
            "signal scope (ABI 6)": landlock.scope(abi) != 0},
        "seccomp_user_notification": feat.user_notification,
        "seccomp_notification_features": {
            "ADDFD (5.9)": feat.addfd, "ADDFD_FLAG_SEND (5.14)": feat.addfd_send,
            "SYNC_WAKE_UP (6.6)": feat.sync_wake_up},
        "pidfd_getfd": feat.pidfd_getfd,
        "user_namespaces": host.mounts,
        # root making the tree's namespaces with its own CAP_SYS_ADMIN; a container's
        # root without it makes a user namespace, as an ordinary user does
        "root_mount_namespace": host.root and host.root_mountns,
        "apparmor_restricts_user_namespaces": feat.apparmor_restricts_userns,
        # the set-up's executable a run execs (None: the set-up runs in a fork of ztsa)
        "ztsa_ns": host.ns or None,
        # where AppArmor restricts: root's copy of ztsa-ns and the commands that make it
        "apparmor": apparmor.advice(host.apparmor_userns),
        "pid_namespaces": host.pidns,
        # made in the user namespace (as root: directly), by CMD before it drops its
        # capabilities: where one is there, so is the other
        "network_namespace": host.netns,
        "tree_cgroup": _tree_cgroup(),
        "tree_resources": _resources(host),
        "missing": missing,
    }
    profiles = {
        "untrusted": "refuses to run (EXEC001): " + "; ".join(missing) if missing
        else "runs with every control",
        "dependency": ("runs without: " + "; ".join(missing)) if missing
        else "runs with every control",
        "repo": ("runs without: " + "; ".join(missing)) if missing
        else "runs with every control",
    }
    import os

    in_container = any(os.path.exists(p) for p in CONTAINER_FILES)
    hints = container_hints(controls, in_container,
                            masked_proc(_read("/proc/self/mountinfo") or ""),
                            _read("/proc/sys/user/max_user_namespaces"))
    return {"schema": "ztsa.doctor/v1", "controls": controls, "profiles": profiles,
            "hints": hints}


def render_text(doc: dict[str, Any]) -> str:
    c = doc["controls"]

    def yes(v: bool) -> str:
        return "yes" if v else "NO"

    lines = [f"kernel {c['kernel']}, {'root' if c['root'] else 'an ordinary user'}",
             f"Landlock ABI {c['landlock_abi']}"]
    lines += [f"  {name}: {yes(v)}" for name, v in c["landlock_features"].items()]
    lines.append(f"seccomp user notification: {yes(c['seccomp_user_notification'])}")
    lines += [f"  {name}: {yes(v)}" for name, v in c["seccomp_notification_features"].items()]
    lines.append(f"pidfd_getfd: {yes(c['pidfd_getfd'])}")
    lines.append(f"user namespaces: {yes(c['user_namespaces'])}"
                 + (" (AppArmor restricts unprivileged ones)"
                    if c["apparmor_restricts_user_namespaces"] else "")
                 + (" (root without CAP_SYS_ADMIN: the tree's are a user namespace's)"
                    if c["root"] and c["user_namespaces"] and not c["root_mount_namespace"]
                    else ""))
    lines.append("the set-up (namespaces, helper): " + (
        f"ztsa-ns, {c['ztsa_ns']}" if c["ztsa_ns"] else "a fork of ztsa (no ztsa-ns installed)"))
    lines += _apparmor_lines(c["apparmor"])
    lines.append(f"PID and IPC namespaces: {yes(c['pid_namespaces'])}")
    lines.append(f"a network namespace for the tree (ztsa answers its DNS): "
                 f"{yes(c['network_namespace'])}")
    lines.append(f"the tree's memory and process totals: {c['tree_cgroup']}")
    r = c["tree_resources"]
    lines.append("the tree's own inotify limits: " + (
        "{} instances, {} watches".format(*r["inotify_limits"]) if r["inotify_limits"]
        else "NO (it can take all of its user's)"))
    lines.append(f"locks on files outside the writable places refused: "
                 f"{yes(r['locks_outside_refused'])}")
    lines.append("the private HOME and TMPDIR bounded: " + (
        r["private_disk_bound"] or "NO (the host's disk)"))
    lines += [f"why: {hint}" for hint in doc["hints"]]
    lines.append("")
    lines += [f"--profile {p}: {what}" for p, what in doc["profiles"].items()]
    return "\n".join(lines) + "\n"


def _apparmor_lines(advice: dict[str, Any] | None) -> list[str]:
    """Where AppArmor restricts user namespaces: root's copy of ztsa-ns, and the exact
    commands that install it and the profile that lets it alone make them."""
    if advice is None:
        return []
    state = advice["state"]
    path = advice["root_copy"]
    if state == "installed":
        return [f"  AppArmor: user namespaces through root's copy {path}"]
    said = {"missing": f"{path} is not installed",
            "unsafe": f"{path} is not used: someone but root could replace it (it, or a "
                      "directory above it, is not root's alone)",
            "stale": f"{path} is another installation's ztsa-ns: install this one's"}[state]
    lines = [f"  AppArmor: {said}; only a program an AppArmor profile names may make "
             "user namespaces here, and ztsa's profile names that copy alone"]
    if not advice.get("commands"):
        return [*lines, f"  {advice.get('why_no_commands', '')}"]
    lines.append("  to let ztsa make them (read the profile before root installs it):")
    lines += [f"    {'as root: ' if who == 'root' else 'as yourself: '}{cmd}"
              for who, cmd in advice["commands"]]
    return lines
