"""An agent's interactive mode in a pseudo-terminal: `tui.py LOG PROMPT CMD...`.

Starts CMD on a new pty (120x40), answers the terminal queries a TUI makes at start
(cursor position, colours), types PROMPT once the input box is shown, waits for the
fake API's answer (FAKE-ANSWER-OK), then quits with two Ctrl-C. LOG gets every byte
the terminal showed; stdout the screen's text without escape sequences. Exits 0 when
the answer was shown, 1 when not (a prompt the person would have to answer, an
error), 2 on a wrong call. Presses Enter again while the session has not taken
the prompt (it is still starting), nothing else: a trust or sign-in screen stays,
and the run fails."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import time

READY = (b"for shortcuts", b"Ask Codex")
ANSWER = b"FAKE-ANSWER-OK"


def main() -> int:
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    log_path, prompt, argv = sys.argv[1], sys.argv[2].encode(), sys.argv[3:]
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    seen = bytearray()
    with open(log_path, "wb") as log:

        def pump(seconds: float, until: tuple[bytes, ...] = ()) -> bool:
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                if until and any(u in text(seen) for u in until):
                    return True
                ready, _, _ = select.select([fd], [], [], 0.1)
                if not ready:
                    continue
                try:
                    data = os.read(fd, 1 << 16)
                except OSError:
                    return False
                if not data:
                    return False
                log.write(data)
                log.flush()
                seen.extend(data)
                for _ in range(data.count(b"\x1b[6n")):  # where is the cursor?
                    os.write(fd, b"\x1b[1;1R")
                if b"\x1b]10;?" in data or b"\x1b]11;?" in data:  # which colours?
                    os.write(fd, b"\x1b]11;rgb:0000/0000/0000\x1b\\")
            return False

        pump(60, READY)
        answered = False
        if any(r in text(seen) for r in READY):
            pump(3)  # past its loading
            os.write(fd, prompt)
            pump(1)
            # an Enter while the session is still starting is taken for nothing (the
            # prompt stays in the box): pressed again until the turn starts
            for _ in range(24):
                mark = len(seen)
                os.write(fd, b"\r")
                answered = pump(5, (ANSWER,))
                if answered or b"esc to interrupt" in text(seen[mark:]):
                    break
            if not answered:
                answered = pump(120, (ANSWER,))
        pump(2)
        for _ in range(2):
            try:
                os.write(fd, b"\x03")
            except OSError:
                break
            pump(2)
        end = time.monotonic() + 20
        while time.monotonic() < end:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            pump(0.5)
        else:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    sys.stdout.write(text(seen).decode(errors="replace"))
    return 0 if answered else 1


def text(data: bytes | bytearray) -> bytes:
    """The terminal's bytes without escape sequences, spaces folded."""
    plain = re.sub(rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[=>()]"
                   rb"[A-Z0-9]?", b" ", bytes(data))
    return re.sub(rb"\s+", b" ", plain)


if __name__ == "__main__":
    sys.exit(main())
