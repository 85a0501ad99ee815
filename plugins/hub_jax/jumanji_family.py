"""Jumanji envs as :class:`~hub_jax.simulator.Simulator` records.

A Jumanji env is ``reset(key) -> (state, timestep)`` and ``step(state, action) -> (state,
timestep)``, without auto-reset; a ``TimeStep`` carries the observation (a named tuple of arrays),
the reward, the discount and the step type. hub reads:

* observations: one entry per field of the observation (nested fields give nested keys), with
  the bounds of Jumanji's ``observation_spec`` (``BoundedArray``, ``MultiDiscreteArray``) and the
  dtype and shape the env returns; a ``DiscreteArray`` field is an integer without bounds (TSP's
  ``position`` is -1 before the first step, though its spec says 0 to 19);
* ``terminated``: the last step of an episode whose discount is 0; ``truncated``: a last step
  with a discount left (a time limit);
* the reward: one float, or one per agent for Jumanji's multi-agent envs (``Connector``,
  ``LevelBasedForaging``, ``SearchAndRescue``), whose reward spec has the agents' shape;
* actions: ``DiscreteArray`` as one-hot (``Categorical`` with ``categorical_action_encoding``),
  ``MultiDiscreteArray`` as ``MultiOneHot`` (``MultiCategorical``), ``BoundedArray`` as ``Bounded``.

Example:
    >>> sim = jumanji_simulator("Snake-v1")
    >>> sorted(sim.observation_spec((2,)).keys())
    ['action_mask', 'grid', 'step_count']
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

import hub
from hub.specs import (
    Bounded,
    Categorical,
    Composite,
    MultiCategorical,
    MultiOneHot,
    OneHot,
    Unbounded,
    torch_dtype,
)
from hub_jax.simulator import Simulator, cached

__all__ = ["jumanji_simulator", "jumanji_ids", "NOT_LISTED"]

#: Jumanji ids hub does not list, with the reason
NOT_LISTED = {
    "Sokoban-v0": "it downloads its levels from the Hugging Face Hub when it is built",
}


def jumanji_ids() -> list[str]:
    """The Jumanji ids hub serves (every registered one but :data:`NOT_LISTED`).

    Example:
        >>> "Snake-v1" in jumanji_ids()
        True
    """
    import jumanji

    return sorted(name for name in jumanji.registered_environments() if name not in NOT_LISTED)


def _key_of(path: tuple) -> tuple[str, ...]:
    """hub's key of a leaf of an observation tree, as a tuple of names (one for a flat field)."""
    names = []
    for part in path:
        for attr in ("name", "key", "idx"):
            if hasattr(part, attr):
                names.append(str(getattr(part, attr)))
                break
    return tuple(names)


def _flat_key(path: tuple) -> str:
    """The key of a leaf inside the jitted functions: a string (JAX sorts a dict's keys, and
    strings do not sort beside tuples)."""
    return "/".join(_key_of(path))


def _hub_key(path: tuple) -> Any:
    key = _key_of(path)
    return key[0] if len(key) == 1 else key


def _spec_at(spec: Any, path: tuple) -> Any:
    """Jumanji's spec of the leaf at ``path`` of an observation, else ``None``."""
    for part in path:
        name = getattr(part, "name", None) or getattr(part, "key", None)
        spec = getattr(spec, str(name), None) if name is not None else None
        if spec is None:
            return None
    return spec


def _leaf_spec(spec: Any, like: Any, batch: tuple[int, ...]) -> Any:
    """A hub spec for one observation leaf: bounds from Jumanji's spec, dtype and shape from
    what the env returns (``like``)."""
    dtype = torch_dtype(np.dtype(like.dtype))
    shape = (*batch, *(tuple(like.shape) or (1,)))  # a scalar per env is one number per row
    kind = type(spec).__name__
    if dtype == torch.bool:
        return Categorical(2, shape=shape, dtype=torch.bool)
    if kind in ("BoundedArray", "MultiDiscreteArray"):
        try:
            low = np.broadcast_to(np.asarray(spec.minimum, dtype=np.float64), like.shape)
            high = np.broadcast_to(np.asarray(spec.maximum, dtype=np.float64), like.shape)
        except ValueError:
            return Unbounded(shape, dtype=dtype)
        low_t = torch.as_tensor(np.array(low)).to(dtype).expand(shape)
        high_t = torch.as_tensor(np.array(high)).to(dtype).expand(shape)
        return Bounded(low_t, high_t, shape=shape, dtype=dtype)
    return Unbounded(shape, dtype=dtype)


def _action_spec(spec: Any, batch: tuple[int, ...], categorical: bool) -> Any:
    kind = type(spec).__name__
    if kind == "DiscreteArray":
        n = int(spec.num_values)
        if categorical:
            return Categorical(n, shape=batch)
        return OneHot(n, shape=(*batch, n))
    if kind == "MultiDiscreteArray":
        nvec = [int(v) for v in np.asarray(spec.num_values).reshape(-1)]
        if np.asarray(spec.num_values).ndim != 1:
            raise hub.errors.SpecConversionError(
                f"Jumanji action spec {spec!r}: hub converts MultiDiscreteArray actions with a "
                "1-D num_values."
            )
        if categorical:
            return MultiCategorical(nvec, shape=(*batch, len(nvec)))
        return MultiOneHot(nvec, shape=(*batch, sum(nvec)))
    low = np.asarray(spec.minimum, dtype=np.float32)
    high = np.asarray(spec.maximum, dtype=np.float32)
    shape = (*batch, *spec.shape)
    return Bounded(
        torch.as_tensor(np.array(np.broadcast_to(low, spec.shape))).expand(shape),
        torch.as_tensor(np.array(np.broadcast_to(high, spec.shape))).expand(shape),
        shape=shape,
        dtype=torch_dtype(np.dtype(spec.dtype)),
    )


@cached
def jumanji_simulator(env_id: str, **kwargs: Any) -> Simulator:
    """The Jumanji env ``env_id`` (``jumanji.make(env_id, **kwargs)``).

    Example:
        >>> jumanji_simulator("Game2048-v1").discrete_actions
        True
    """
    import jax
    import jax.numpy as jnp
    import jumanji

    if env_id in NOT_LISTED:
        raise hub.errors.HubError(
            f"hub does not serve Jumanji's {env_id}: {NOT_LISTED[env_id]}, which hub's envs do "
            "not do. Use it with Jumanji directly."
        )
    env = jumanji.make(env_id, **kwargs)
    last = jumanji.types.StepType.LAST

    def observations(obs: Any) -> dict[Any, Any]:
        leaves = jax.tree_util.tree_flatten_with_path(obs)[0]
        return {_flat_key(path): leaf for path, leaf in leaves}

    def flags(timestep: Any) -> tuple[Any, Any]:
        ended = timestep.step_type == last
        terminated = ended & jnp.all(timestep.discount == 0)
        return terminated, ended & ~terminated

    def reset(key: Any) -> tuple[dict[Any, Any], Any]:
        state, timestep = env.reset(key)
        return observations(timestep.observation), state

    def step(key: Any, state: Any, action: Any) -> tuple:
        state, timestep = env.step(state, action)
        terminated, truncated = flags(timestep)
        reward = jnp.asarray(timestep.reward, jnp.float32)
        return observations(timestep.observation), state, reward, terminated, truncated

    key = jax.random.PRNGKey(0)
    first = jax.eval_shape(env.reset, key)[1]
    leaves = jax.tree_util.tree_flatten_with_path(first.observation)[0]
    obs_spec = env.observation_spec
    action = env.action_spec
    reward_shape = tuple(first.reward.shape) or (1,)

    def observation_spec(batch: tuple[int, ...]) -> Composite:
        spec = Composite(shape=batch)
        for path, like in leaves:
            spec[_hub_key(path)] = _leaf_spec(_spec_at(obs_spec, path), like, batch)
        return spec

    def action_spec(batch: tuple[int, ...], categorical: bool) -> Any:
        return _action_spec(action, batch, categorical)

    kind = type(action).__name__
    return Simulator(
        name=env_id,
        reset=reset,
        step=step,
        observation_spec=observation_spec,
        action_spec=action_spec,
        action_dtype=jnp.dtype(action.dtype),
        discrete_actions=kind in ("DiscreteArray", "MultiDiscreteArray"),
        fuse_reset=False,
        library="jumanji",
        reward_shape=reward_shape,
        observation_keys={
            _flat_key(path): _hub_key(path) for path, _ in leaves if len(_key_of(path)) > 1
        },
    )
