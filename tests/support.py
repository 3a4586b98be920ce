"""Test helpers importable by name (conftest modules of tests/ and integration/ clash)."""

from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "supply"
