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


class Terminal:
    """CMD on a new pty (40x120) that answers a TUI's start-up queries (cursor position,
    colours); every byte it shows goes to LOG. Also used by tests
    (tests/test_hook_gemini_real.py) to answer an agent's prompts."""

    def __init__(self, argv: list[str], log_path: str, env: dict[str, str] | None = None,
                 cwd: str | None = None) -> None:
        pid, fd = pty.fork()
        if pid == 0:
            try:
                if cwd is not None:
                    os.chdir(cwd)
                if env is None:
                    os.execvp(argv[0], argv)
                else:
                    os.execvpe(argv[0], argv, env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.seen = bytearray()
        self.log = open(log_path, "wb")  # noqa: SIM115 (closed by close())
        self.status: int | None = None

    def pump(self, seconds: float, until: tuple[bytes, ...] = (), since: int = 0) -> bool:
        """Read what it shows for `seconds`, or until one of `until` is shown (in the
        text since byte `since`): whether it was."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if until and any(u in text(self.seen[since:]) for u in until):
                return True
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if not ready:
                continue
            try:
                data = os.read(self.fd, 1 << 16)
            except OSError:
                return False
            if not data:
                return False
            self.log.write(data)
            self.log.flush()
            self.seen.extend(data)
            for _ in range(data.count(b"\x1b[6n")):  # where is the cursor?
                os.write(self.fd, b"\x1b[1;1R")
            if b"\x1b]10;?" in data or b"\x1b]11;?" in data:  # which colours?
                os.write(self.fd, b"\x1b]11;rgb:0000/0000/0000\x1b\\")
        return bool(until) and any(u in text(self.seen[since:]) for u in until)

    def type(self, data: bytes) -> None:
        os.write(self.fd, data)

    def screen(self, since: int = 0) -> str:
        return text(self.seen[since:]).decode(errors="replace")

    def close(self) -> None:
        """Two Ctrl-C, then 20 s to end, then SIGKILL."""
        for _ in range(2):
            try:
                os.write(self.fd, b"\x03")
            except OSError:
                break
            self.pump(2)
        end = time.monotonic() + 20
        while time.monotonic() < end:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self.status = status
                break
            self.pump(0.5)
        else:
            os.kill(self.pid, signal.SIGKILL)
            self.status = os.waitpid(self.pid, 0)[1]
        os.close(self.fd)
        self.log.close()


def main() -> int:
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    log_path, prompt, argv = sys.argv[1], sys.argv[2].encode(), sys.argv[3:]
    term = Terminal(argv, log_path)
    term.pump(60, READY)
    answered = False
    if any(r in text(term.seen) for r in READY):
        term.pump(3)  # past its loading
        term.type(prompt)
        term.pump(1)
        # an Enter while the session is still starting is taken for nothing (the
        # prompt stays in the box): pressed again until the turn starts
        for _ in range(24):
            mark = len(term.seen)
            term.type(b"\r")
            answered = term.pump(5, (ANSWER,))
            if answered or b"esc to interrupt" in text(term.seen[mark:]):
                break
        if not answered:
            answered = term.pump(120, (ANSWER,))
    term.pump(2)
    term.close()
    sys.stdout.write(term.screen())
    return 0 if answered else 1


def text(data: bytes | bytearray) -> bytes:
    """The terminal's bytes without escape sequences, spaces folded."""
    plain = re.sub(rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[=>()]"
                   rb"[A-Z0-9]?", b" ", bytes(data))
    return re.sub(rb"\s+", b" ", plain)


if __name__ == "__main__":
    sys.exit(main())
