"""The keyword arguments ``make_env("gymnasium:<id>", ...)`` takes, for the message of one it
does not.

They go to :class:`hub_gym.GymEnv`, then to the backend's ``make`` (``max_episode_steps``,
``render_mode``, ...), then to the registered env's constructor (``CartPoleEnv``'s
``sutton_barto_reward``). Which ones a given env takes is only sure once the backend tried, so
hub does not refuse a name before: when the backend raises ``TypeError: ... got an unexpected
keyword argument``, :func:`unknown_keyword` turns it into
:class:`hub.errors.UnknownKeywordError` with the close matches among these names.

Example:
    >>> import gymnasium
    >>> "render_mode" in env_keywords(gymnasium, "CartPole-v1")
    True
"""

from __future__ import annotations

import importlib
from typing import Any

import hub
from hub.registry import keywords_of, unexpected_keyword, unknown_keyword_error

__all__ = ["env_keywords", "unknown_keyword"]


def _spec(backend: Any, env_id: str) -> Any:
    registry = backend.envs.registry
    if isinstance(registry, dict):
        return registry.get(env_id)
    return registry.spec(env_id)  # gym < 0.24


def _entry_point(spec: Any) -> Any:
    entry = getattr(spec, "entry_point", None)
    if isinstance(entry, str) and ":" in entry:
        module, _, attribute = entry.partition(":")
        return getattr(importlib.import_module(module), attribute)
    return entry if callable(entry) else None


def env_keywords(backend: Any, env_id: str) -> set[str]:
    """The names ``GymEnv``, ``backend.make`` and the constructor of ``env_id`` take (as far as
    their signatures say)."""
    from hub_gym.env import GymEnv

    names = set(keywords_of(GymEnv, skip=("env", "env_name")).names)
    names |= keywords_of(backend.make, skip=("id", "env_id")).names
    try:
        spec = _spec(backend, env_id)
        names |= set(getattr(spec, "kwargs", None) or getattr(spec, "_kwargs", None) or {})
        entry = _entry_point(spec)
        if entry is not None:
            names |= keywords_of(entry).names
    except Exception:  # the names only serve the message
        pass
    return names


def unknown_keyword(
    exc: TypeError, backend: Any, env_id: str, given: dict[str, Any], uri: str
) -> hub.errors.UnknownKeywordError | None:
    """The error for a name of ``given`` that ``exc`` says the env did not take; ``None`` when
    ``exc`` is about something else."""
    name = unexpected_keyword(exc)
    if name is None or name not in given:
        return None
    return unknown_keyword_error(name, env_keywords(backend, env_id), uri=uri)
