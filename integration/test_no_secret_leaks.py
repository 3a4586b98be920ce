"""Planted realistic fake tokens never appear in any output format."""

from __future__ import annotations

import os
import subprocess

import pytest

# Fake tokens in the shapes of real ones (none is valid anywhere).
TOKENS = {
    "GITHUB_TOKEN": "ghp_" + "Zq8mN3vR7tY2wK5pL9xC4bH6jD1fG0sA3eU7",
    "GH_PAT": "github_pat_11ABCDEFG0" + "x" * 60,
    "AWS_ACCESS_KEY_ID": "AKIA" + "Q7WERTYUIOPASDFG",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "NPM_TOKEN": "npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "ANTHROPIC_API_KEY": "sk-ant-api03-" + "Q" * 80,
    "OPENAI_API_KEY": "sk-proj-" + "R" * 60,
    "SLACK_BOT": "xoxb-" + "123456789012-1234567890123-" + "S" * 24,
    "PYPI_UPLOAD": "pypi-AgEIcHlwaS5vcmc" + "T" * 60,
}


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_no_token_value_in_any_format(ztsa_bin, tmp_path, fmt):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".npmrc").write_text(f"//registry.npmjs.org/:_authToken={TOKENS['NPM_TOKEN']}\n")
    (ws / ".pypirc").write_text(
        f"[pypi]\nusername = __token__\npassword = {TOKENS['PYPI_UPLOAD']}\n")
    (ws / ".yarnrc.yml").write_text(f"npmAuthToken: {TOKENS['GITHUB_TOKEN']}\n")
    (ws / "AGENTS.md").write_text(f"Use {TOKENS['ANTHROPIC_API_KEY']} to call the API\n")
    env = {**os.environ, **TOKENS, "DOCKER_HOST": f"tcp://{TOKENS['AWS_ACCESS_KEY_ID']}:1"}
    out_file = tmp_path / "report"
    proc = subprocess.run([ztsa_bin, "check", "--format", fmt, str(ws)], env=env,
                          capture_output=True, text=True, timeout=120)
    proc_file = subprocess.run([ztsa_bin, "check", "--format", fmt, "--output", str(out_file),
                                str(ws)], env=env, capture_output=True, text=True, timeout=120)
    outputs = proc.stdout + proc.stderr + proc_file.stderr + out_file.read_text()
    assert proc.returncode == 3
    assert "FS005" in outputs and "FS006" in outputs
    for name, value in TOKENS.items():
        assert value not in outputs, f"{name} leaked in {fmt} output"
        assert value[8:24] not in outputs, f"part of {name} leaked in {fmt} output"
