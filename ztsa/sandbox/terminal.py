"""The caller's terminal and the descriptors the tree shares, given back as the run found
them.

When ztsa's controlling terminal is among its stdio, the tree shares the caller's session
and that terminal, so that `/dev/tty`, job control and interactive programs work as they
would bare (otherwise CMD gets a session of its own, `among_stdio`). So it can also take the
terminal's foreground for a process group of its own, and set TOSTOP: ztsa, then in the
background, would stop at its next write (SIGTTOU) and the caller with it. While the
tree runs, ztsa does not stop for the terminal (SIGTTOU and SIGTTIN ignored, after the
fork: CMD gets the dispositions the caller gave ztsa); when the tree has ended, the
terminal gets back its foreground process group and its modes, and every descriptor the
tree shared (stdio, --pass-fd) its file status flags (`flags_of`)."""

from __future__ import annotations

import os

from ztsa.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal as _signal
    from typing import Any
else:  # signal() without signal.py's enum conversions
    import _signal

SIGTTIN, SIGTTOU = 21, 22  # signal.h (the `signal` module's import is off the hot path)


class Saved(NamedTuple):
    fd: int
    pgrp: int
    modes: list[Any]
    dispositions: list[Any]


def among_stdio() -> bool:
    """Whether ztsa's controlling terminal is one of its stdin, stdout and stderr. When it
    is not, CMD runs in a session of its own: an agent that runs the tree with pipes has
    its own terminal (the person's prompt) as ztsa's, and `/dev/tty` would reach it."""
    return _controlling() is not None


def _controlling() -> tuple[int, int] | None:
    """(the first of ztsa's stdio that is its controlling terminal, its foreground group)."""
    for fd in (0, 1, 2):
        try:
            return fd, os.tcgetpgrp(fd)  # ENOTTY unless it is ztsa's controlling terminal
        except OSError:
            continue
    return None


def hold() -> Saved | None:
    """Ztsa's controlling terminal among its stdio (None: none), its foreground group and
    modes now; from here on, ztsa ignores the terminal's stop signals."""
    found = _controlling()
    if found is None:
        return None
    fd, pgrp = found
    import termios

    try:
        modes = termios.tcgetattr(fd)
    except termios.error:
        return None
    old = [_signal.signal(s, _signal.SIG_IGN) for s in (SIGTTIN, SIGTTOU)]
    return Saved(fd, pgrp, modes, old)


def give_back(saved: Saved | None) -> None:
    """The foreground group and the modes the terminal had (a terminal hung up or gone:
    nothing to give back), then ztsa's own dispositions."""
    if saved is None:
        return
    import termios

    try:
        if os.tcgetpgrp(saved.fd) != saved.pgrp:
            os.tcsetpgrp(saved.fd, saved.pgrp)
        if termios.tcgetattr(saved.fd) != saved.modes:
            termios.tcsetattr(saved.fd, termios.TCSADRAIN, saved.modes)
    except (OSError, termios.error):
        pass
    for s, old in zip((SIGTTIN, SIGTTOU), saved.dispositions, strict=True):
        _signal.signal(s, old)


F_SETPIPE_SZ, F_GETPIPE_SZ = 1031, 1032  # linux/fcntl.h


def flags_of(fds: list[int]) -> list[tuple[int, int, int]]:
    """(descriptor, file status flags, pipe size or 0) of each of FDS that is open: the
    tree shares these open file descriptions with the caller, so an O_NONBLOCK or
    O_APPEND it sets there would outlast the run (the caller's next read failing with
    EAGAIN), and so would a pipe it shrank (a job server's, an agent's reused pipe)."""
    import fcntl

    saved = []
    for fd in fds:
        try:
            flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        except OSError:
            continue
        try:
            size = fcntl.fcntl(fd, F_GETPIPE_SZ)
        except OSError:
            size = 0  # no pipe
        saved.append((fd, flags, size))
    return saved


def give_back_flags(saved: list[tuple[int, int, int]]) -> None:
    """The file status flags and pipe size each shared descriptor had before the run."""
    import fcntl

    for fd, flags, size in saved:
        try:
            if fcntl.fcntl(fd, fcntl.F_GETFL) != flags:
                fcntl.fcntl(fd, fcntl.F_SETFL, flags)
            if size and fcntl.fcntl(fd, F_GETPIPE_SZ) != size:
                fcntl.fcntl(fd, F_SETPIPE_SZ, size)
        except OSError:
            continue
