"""hub's dm_control plugin: ``DMControlEnv``, ``DMControlWrapper`` and the dm_env spec conversions.

It serves the namespace ``dm_control:`` with one id per task of dm_control's suite
(``"dm_control:cheetah/run"``). Importing this package imports neither dm_control nor mujoco,
nor any of its own modules: names load on first use.

Example:
    >>> import hub
    >>> env = hub.make_env("dm_control:cartpole/balance", seed=0)
    >>> type(env).__name__, env.batch_size
    ('DMControlEnv', torch.Size([]))
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_LAZY = {
    "DMControlEnv": "hub_dm_control.env",
    "DMControlWrapper": "hub_dm_control.env",
    "RenderingUnavailableError": "hub_dm_control.rendering",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hub_dm_control' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


if TYPE_CHECKING:  # pragma: no cover
    from hub_dm_control.env import DMControlEnv, DMControlWrapper  # noqa: F401
    from hub_dm_control.rendering import RenderingUnavailableError  # noqa: F401
