"""Run ARGV (as root) inside a new user namespace that maps uids and gids 0-65535 onto
themselves and allows no further user namespaces: an unprivileged ztsa started in it
finds no user namespaces, so it runs without its file helper, and its tracer's C loop
decides every connect (the weaker confinement of a kernel without them).

Usage: python nouserns.py ARGV...   (root only)
"""

from __future__ import annotations

import ctypes
import os
import sys

CLONE_NEWUSER = 0x10000000


def main() -> int:
    argv = sys.argv[1:]
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        os.close(go_w)
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(CLONE_NEWUSER) != 0:
            os.write(2, f"unshare(CLONE_NEWUSER): {os.strerror(ctypes.get_errno())}\n".encode())
            os._exit(125)
        os.write(ready_w, b"u")
        if os.read(go_r, 1) != b"g":
            os._exit(125)
        # a limit of this namespace: none may be made inside it
        with open("/proc/sys/user/max_user_namespaces", "w") as f:
            f.write("0")
        os.execvp(argv[0], argv)
    os.close(ready_w)
    os.close(go_r)
    if os.read(ready_r, 1) != b"u":
        os.waitpid(pid, 0)
        return 125
    for name in ("uid_map", "gid_map"):
        with open(f"/proc/{pid}/{name}", "w") as f:
            f.write("0 0 65536\n")
    os.write(go_w, b"g")
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) & 0xFF


if __name__ == "__main__":
    raise SystemExit(main())
