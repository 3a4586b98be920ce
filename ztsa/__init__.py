"""ztsa, the Zero-Trust Sandbox Auditor."""

__version__ = "0.1.0"
