"""``to_gymnasium``: any hub env as a ``gymnasium.Env`` or ``gymnasium.vector.VectorEnv``.

A hub env with batch size ``[]`` becomes a ``gymnasium.Env``; one with batch size ``[N]`` a
``gymnasium.vector.VectorEnv`` of ``N`` sub-envs that resets finished sub-envs itself in
gymnasium's autoreset mode of choice (``NEXT_STEP`` by default; see :mod:`hub.export.vector`).

Example:
    >>> import hub
    >>> genv = hub.to_gymnasium(hub.make_env("hub:Counting", num_envs=2))
    >>> genv.num_envs
    2
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from hub.errors import HubError, MissingDependencyError
from hub.export.codec import export_keys

__all__ = ["to_gymnasium"]


def to_gymnasium(
    env: Any,
    *,
    observation_keys: Sequence[Any] | None = None,
    render_mode: str | None = None,
    autoreset_mode: Any = None,
) -> Any:
    """Export ``env`` for code written against the gymnasium API (Stable-Baselines3, CleanRL...).

    Args:
        env: a hub env with batch size ``[]`` or ``[N]`` and one action entry.
        observation_keys: the observation entries to expose. One key gives its space directly
            (a ``Box``, ``Discrete``...), several a ``Dict`` space. By default ``"observation"``
            alone when the env has it (hub's own envs keep internal state such as Pendulum's
            ``th``/``thdot``/``step_count`` beside it), else ``"pixels"`` alone, else every
            observation entry (see :func:`hub.export.codec.default_observation_keys`).
        render_mode: ``"rgb_array"`` makes ``render()`` return frames; the same as giving it
            to ``make_env`` (the hub env is switched to it where it can be).
        autoreset_mode: for batched envs, gymnasium's ``AutoresetMode`` (``NEXT_STEP`` by
            default, as gymnasium's vector envs; ``SAME_STEP``, ``DISABLED``), see
            :mod:`hub.export.vector`.

    Returns:
        a ``gymnasium.Env`` (batch size ``[]``) or ``gymnasium.vector.VectorEnv`` (``[N]``).

    Example:
        >>> import hub
        >>> genv = hub.to_gymnasium(hub.make_env("hub:Pendulum"), observation_keys=["observation"])
        >>> obs, info = genv.reset(seed=0)
        >>> obs.shape
        (3,)
    """
    try:
        importlib.import_module("gymnasium")
    except ImportError:
        raise MissingDependencyError(
            "gymnasium",
            extra="gymnasium",
            message='to_gymnasium needs gymnasium: pip install "hub[gymnasium]".',
        ) from None
    keys = export_keys(env, observation_keys, "to_gymnasium")
    batch = tuple(env.batch_size)
    if batch == ():
        if autoreset_mode is not None:
            raise HubError("autoreset_mode applies to batched envs (batch size [N]) only.")
        from hub.export.single import HubGymnasiumEnv

        return HubGymnasiumEnv(env, keys, render_mode=render_mode)
    if len(batch) == 1:
        from hub.export.vector import HubVectorEnv

        return HubVectorEnv(env, keys, render_mode=render_mode, autoreset_mode=autoreset_mode)
    raise HubError(
        f"to_gymnasium exports envs of batch size [] or [N]; this one has {list(batch)}. "
        "Flatten the batch dims first."
    )
