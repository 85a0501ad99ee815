"""hub's gym and gymnasium plugin: ``GymEnv``, ``GymWrapper`` and the spec conversions.

It serves the namespaces ``gymnasium:`` and ``gym:`` and declares the backend family ``"gym"``
(candidates ``gymnasium``, then ``gym``). Importing this package imports neither gym nor
gymnasium, nor any of its own modules: names load on first use.

Example:
    >>> import hub
    >>> env = hub.make_env("gymnasium:CartPole-v1")
    >>> type(env).__name__, env.batch_size
    ('GymEnv', torch.Size([]))
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_LAZY = {
    "GymEnv": "hub_gym.env",
    "GymWrapper": "hub_gym.env",
    "InfoDictReader": "hub_gym.info",
    "default_info_dict_reader": "hub_gym.info",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hub_gym' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:  # pragma: no cover
    from hub_gym.env import GymEnv, GymWrapper  # noqa: F401
    from hub_gym.info import InfoDictReader, default_info_dict_reader  # noqa: F401
