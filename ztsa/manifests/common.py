"""Shared helpers: bounded structure walks, YAML without alias bombs, line indexes."""

from __future__ import annotations

import posixpath
import re

from ztsa.context import Context
from ztsa.manifests import MAX_LOCK_BYTES
from ztsa.parsing import ParseError, structural

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_NODES = 5_000_000


def check_size(doc: Any, name: str, budget: int = MAX_NODES) -> Any:
    """Walk a parsed document once per distinct container (YAML aliases share them, so an
    alias bomb costs no more than its text) and refuse one with too many nodes."""
    stack = [doc]
    seen: set[int] = set()
    count = 0
    while stack:
        node = stack.pop()
        count += 1
        if count > budget:
            raise ParseError(name, f"more than {budget} nodes")
        if isinstance(node, dict | list):
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.extend(node.values() if isinstance(node, dict) else node)
    return doc


_BOOL = {"yes": True, "true": True, "on": True, "no": False, "false": False, "off": False}
_CORE = "tag:yaml.org,2002:"


class _NotCore(Exception):
    """A node outside the core types: let PyYAML's own constructor handle the file."""


def _construct(root: Any) -> Any:
    """Nodes composed by libyaml (PyYAML's C parser, composer and resolver) to Python
    values, for the core tags only (str, bool, int, float, null, seq, map). This is
    PyYAML's SafeConstructor restricted to what lockfiles use, and much faster;
    anything else raises _NotCore and the caller falls back to yaml.load. Shared nodes
    (aliases) are built once."""
    import yaml

    memo: dict[int, Any] = {}

    def build(node: Any) -> Any:
        key = id(node)
        if key in memo:
            return memo[key]
        tag = node.tag
        if isinstance(node, yaml.ScalarNode):
            v = node.value
            if tag == _CORE + "str":
                out: Any = v
            elif tag == _CORE + "bool":
                out = _BOOL[v.lower()]
            elif tag == _CORE + "null":
                out = None
            elif tag == _CORE + "int" and v.lstrip("+-").isdigit() and not (
                    v.lstrip("+-").startswith("0") and len(v.lstrip("+-")) > 1):
                out = int(v)
            else:
                raise _NotCore(tag)
        elif isinstance(node, yaml.SequenceNode) and tag == _CORE + "seq":
            out = memo[key] = []
            out.extend(build(x) for x in node.value)
        elif isinstance(node, yaml.MappingNode) and tag == _CORE + "map":
            out = memo[key] = {}
            for k, v in node.value:
                if k.tag == _CORE + "merge":
                    raise _NotCore("merge key")
                kk = build(k)
                if not isinstance(kk, str | int | bool | None):
                    raise _NotCore("complex key")
                out[kk] = build(v)
        else:
            raise _NotCore(tag)
        memo[key] = out
        return out

    return build(root)


@structural
def load_yaml_documents(text: str, name: str) -> list[Any]:
    import yaml

    loader_cls = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        docs: list[Any] = []
        loader = loader_cls(text)
        try:
            while loader.check_node():
                node = loader.get_node()
                docs.append(_construct(node) if node is not None else None)
        finally:
            loader.dispose()
    except _NotCore:
        try:
            docs = list(yaml.load_all(text, Loader=loader_cls))
        except (yaml.YAMLError, RecursionError, ValueError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ParseError(name, f"not valid YAML: {reason}") from exc
    except (yaml.YAMLError, RecursionError, ValueError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ParseError(name, f"not valid YAML: {reason}") from exc
    return [check_size(d, name) for d in docs]


@structural
def load_yaml(text: str, name: str) -> Any:
    docs = load_yaml_documents(text, name)
    return docs[-1] if docs else None


def read(ctx: Context, rel: str, limit: int = MAX_LOCK_BYTES) -> str | None:
    return ctx.ws_text(rel, limit)


def key_lines(text: str, pattern: str) -> dict[str, int]:
    """Map the first capture group of a per-line regex to its 1-based line."""
    rx = re.compile(pattern)
    out: dict[str, int] = {}
    for i, line in enumerate(text.splitlines(), start=1):
        m = rx.match(line)
        if m and m.group(1) not in out:
            out[m.group(1)] = i
    return out


def dirname(rel: str) -> str:
    d = posixpath.dirname(rel)
    return d


def join(d: str, name: str) -> str:
    return posixpath.join(d, name) if d else name


def ancestors(d: str) -> list[str]:
    """d, its parent, ... up to the workspace root ("")."""
    out = [d]
    while d:
        d = posixpath.dirname(d)
        out.append(d)
    return out
