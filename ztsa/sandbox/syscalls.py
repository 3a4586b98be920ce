"""`ztsa exec --trace-syscalls`: every system call the tree makes, decoded (its name and
arguments) by python-ptrace's decoder (the design card's package; `pip install
'ztsa[trace]'`), imported only in this mode.

With the flag, the C wait loop resumes each process of the tree with PTRACE_SYSCALL,
so it stops at every system call's entry and exit, before seccomp decides and after
the kernel (or the file helper) answered: refused calls and the helper's are in the
trace too. The tracer decodes a call at its entry, while what its arguments point to
(paths, structs, argv) is as the call was made, and logs it with its result at its
exit (a call that never returns, such as exit_group, with none). python-ptrace reads
the tracee's memory through the small tracee below, with ztsa's own native call; its
debugger is never used. ztsa's keeper and helper never stop at a system call, and
calls before CMD's first exec (ztsa's own set-up) are not logged."""

from __future__ import annotations

import ctypes

from ztsa.sandbox import native as nat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

STRING_MAX = 256  # bytes of a string argument in the log, then "..."
READ_MAX = 64 << 10  # bytes the decoder may read for one argument (a sigset of 1 GB is not)


class MissingDecoder(RuntimeError):
    pass


class _Regs:
    """The registers python-ptrace's decoder reads on x86_64."""

    def __init__(self, nr: int, args: list[int]) -> None:
        self.orig_rax = nr
        self.rax = nr
        self.rdi, self.rsi, self.rdx, self.r10, self.r8, self.r9 = args


class _Tracee:
    """What the decoder reads of a stopped process: its memory, page by page (the
    method names are python-ptrace's)."""

    def __init__(self, pid: int, regs: _Regs) -> None:
        self.pid = pid
        self.regs = regs

    def getregs(self) -> _Regs:
        return self.regs

    def getreg(self, name: str) -> int:
        return int(getattr(self.regs, name))

    def readBytes(self, address: int, size: int) -> bytes:
        if size > READ_MAX:  # the argument is then shown as its raw value
            raise ValueError(f"{size} bytes is more than the decoder reads")
        out = b""
        while len(out) < size:
            chunk = min(size - len(out), 4096 - (address + len(out)) % 4096)
            out += nat.readmem(self.pid, address + len(out), chunk)
        return out

    def readWord(self, address: int) -> int:
        return int.from_bytes(self.readBytes(address, 8), "little")

    def readCString(self, address: int, max_size: int) -> tuple[bytes, bool]:
        data = b""
        while len(data) < max_size:
            chunk = 4096 - (address + len(data)) % 4096
            part = nat.readmem(self.pid, address + len(data), min(chunk, max_size - len(data)))
            end = part.find(b"\0")
            if end >= 0:
                return data + part[:end], False
            data += part
        return data, True

    def readStruct(self, address: int, struct: Any) -> Any:
        return struct.from_buffer_copy(self.readBytes(address, ctypes.sizeof(struct)))

    def readArray(self, address: int, basetype: Any, count: int) -> Any:
        kind = basetype * count
        return kind.from_buffer_copy(self.readBytes(address, ctypes.sizeof(kind)))


class Decoder:
    def __init__(self) -> None:
        try:
            from ptrace.func_call import FunctionCallOptions
            from ptrace.syscall import SYSCALL_NAMES, PtraceSyscall
        except ImportError as exc:
            raise MissingDecoder("--trace-syscalls needs python-ptrace: pip install "
                                 "'ztsa[trace]' (or python-ptrace)") from exc
        self._call = PtraceSyscall
        self._names: dict[int, str] = SYSCALL_NAMES
        self._options = FunctionCallOptions(write_types=False, write_argname=False,
                                            replace_socketcall=False,
                                            string_max_length=STRING_MAX,
                                            write_address=False, max_array_count=16)

    def decode(self, pid: int, nr: int, args: list[int]) -> tuple[str, list[str]]:
        """(name, each argument as text); a decoder failure leaves the raw values."""
        regs = _Regs(nr, args)
        try:
            call = self._call(_Tracee(pid, regs), self._options, regs)
            call.enter(regs)
            return str(call.name), [str(a.format()) for a in call.arguments]
        except Exception:
            return self._names.get(nr, f"syscall<{nr}>"), [hex(a) for a in args]
