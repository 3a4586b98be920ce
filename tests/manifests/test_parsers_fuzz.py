"""Every manifest parser, fed arbitrary text or arbitrary structure, either returns or
raises ParseError: never another exception, never a hang."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ztsa.manifests.bun import parse_bun_lock
from ztsa.manifests.cargo import parse_cargo_lock, parse_cargo_toml
from ztsa.manifests.common import load_yaml
from ztsa.manifests.npm import parse_package_json, parse_package_lock
from ztsa.manifests.pnpm import parse_pnpm_lock
from ztsa.manifests.python import (
    parse_pdm_lock,
    parse_pipfile_lock,
    parse_poetry_lock,
    parse_pylock,
    parse_pyproject,
    parse_requirements,
    parse_uv_lock,
)
from ztsa.manifests.yarn import parse_yarn_lock
from ztsa.parsing import ParseError, load_jsonc, parse_git_config

PARSERS = [parse_bun_lock, parse_cargo_lock, parse_cargo_toml, load_yaml, parse_package_json,
           parse_package_lock, parse_pnpm_lock, parse_pdm_lock, parse_pipfile_lock,
           parse_poetry_lock, parse_pylock, parse_pyproject, parse_requirements, parse_uv_lock,
           parse_yarn_lock, load_jsonc, parse_git_config]
JSON_PARSERS = [parse_package_json, parse_package_lock, parse_pipfile_lock, parse_bun_lock,
                parse_pnpm_lock, load_jsonc, parse_yarn_lock]  # YAML reads JSON too

FUZZ = settings(max_examples=100, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=12), kids,
                                                              max_size=4),
    max_leaves=30)

# fragments that steer random text towards each format's grammar
FRAGMENTS = st.sampled_from([
    "{", "}", "[", "]", ",", ":", '"', "'", "\n", "  ", "=", "#", "//", "/*", "*/", "\\",
    "[[package]]\n", 'name = "x"\n', 'version = "1"\n', "lockfileVersion: '6.0'\n",
    '"lockfileVersion": 3', '"packages": {', '"node_modules/a": {', "packages:\n",
    "  /a@1.0.0:\n", "    resolution: {integrity: x}\n", "__metadata:\n", 'a@1:\n  version "1"\n',
    "-r other.txt\n", "--hash=sha256:00\n", "git+https://x@main#egg=x\n", "flask==1.0 ; ",
    "[core]\n", "\thooksPath = x\n", '[remote "o"]\n', "&a ", "*a ", "!!python/object ",
    "\x00", "\ufeff", "\u202e", "-e ", "version = 4\n", "[metadata]\n", '"_meta": {}',
])
texts = st.lists(FRAGMENTS | st.text(max_size=8), max_size=40).map("".join)


def ok_or_parse_error(parser, text):
    with contextlib.suppress(ParseError):
        parser(text, "fuzzed")


@pytest.mark.parametrize("parser", PARSERS, ids=lambda p: p.__name__)
@FUZZ
@given(text=texts)
def test_arbitrary_text(parser, text):
    ok_or_parse_error(parser, text)


@pytest.mark.parametrize("parser", JSON_PARSERS, ids=lambda p: p.__name__)
@FUZZ
@given(doc=json_values)
def test_arbitrary_structure(parser, doc):
    ok_or_parse_error(parser, json.dumps(doc))


@pytest.mark.parametrize("parser", [parse_package_lock, parse_pipfile_lock, parse_bun_lock],
                         ids=lambda p: p.__name__)
@FUZZ
@given(inner=json_values, version=st.sampled_from([1, 2, 3]))
def test_lock_shaped_structure(parser, inner, version):
    doc = {"lockfileVersion": version, "_meta": {}, "packages": inner, "dependencies": inner,
           "default": inner}
    ok_or_parse_error(parser, json.dumps(doc))


# Cases that found bugs while this suite was written stay here.
REGRESSIONS = [
    (parse_requirements, "click==8.1.7 ; python_version >= '3.8'\n", None),  # shlex ate quotes
    (parse_requirements, "flask[async\n", ParseError),
    (parse_package_lock, '{"lockfileVersion": 1, "dependencies": {"a": 1}}', ParseError),
    (parse_pnpm_lock, "lockfileVersion: '9.0'\npackages: [1, 2]\n", ParseError),
    (parse_bun_lock, '{"lockfileVersion": 1, "packages": {"a": []},}', ParseError),
    (parse_cargo_lock, "version = 9\n", ParseError),
    (load_jsonc, '{"a": "// not a comment", /* c */ "b": [1,],}', None),
]


@pytest.mark.parametrize(("parser", "text", "error"), REGRESSIONS)
def test_regressions(parser, text, error):
    if error is None:
        parser(text, "case")
    else:
        with pytest.raises(error):
            parser(text, "case")


@FUZZ
@given(name=st.from_regex(r"[A-Za-z0-9]([A-Za-z0-9._-]{0,10}[A-Za-z0-9])?", fullmatch=True),
       version=st.from_regex(r"[0-9][0-9A-Za-z.!+_-]{0,8}", fullmatch=True))
def test_fast_pin_path_agrees_with_packaging(name, version):
    """The name==version fast path must read exactly what packaging reads, or refuse."""
    from packaging.requirements import InvalidRequirement, Requirement

    line = f"{name}=={version}"
    try:
        expected = Requirement(line)
    except InvalidRequirement:
        with pytest.raises(ParseError):
            parse_requirements(line + "\n", "r.txt")
        return
    got = parse_requirements(line + "\n", "r.txt").requirements[0]
    assert got.name == expected.name
    assert got.specifier == str(expected.specifier)


yaml_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=12)
    | st.sampled_from(["yes", "No", "on", "007", "0x1F", "1_000", "1e3", "2024-01-01", "~",
                       "-0", "+5", ".inf", "<<", "null", "TRUE", "0o17"]),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(
        st.text(max_size=8) | st.sampled_from(["<<", "yes", "1", "null"]), kids, max_size=4),
    max_leaves=25)


@FUZZ
@given(doc=yaml_values, flow=st.booleans())
def test_yaml_fast_constructor_agrees_with_pyyaml(doc, flow):
    """load_yaml builds core types itself; it must equal PyYAML (same libyaml parser) on any text
    PyYAML's dumper writes, including the scalars YAML 1.1 resolves implicitly."""
    import yaml

    from ztsa.manifests.common import load_yaml

    text = yaml.safe_dump(doc, default_flow_style=flow)
    # also the same values written as plain (unquoted) scalars where the dumper quoted them
    for candidate in (text, text.replace("'", "")):
        try:
            expected = yaml.load(candidate, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except (yaml.YAMLError, ValueError, TypeError, RecursionError):
            with pytest.raises(ParseError):
                load_yaml(candidate, "y")
            continue
        assert load_yaml(candidate, "y") == expected
