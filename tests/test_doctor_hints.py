"""`ztsa doctor`'s hints: why a control is missing in a container, and the runtime's
option that gives it back, from the mount table and the controls as probed."""

from ztsa.doctor import container_hints, masked_proc

# /proc/self/mountinfo in a podman container under its defaults (trimmed)
PODMAN = """\
172 171 0:56 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
173 172 0:56 /bus /proc/bus ro,nosuid,nodev,noexec,relatime - proc proc rw
177 172 0:58 / /proc/acpi ro,relatime - tmpfs tmpfs ro,size=0k
178 172 0:5 /null /proc/kcore rw,nosuid - devtmpfs devtmpfs rw,mode=755
179 171 0:57 / /sys rw - sysfs sysfs ro
"""
HOST = "22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n"


def controls(**changes: bool) -> dict[str, bool]:
    c = {"user_namespaces": True, "pid_namespaces": True,
         "apparmor_restricts_user_namespaces": False}
    c.update(changes)
    return c


def test_masked_proc_lists_the_mounts_over_proc():
    assert masked_proc(PODMAN) == ["/proc/bus", "/proc/acpi", "/proc/kcore"]
    assert masked_proc(HOST) == [] and masked_proc("garbage\n\n") == []


def test_no_hint_when_nothing_is_missing():
    assert container_hints(controls(), True, masked_proc(PODMAN), "15000") == []


def test_a_masked_proc_names_the_unmask_options_and_their_condition():
    [hint] = container_hints(controls(pid_namespaces=False), True, masked_proc(PODMAN),
                             "15000")
    assert "masks parts of /proc (/proc/bus, /proc/acpi, /proc/kcore)" in hint
    assert "unmask=/proc/*" in hint and "procMount: Unmasked" in hint
    assert "hostUsers: false" in hint
    # PID namespaces missing for another reason: no word about /proc
    assert container_hints(controls(pid_namespaces=False), False, [], "15000") == []


def test_refused_user_namespaces_say_why():
    off = controls(user_namespaces=False, pid_namespaces=False)
    [hint] = container_hints(off, True, masked_proc(PODMAN), "15000")
    assert "seccomp profile" in hint and "CAP_SYS_ADMIN" in hint
    assert container_hints(off, True, [], "0\n") == [
        "user namespaces: user.max_user_namespaces is 0 here"]
    # AppArmor's restriction is said on the line it belongs to; outside a container
    # with user namespaces allowed nothing is guessed
    assert container_hints(off | {"apparmor_restricts_user_namespaces": True}, True, [],
                           "15000") == []
    assert container_hints(off, False, [], "15000") == []
