"""Brax envs as :class:`~hub_jax.simulator.Simulator` records.

A Brax env is ``reset(key) -> State`` and ``step(State, action) -> State`` with no time limit of
its own (``brax.envs.create`` adds one with a wrapper). hub keeps a step count beside Brax's state
and truncates an episode after ``episode_length`` steps (1000 by default, as ``brax.envs.create``);
``State.done`` (an unhealthy ant, a fallen hopper) is ``terminated``. Actions are ``[-1, 1]``
floats of ``env.action_size``; the observation is ``State.obs`` (a dict of arrays for envs whose
observation is a dict).

Example:
    >>> sim = brax_simulator("fast")
    >>> sim.observation_spec((2,))["observation"].shape, sim.action_spec((2,), False).shape
    (torch.Size([2, 2]), torch.Size([2, 1]))
"""

from __future__ import annotations

import contextlib
import io
from typing import Any

import hub
from hub.specs import Bounded, Composite, Unbounded, torch_dtype
from hub_jax.simulator import Simulator, cached

__all__ = ["brax_simulator", "brax_ids", "DEFAULT_EPISODE_LENGTH"]

DEFAULT_EPISODE_LENGTH = 1000


def _brax_envs() -> Any:
    """``brax.envs``, imported with its ``print`` of missing optional modules ("Failed to import
    warp", from MuJoCo's MJX) kept off the user's output."""
    with contextlib.redirect_stdout(io.StringIO()):
        from brax import envs
    return envs


def brax_ids() -> list[str]:
    """The env names Brax registers (``brax.envs.get_environment``).

    Example:
        >>> "ant" in brax_ids()
        True
    """
    return sorted(_brax_envs()._envs)  # Brax's registry: a dict, no public listing function


@cached
def brax_simulator(
    env_id: str, *, episode_length: int = DEFAULT_EPISODE_LENGTH, **kwargs: Any
) -> Simulator:
    """The Brax env ``env_id`` (``brax.envs.get_environment(env_id, **kwargs)``, e.g.
    ``backend="positional"``), truncated after ``episode_length`` steps.

    Example:
        >>> brax_simulator("fast", episode_length=10).library
        'brax'
    """
    import jax
    import jax.numpy as jnp
    import numpy as np

    envs = _brax_envs()

    if env_id not in brax_ids():
        raise hub.errors.UnknownEnvError(
            f"Brax has no env {env_id!r}; it registers {', '.join(brax_ids())}.", env_id=env_id
        )
    if episode_length < 1:
        raise ValueError(f"episode_length must be at least 1, got {episode_length}.")
    env = envs.get_environment(env_id, **kwargs)
    limit = int(episode_length)

    def observations(obs: Any) -> dict[str, Any]:
        if isinstance(obs, dict):
            return {str(key): value for key, value in obs.items()}
        return {"observation": obs}

    def reset(key: Any) -> tuple[dict[str, Any], Any]:
        state = env.reset(key)
        return observations(state.obs), (state, jnp.int32(0))

    def step(key: Any, state: Any, action: Any) -> tuple:
        inner, count = state
        inner = env.step(inner, action)
        count = count + 1
        terminated = inner.done > 0.5
        truncated = (count >= limit) & ~terminated
        reward = jnp.asarray(inner.reward, jnp.float32)
        return observations(inner.obs), (inner, count), reward, terminated, truncated

    returned = jax.eval_shape(reset, jax.random.PRNGKey(0))[0]
    size = int(env.action_size)

    def observation_spec(batch: tuple[int, ...]) -> Composite:
        return Composite(
            {
                key: Unbounded((*batch, *like.shape), dtype=torch_dtype(np.dtype(like.dtype)))
                for key, like in returned.items()
            },
            shape=batch,
        )

    def action_spec(batch: tuple[int, ...], categorical: bool) -> Bounded:
        return Bounded(-1.0, 1.0, shape=(*batch, size))

    return Simulator(
        name=env_id,
        reset=reset,
        step=step,
        observation_spec=observation_spec,
        action_spec=action_spec,
        action_dtype=jnp.float32,
        discrete_actions=False,
        fuse_reset=False,  # a Brax reset (the pipeline's initial state) costs like a step
        library="brax",
    )
