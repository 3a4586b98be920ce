"""`ztsa exec --secret SPEC`: a credential given to CMD in its environment, and nowhere
else: never written inside the sandbox, never in the audit log (which names it only).

SPEC is one of
  NAME              the caller's own $NAME
  NAME=env:OTHER    the caller's $OTHER
  NAME=file:PATH    the contents of PATH (one trailing newline dropped)
  NAME=cmd:COMMAND  what `sh -c COMMAND` prints (one trailing newline dropped), run by
                    ztsa before the run, outside the sandbox, as the caller
"""

from __future__ import annotations

import os
import re

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class SecretError(ValueError):
    pass


def parse(spec: str, environ: dict[str, str]) -> tuple[str, str]:
    """(NAME, value) for one SPEC. SecretError says what is wrong, never the value."""
    name, sep, source = spec.partition("=")
    if not NAME.match(name):
        raise SecretError(f"--secret {name!r}: a variable name is letters, digits and _")
    kind, _, arg = source.partition(":")
    if not sep or kind == "env":
        other = arg if sep else name
        if other not in environ:
            raise SecretError(f"--secret {spec}: ${other} is not set")
        value = environ[other]
    elif kind == "file":
        try:
            with open(os.path.expanduser(arg), "rb") as f:
                value = os.fsdecode(f.read())
        except OSError as exc:
            raise SecretError(f"--secret {name}: cannot read {arg}: {exc.strerror}") from None
        value = value.removesuffix("\n")
    elif kind == "cmd":
        import subprocess

        done = subprocess.run(["/bin/sh", "-c", arg], stdout=subprocess.PIPE, check=False)
        if done.returncode != 0:
            raise SecretError(f"--secret {name}: the command exited {done.returncode}")
        value = os.fsdecode(done.stdout).removesuffix("\n")
    else:
        raise SecretError(f"--secret {spec.split('=', 1)[0]}=...: expected NAME, "
                          "NAME=env:OTHER, NAME=file:PATH or NAME=cmd:COMMAND")
    if "\0" in value:
        raise SecretError(f"--secret {name}: the value holds a NUL byte")
    if not value:
        raise SecretError(f"--secret {name}: the value is empty")
    return name, value


def load(specs: list[str], environ: dict[str, str]) -> dict[str, str]:
    return dict(parse(spec, environ) for spec in specs)
