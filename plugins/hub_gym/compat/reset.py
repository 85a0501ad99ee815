"""What ``env.reset()`` returns: ``obs`` (gym < 0.26) or ``(obs, info)`` (gym 0.26, gymnasium).

Example:
    >>> import hub
    >>> from hub_gym.compat.reset import reset_output
    >>> with hub.set_gym_backend("gymnasium"):
    ...     reset_output(([0.0], {"a": 1}))
    ([0.0], {'a': 1})
"""

from __future__ import annotations

from typing import Any

import hub

__all__ = ["reset_output"]


@hub.implement_for("gymnasium")
def reset_output(output: Any) -> tuple[Any, dict]:
    """``(obs, info)``: gymnasium's ``reset`` already returns it."""
    return output


@reset_output.register("gym", "0.26")
def _(output: Any) -> tuple[Any, dict]:
    """``(obs, info)``: gym 0.26's ``reset`` already returns it."""
    return output


@reset_output.register("gym", None, "0.26")
def _(output: Any) -> tuple[Any, dict]:
    """gym < 0.26 returns ``obs``, or ``(obs, info)`` when called with ``return_info=True``."""
    if isinstance(output, tuple) and len(output) == 2 and isinstance(output[1], dict):
        return output
    return output, {}
