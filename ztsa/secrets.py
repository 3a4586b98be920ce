"""Secret shapes and names. Values are matched, never reported."""

from __future__ import annotations

import re

from ztsa.lazy import LazyRe

# value shapes of well-known tokens: (label, pattern)
TOKEN_SHAPES: tuple[tuple[str, LazyRe], ...] = tuple(
    (label, LazyRe(rx))
    for label, rx in (
        ("GitHub token", r"\b(gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})"),
        ("GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
        ("AWS access key id", r"\b(AKIA|ASIA)[A-Z0-9]{16}\b"),
        ("Slack token", r"\bxox[bpea]-[A-Za-z0-9-]{10,}"),
        ("npm token", r"\bnpm_[A-Za-z0-9]{36}\b"),
        ("Anthropic key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
        ("OpenAI key", r"\bsk-(proj-)?[A-Za-z0-9_-]{20,}"),
        ("Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}"),
        ("Google API key", r"\bAIza[0-9A-Za-z_-]{35}"),
        ("PyPI token", r"\bpypi-[A-Za-z0-9_-]{50,}"),
    )
)

SECRET_NAME = LazyRe(
    r"(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|PRIVATE_KEY|ACCESS_KEY|CREDENTIAL|AUTH_KEY)",
    re.I,
)
# names that match SECRET_NAME but never hold a secret
NOT_SECRET_NAMES = frozenset({"GPG_TTY"})


# every shape above starts with one of these: values without any skip the regexes
_PREFIXES = ("gh", "github_pat_", "glpat-", "AKIA", "ASIA", "xox", "npm_", "sk-", "hf_",
             "AIza", "pypi-")


def token_kind(value: str) -> str | None:
    """The label of the first known token shape found in ``value``."""
    if not any(p in value for p in _PREFIXES):
        return None
    for label, rx in TOKEN_SHAPES:
        if rx.search(value):
            return label
    return None


def redact(text: str) -> str:
    """Replace every known token shape in ``text`` with a marker."""
    for label, rx in TOKEN_SHAPES:
        text = rx.sub(f"<redacted {label}>", text)
    return text
