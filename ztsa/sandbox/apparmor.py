"""AppArmor's restriction of unprivileged user namespaces (Ubuntu 23.10 on), and what
lifts it for ztsa alone: a profile that grants `userns` to one program, root's copy of
ztsa-ns (`ztsa doctor --apparmor-profile`), and the root commands that install both
(`ztsa doctor` prints them where the restriction holds).

The profile names only ROOT_NS, a copy only root can replace (ztsa.sandbox.offer's
root_owned): never the ztsa-ns of a user's own installation, which its user (or
anything running as that user) could replace with a program that makes namespaces
for other ends. Where the restriction holds, ztsa execs that copy (offer.locate_ns).

The profile grants what the set-up needs (user and mount namespaces, mounts, the
helper's pidfd_getfd and process_vm_readv of the tree's processes, ...) and sends CMD,
at its exec, into a second profile, `ztsa-tree`, that is the same but for `userns`: the tree
itself makes no user namespace (a nested sandbox in it fails), as a program without a
profile may not on such a host."""

from __future__ import annotations

import os

from ztsa.sandbox.offer import NS, ROOT_NS, installed_ns, root_owned

PROFILE_NAME = "ztsa-ns"
PROFILE_FILE = "/etc/apparmor.d/ztsa-ns"

# what both profiles allow (AppArmor 4's rule classes, as Ubuntu's own
# bwrap-userns-restrict): the set-up's mounts and namespaces, the helper's work for the
# tree, the tree's ordinary programs; ztsa's other controls (Landlock, seccomp, the
# helper) confine the tree, not this profile
_COMMON = """\
  allow capability,
  allow network,
  allow unix,
  allow ptrace,
  allow signal,
  allow mqueue,
  allow io_uring,
  allow mount,
  allow umount,
  allow pivot_root,
  allow dbus,
"""


def profile(path: str = ROOT_NS) -> str:
    """The profile text: `userns` for the program at path (root's copy of ztsa-ns)."""
    return f"""\
# ztsa: user namespaces for ztsa's set-up only (`ztsa doctor --apparmor-profile`).
# It names root's copy of ztsa-ns: installed by root, owned by root, writable by no
# one else, nor any directory above it. Install it and load this profile with the
# commands `ztsa doctor` prints (apparmor_parser -r {PROFILE_FILE}).
abi <abi/4.0>,
include <tunables/global>

profile {PROFILE_NAME} {path} flags=(attach_disconnected,mediate_deleted) {{
  allow userns,
{_COMMON}  allow file rwlkm /{{**,}},
  # CMD, and all it runs, leave this profile: no user namespace of their own
  allow px /** -> ztsa-tree,

  include if exists <local/ztsa-ns>
}}

profile ztsa-tree flags=(attach_disconnected,mediate_deleted) {{
{_COMMON}  allow file rwlkmix /{{**,}},
  audit deny userns,

  include if exists <local/ztsa-tree>
}}
"""


def source_ns() -> str:
    """The ztsa-ns root's copy is installed from: this installation's own, else ""."""
    return installed_ns()


def same_file(a: str, b: str) -> bool:
    try:
        with open(a, "rb") as fa, open(b, "rb") as fb:
            return fa.read() == fb.read()
    except OSError:
        return False


def root_copy_state() -> str:
    """ROOT_NS: "missing", "unsafe" (someone but root could replace it), "stale" (not
    this installation's ztsa-ns, whose plans it may not read), or "installed"."""
    if not os.path.lexists(ROOT_NS):
        return "missing"
    if not root_owned(ROOT_NS):
        return "unsafe"
    source = source_ns()
    if source and not same_file(source, ROOT_NS):
        return "stale"
    return "installed"


def commands(source: str) -> list[tuple[str, str]]:
    """(who, command): the commands that install root's copy of ztsa-ns from source and
    load the profile that names it. The profile is written by this ztsa as its user and
    installed by root (who reads it first): root runs nothing of the user's."""
    import shlex

    saved = "ztsa-ns.apparmor"
    return [
        ("you", f"ztsa doctor --apparmor-profile > {saved}"),
        ("root", f"install -d -o root -g root -m 0755 {shlex.quote(os.path.dirname(ROOT_NS))}"),
        ("root", f"install -o root -g root -m 0755 {shlex.quote(source)} "
                 f"{shlex.quote(ROOT_NS)}"),
        ("root", f"install -o root -g root -m 0644 {saved} {PROFILE_FILE}"),
        ("root", f"apparmor_parser -r {PROFILE_FILE}"),
    ]


def advice(restricted: bool) -> dict[str, object] | None:
    """What `ztsa doctor` says of the restriction: None where AppArmor does not restrict
    user namespaces; else root's copy's state and, unless it is installed, the commands
    (or why there are none: no ztsa-ns in this installation)."""
    if not restricted:
        return None
    state = root_copy_state()
    source = source_ns()
    out: dict[str, object] = {"root_copy": ROOT_NS, "state": state}
    if state != "installed":
        out["commands"] = commands(source) if source else []
        if not source:
            out["why_no_commands"] = (f"this installation of ztsa has no {NS} (a source "
                                      "tree's `python -m ztsa`): install ztsa with pip, "
                                      "pipx or uv first")
    return out
