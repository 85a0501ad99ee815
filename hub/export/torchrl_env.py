"""``to_torchrl``: any hub env as a TorchRL ``EnvBase`` (filled in below)."""

from __future__ import annotations

from typing import Any

__all__ = ["to_torchrl"]


def to_torchrl(env: Any) -> Any:
    """Placeholder."""
    raise NotImplementedError
