"""Inverted control: simulators that drive themselves and ask hub's learner for actions.

:class:`ExternalEnv` follows RLlib's ExternalEnv: a simulator (a game engine, a robot, a service,
a log reader) calls ``start_episode`` / ``get_action`` / ``log_action`` / ``log_returns`` /
``end_episode``, while the learner sees an :class:`~hub.EnvBase` it can ``step`` and ``rollout``.
:class:`PolicyServer` serves such an env over TCP with a typed, versioned msgpack protocol, and
:class:`PolicyClient` (numpy and msgpack only) is the simulator's side of it.

Names are imported lazily: ``hub.external.client`` needs neither torch nor tensordict.

Example:
    >>> from hub.external import ExternalEnv
    >>> from hub.specs import Categorical, Unbounded
    >>> env = ExternalEnv(Unbounded((4,)), Categorical(2), max_concurrent=2)
    >>> env.batch_size
    torch.Size([2])
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY: dict[str, str] = {
    "ExternalEnv": "hub.external.env",
    "ExternalEnvFullError": "hub.external.episodes",
    "EpisodeError": "hub.external.episodes",
    "set_spec_converter": "hub.external.converter",
    "PolicyServer": "hub.external.server",
    "PolicyClient": "hub.external.client",
    "ProtocolError": "hub.external.protocol",
    "PROTOCOL_VERSION": "hub.external.protocol",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'hub.external' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
