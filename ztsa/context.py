"""What a rule's check receives: the host view, the workspace and the run's options."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ztsa.host import Host
from ztsa.model import Profile


@dataclass
class Context:
    host: Host
    workspace: str
    profile: Profile = Profile.UNTRUSTED
    options: dict[str, Any] = field(default_factory=dict)
    # results shared between rules (e.g. isolation detection, found manifests)
    cache: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.workspace = os.path.abspath(self.workspace)

    def in_workspace(self, real_path: str) -> bool:
        real = os.path.realpath(real_path)
        ws = os.path.realpath(self.workspace)
        return real == ws or real.startswith(ws + os.sep)
