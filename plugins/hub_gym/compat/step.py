"""What ``env.step()`` returns, normalised to ``(obs, reward, terminated, truncated, info)``.

gym < 0.26 returns ``(obs, reward, done, info)`` and marks time-limit ends with
``info["TimeLimit.truncated"]``; gym 0.26 and gymnasium return the 5-tuple.

Example:
    >>> import hub
    >>> from hub_gym.compat.step import step_output
    >>> with hub.set_gym_backend("gymnasium"):
    ...     step_output(([0.0], 1.0, True, False, {}))
    ([0.0], 1.0, True, False, {})
"""

from __future__ import annotations

from typing import Any

import hub

__all__ = ["step_output"]

Step = tuple[Any, Any, Any, Any, dict]


@hub.implement_for("gymnasium")
def step_output(output: Any) -> Step:
    """gymnasium's 5-tuple, unchanged."""
    return output


@step_output.register("gym", "0.26")
def _(output: Any) -> Step:
    """gym 0.26's 5-tuple, unchanged."""
    return output


@step_output.register("gym", None, "0.26")
def _(output: Any) -> Step:
    """gym < 0.26: split ``done`` into ``terminated`` and ``truncated`` (``TimeLimit.truncated``).

    An env made with gym 0.25's ``new_step_api=True`` already returns the 5-tuple.
    """
    if len(output) == 5:
        return output
    obs, reward, done, info = output
    truncated = bool(info.get("TimeLimit.truncated", False)) if done else False
    return obs, reward, bool(done) and not truncated, truncated, info
