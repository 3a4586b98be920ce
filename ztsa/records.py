"""typing.NamedTuple's class syntax, without importing typing at run time.

ztsa's start-up is paid before every agent command, and `typing` is one of its dearest
imports, with more for each field of each `typing.NamedTuple` class (it turns every
string annotation into a ForwardRef, compiling it; figures in docs/performance.md).
The classes here are plain `collections.namedtuple` classes with the class body's
methods, docstring and annotations, and the type checker sees `typing.NamedTuple`
itself. Modules write `TYPE_CHECKING = False` and import from typing under
`if TYPE_CHECKING:` (mypy treats any condition of that name as true).

Only the class syntax is provided: fields are the body's annotations, in order;
defaults are the values assigned to them (after the fields without one)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple as NamedTuple
else:
    from collections import namedtuple

    _SKIP = frozenset({"__annotations__", "__module__", "__qualname__", "__dict__",
                       "__weakref__"})

    class _NamedTupleMeta(type):
        def __new__(mcls, name, bases, ns):
            if not ns.get("_records_base"):
                return _build(name, bases, ns)
            return super().__new__(mcls, name, bases, ns)

    def _build(name, bases, ns):
        if bases != (NamedTuple,):
            raise TypeError(f"{name}: a NamedTuple record has no other base")
        fields = list(ns.get("__annotations__", {}))
        defaults = [ns[f] for f in fields if f in ns]
        if any(f in ns for f in fields[:len(fields) - len(defaults)]):
            raise TypeError(f"{name}: a field without a default follows one with a default")
        cls = namedtuple(name, fields, defaults=defaults, module=ns.get("__module__"))
        for key, value in ns.items():
            if key not in _SKIP and key not in fields and key != "_records_base":
                setattr(cls, key, value)
        cls.__annotations__ = dict(ns.get("__annotations__", {}))
        cls.__qualname__ = ns.get("__qualname__", name)
        return cls

    class NamedTuple(metaclass=_NamedTupleMeta):
        _records_base = True
