"""``Simulator``: one JAX environment as the pure functions hub batches, with its specs.

Every JAX library hub serves (gymnax, Craftax, Brax) is described by the same small record: a
``reset(key)`` and a ``step(key, state, action)`` for *one* env, without auto-reset, whose
observations are a dict of arrays keyed by hub's observation keys and whose step returns the
``terminated`` and ``truncated`` flags apart. :class:`~hub_jax.runner.JaxRunner` vmaps and jits
them; the library modules (:mod:`hub_jax.gymnax_family`, :mod:`hub_jax.brax_family`) build them.

Example:
    >>> import jax.numpy as jnp
    >>> from hub.specs import Composite, Unbounded, Bounded
    >>> sim = Simulator(
    ...     name="walk",
    ...     reset=lambda key: ({"observation": jnp.zeros(1)}, jnp.zeros(1)),
    ...     step=lambda key, s, a: ({"observation": s + a}, s + a, jnp.float32(1.0),
    ...                             jnp.bool_(False), jnp.bool_(False)),
    ...     observation_spec=lambda batch: Composite(observation=Unbounded((*batch, 1)), shape=batch),
    ...     action_spec=lambda batch, categorical: Bounded(-1.0, 1.0, (*batch, 1)),
    ...     action_dtype=jnp.float32,
    ... )
    >>> sim.observation_spec((2,))["observation"].shape
    torch.Size([2, 1])
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Simulator", "cached"]


@dataclass(frozen=True, eq=False)  # hashed by identity: the runner caches per simulator
class Simulator:
    """One JAX env as pure functions and specs.

    Attributes:
        name: the env id (for messages and ``repr``).
        reset: ``reset(key) -> (observations, state)`` for one env; ``observations`` is a dict
            from hub observation keys to arrays.
        step: ``step(key, state, action) -> (observations, state, reward, terminated,
            truncated)`` for one env, with no auto-reset: the observations of an ending step
            are the episode's true last ones.
        observation_spec: ``observation_spec(batch_shape) -> Composite``.
        action_spec: ``action_spec(batch_shape, categorical_action_encoding) -> TensorSpec``.
        action_dtype: the dtype the library's step takes its action in.
        discrete_actions: actions are category indices (a one-hot action is turned into its
            index before it reaches the library).
        fuse_reset: compute each step's reset candidates inside the step (as the library's own
            auto-resetting step does), so that resetting the envs that ended costs no second
            call; worth it when a reset is cheap next to a step.
        library: the distribution that simulates the env (``"gymnax"``), for ``repr``.
        reward_shape: the shape of one env's reward (``(1,)``; one per agent or objective for
            envs that reward several).
        observation_keys: hub's nested key of each observation the functions return under a
            flat string key (JAX sorts a dict's keys: they must all be strings there).
    """

    name: str
    reset: Callable[[Any], tuple[dict[str, Any], Any]]
    step: Callable[[Any, Any, Any], tuple[dict[str, Any], Any, Any, Any, Any]]
    observation_spec: Callable[[tuple[int, ...]], Any]
    action_spec: Callable[[tuple[int, ...], bool], Any]
    action_dtype: Any
    discrete_actions: bool = False
    fuse_reset: bool = False
    library: str = ""
    reward_shape: tuple[int, ...] = (1,)
    observation_keys: dict[str, Any] = field(default_factory=dict)


def cached(build: Callable[..., Simulator]) -> Callable[..., Simulator]:
    """``build(env_id, **kwargs)`` that returns the same :class:`Simulator` for the same
    arguments (when they are hashable), so that envs built alike share their compiled functions:
    a Brax or Craftax step compiles for tens of seconds on a CPU.

    Example:
        >>> calls = []
        >>> @cached
        ... def build(env_id, **kwargs):
        ...     calls.append(env_id)
        ...     return env_id
        >>> build("a", x=1), build("a", x=1), calls
        ('a', 'a', ['a'])
    """
    built: dict[Any, Simulator] = {}

    @functools.wraps(build)
    def wrapper(env_id: str, **kwargs: Any) -> Simulator:
        key = (env_id, tuple(sorted(kwargs.items())))
        try:
            hash(key)
        except TypeError:  # unhashable arguments: build anew
            return build(env_id, **kwargs)
        if key not in built:
            built[key] = build(env_id, **kwargs)
        return built[key]

    return wrapper
