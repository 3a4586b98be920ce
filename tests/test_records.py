"""ztsa.records.NamedTuple: typing.NamedTuple's class syntax without importing typing."""

from __future__ import annotations

import pickle
import subprocess
import sys

import pytest

from ztsa.records import NamedTuple


class Point(NamedTuple):
    """A point."""

    x: int
    y: int = 0
    tags: tuple[str, ...] = ()

    def norm1(self) -> int:
        return abs(self.x) + abs(self.y)


def test_fields_defaults_methods_and_docstring():
    p = Point(3, -4)
    assert p == (3, -4, ()) and isinstance(p, tuple)
    assert Point._fields == ("x", "y", "tags")
    assert Point._field_defaults == {"y": 0, "tags": ()}
    assert p.norm1() == 7 and p._replace(y=1) == Point(3, 1)
    assert Point.__doc__ == "A point." and Point.__qualname__ == "Point"
    assert Point.__annotations__ == {"x": "int", "y": "int", "tags": "tuple[str, ...]"}
    assert Point.__module__ == __name__
    assert pickle.loads(pickle.dumps(p)) == p
    with pytest.raises(AttributeError):
        p.x = 1  # type: ignore[misc]


def test_what_typing_refuses_is_refused():
    with pytest.raises(TypeError, match="without a default follows"):
        class Bad(NamedTuple):
            a: int = 1
            b: int  # type: ignore[misc]

    with pytest.raises(TypeError, match="no other base"):
        class Mixed(NamedTuple, dict):  # type: ignore[misc]
            a: int


HEAVY = ["typing", "tempfile", "shutil", "random", "signal", "socket", "subprocess", "json"]


def test_exec_does_not_import_typing(tmp_path):
    """The point of the module: `ztsa exec` starts without `typing` (nor its ForwardRef
    compiles), and without the other modules that would cost every run a millisecond or
    more (design.md, "Start-up"). Run as the launcher runs the installed ztsa: -I -S,
    site-packages added."""
    import sysconfig

    # the installed ztsa's site-packages (in a virtual environment -S alone finds none)
    code = ("import sys; sys.path.append(sys.argv[2]); import ztsa.cli as c; "
            "code = c.main(['exec', '--profile', 'repo', '--workspace', sys.argv[1], '--',"
            f" 'true']); print(sorted(set({HEAVY!r}) & set(sys.modules)), code)")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(tmp_path),
                          sysconfig.get_paths()["purelib"]],
                         capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert out.stdout.split() == ["[]", "0"], out.stderr
