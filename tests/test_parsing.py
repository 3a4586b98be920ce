"""TOML as Cargo reads it: TOML 1.1's multi-line inline tables parse (biome's
crates/biome_cli/Cargo.toml), and what no TOML version accepts stays a ParseError."""

import pytest

from ztsa.parsing import ParseError, load_toml

CARGO_TOML_1_1 = """[package]
name = "x"

[dependencies]
tokio = {
  workspace = true,
  features  = ["io-std", "macros"],
}
"""


def test_toml_1_1_inline_tables_parse():
    doc = load_toml(CARGO_TOML_1_1, "Cargo.toml")
    assert doc["dependencies"]["tokio"] == {"workspace": True, "features": ["io-std", "macros"]}


def test_invalid_toml_stays_a_parse_error_naming_the_file():
    with pytest.raises(ParseError) as exc:
        load_toml("[package\nname = 1\n", "Cargo.toml")
    assert "Cargo.toml" in str(exc.value) and "not valid TOML" in str(exc.value)


def test_a_rule_reads_a_toml_1_1_manifest(machine):
    from ztsa.model import Status

    machine.ws("Cargo.toml", CARGO_TOML_1_1.replace(
        "workspace = true", 'git = "https://github.com/tokio-rs/tokio"'))
    out = machine.run("SUP006")
    assert out.status is Status.FAIL  # read, not unknown: the git source has no rev
