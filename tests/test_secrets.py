"""Every token shape is found, and the fast pre-filter never hides one."""

import pytest

from ztsa.secrets import TOKEN_SHAPES, redact, token_kind

SAMPLES = {
    "GitHub token": ["ghp_" + "a" * 36, "github_pat_" + "B" * 50],
    "GitLab token": ["glpat-" + "c" * 20],
    "AWS access key id": ["AKIA" + "D" * 16, "ASIA" + "E" * 16],
    "Slack token": ["xoxb-" + "1" * 12],
    "npm token": ["npm_" + "f" * 36],
    "Anthropic key": ["sk-ant-" + "g" * 30],
    "OpenAI key": ["sk-proj-" + "h" * 30],
    "Hugging Face token": ["hf_" + "i" * 34],
    "Google API key": ["AIza" + "j" * 35],
    "PyPI token": ["pypi-" + "k" * 60],
}


def test_samples_cover_every_shape():
    assert set(SAMPLES) == {label for label, _ in TOKEN_SHAPES}


@pytest.mark.parametrize(("label", "value"), [(k, v) for k, vs in SAMPLES.items() for v in vs])
def test_each_shape_is_found_and_redacted(label, value):
    assert token_kind(f"export X={value} # note") == label
    assert value not in redact(f"token {value} here")


def test_ordinary_values_are_not_tokens():
    for value in ("/usr/bin:/bin", "en_US.UTF-8", "xterm-256color", "skeleton", "hfs"):
        assert token_kind(value) is None
