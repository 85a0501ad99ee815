"""gymnax and Craftax envs as :class:`~hub_jax.simulator.Simulator` records.

Both libraries write an env as ``reset_env(key, params) -> (obs, state)`` and
``step_env(key, state, action, params) -> (obs, state, reward, done, info)`` (Craftax copies
gymnax's base class), and their public ``step`` resets an ended env in the same call. hub calls
``step_env`` and ``reset_env`` instead, so the step that ends an episode returns its true last
observation and the env restarts only when hub resets it. The ``done`` flag is split into
``terminated`` and ``truncated`` (the time limit; see :mod:`hub_jax.compat`).

Keyword arguments that name a field of the env's parameters (``max_steps_in_episode=200``)
replace it; the others go to the library's constructor.

Example:
    >>> sim = gymnax_simulator("CartPole-v1")
    >>> sim.observation_spec((4,))["observation"].shape, sim.discrete_actions
    (torch.Size([4, 4]), True)
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
from typing import Any

import hub
from hub.specs import Composite, Unbounded
from hub_jax.compat import gymnax_broken_ids, gymnax_transition
from hub_jax.simulator import Simulator, cached

__all__ = [
    "LOOSE_BOUNDS",
    "gymnax_simulator",
    "craftax_simulator",
    "gymnax_ids",
    "craftax_ids",
    "NOT_LISTED",
    "CRAFTAX_IDS",
]

#: gymnax ids hub does not list, with the reason
NOT_LISTED = {
    "MNISTBandit-bsuite": "it downloads the MNIST data set from the network when it is built",
}

#: gymnax ids whose observations leave their own observation space: hub gives them unbounded
#: observation specs (the space's bounds would fail every check of the data)
LOOSE_BOUNDS = {
    "MemoryChain-bsuite": "its observation holds -1 where its space says 0 to 2",
    "GaussianBandit-misc": "its observation holds the last reward, negative where its space "
    "says 0 or more",
}

#: the Craftax ids (``make_craftax_env_from_name``), each served without auto-reset
CRAFTAX_IDS = (
    "Craftax-Classic-Symbolic-v1",
    "Craftax-Classic-Pixels-v1",
    "Craftax-Symbolic-v1",
    "Craftax-Pixels-v1",
)

_NO_LIMIT = 2**30  # a time limit no episode reaches


def gymnax_ids() -> list[str]:
    """The gymnax ids hub serves (every registered one but :data:`NOT_LISTED`).

    Example:
        >>> "CartPole-v1" in gymnax_ids()
        True
    """
    import gymnax

    skip = {**NOT_LISTED, **gymnax_broken_ids()}
    return [name for name in gymnax.registered_envs if name not in skip]


def craftax_ids() -> list[str]:
    """The Craftax ids hub serves.

    Example:
        >>> craftax_ids()[0]
        'Craftax-Classic-Symbolic-v1'
    """
    return list(CRAFTAX_IDS)


def _split_kwargs(params: Any, kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The env parameters with the fields named in ``kwargs`` replaced, and the other kwargs."""
    fields = (
        {f.name for f in dataclasses.fields(params)} if dataclasses.is_dataclass(params) else ()
    )
    own = {key: kwargs.pop(key) for key in list(kwargs) if key in fields}
    return (params.replace(**own) if own else params), kwargs


def _observations(obs: Any) -> dict[str, Any]:
    """An env's observation as hub's observation entries (a dict of arrays)."""
    if isinstance(obs, dict):
        return {str(key): value for key, value in obs.items()}
    if isinstance(obs, (tuple, list)):
        return {str(i): value for i, value in enumerate(obs)}
    return {"observation": obs}


def _space_specs(env: Any, params: Any, reset: Any) -> tuple[Any, Any, Any, bool]:
    """(observation spec builder, action spec builder, action dtype, discrete) of an env."""
    import jax
    import jax.numpy as jnp

    returned = jax.eval_shape(reset, jax.random.PRNGKey(0))[0]
    obs_space = env.observation_space(params)
    act_space = env.action_space(params)
    discrete = type(act_space).__name__ == "Discrete"
    kind = type(obs_space).__name__

    def observation_spec(batch: tuple[int, ...]) -> Composite:
        if kind == "Dict":  # its keys are the entries
            like = {key: returned[str(key)] for key in obs_space.spaces}
            return hub.convert_spec(obs_space, batch_size=batch, like=like)
        if kind == "Tuple":  # entries "0", "1", ...
            like = [returned[str(i)] for i in range(len(obs_space.spaces))]
            return hub.convert_spec(obs_space, batch_size=batch, like=like)
        spec = hub.convert_spec(obs_space, batch_size=batch, like=returned["observation"])
        return Composite(observation=spec, shape=batch)

    def action_spec(batch: tuple[int, ...], categorical: bool) -> Any:
        return hub.convert_spec(
            act_space, batch_size=batch, categorical_action_encoding=categorical
        )

    dtype = jnp.int32 if discrete else jnp.dtype(act_space.dtype)
    return observation_spec, action_spec, dtype, discrete


def _unbounded(observation_spec: Any) -> Any:
    """``observation_spec`` with every bounded entry unbounded (its dtype and shape kept)."""

    def spec(batch: tuple[int, ...]) -> Composite:
        out = observation_spec(batch)
        for key in list(out.keys(include_nested=True, leaves_only=True)):
            leaf = out[key]
            out[key] = Unbounded(leaf.shape, dtype=leaf.dtype)
        return out

    return spec


@cached
def gymnax_simulator(env_id: str, **kwargs: Any) -> Simulator:
    """The gymnax env ``env_id`` (``gymnax.make(env_id, **kwargs)``, parameter fields apart).

    Example:
        >>> gymnax_simulator("Pendulum-v1", max_steps_in_episode=50).name
        'Pendulum-v1'
    """
    import gymnax
    import jax.numpy as jnp

    if env_id in NOT_LISTED:
        raise hub.errors.HubError(
            f"hub does not serve gymnax's {env_id}: {NOT_LISTED[env_id]}, which hub's envs do "
            "not do. Use it with gymnax directly."
        )
    broken = gymnax_broken_ids()
    if env_id in broken:
        raise hub.errors.HubError(f"hub does not serve gymnax's {env_id}: {broken[env_id]}.")
    probe, params = gymnax.make(env_id)
    params, env_kwargs = _split_kwargs(params, dict(kwargs))
    env = gymnax.make(env_id, **env_kwargs)[0] if env_kwargs else probe

    def reset(key: Any) -> tuple[dict[str, Any], Any]:
        obs, state = env.reset_env(key, params)
        return _observations(obs), state

    def step(key: Any, state: Any, action: Any) -> tuple:
        obs, state, reward, terminated, truncated = gymnax_transition(
            env, params, key, state, action
        )
        return _observations(obs), state, jnp.asarray(reward, jnp.float32), terminated, truncated

    observation_spec, action_spec, dtype, discrete = _space_specs(env, params, reset)
    if env_id in LOOSE_BOUNDS:
        observation_spec = _unbounded(observation_spec)
    return Simulator(
        name=env_id,
        reset=reset,
        step=step,
        observation_spec=observation_spec,
        action_spec=action_spec,
        action_dtype=dtype,
        discrete_actions=discrete,
        fuse_reset=True,  # gymnax's own step computes a reset every step too
        library="gymnax",
    )


def _build_craftax(env_id: str) -> Any:
    """Craftax's env ``env_id`` without auto-reset. Craftax prints while it loads (or, the first
    time, draws and caches) its textures; hub keeps that off the user's output. A texture cache
    left broken (a process stopped while writing it) is named in the error, with the fix."""
    import pickle

    from craftax.craftax_env import make_craftax_env_from_name

    try:
        with contextlib.redirect_stdout(io.StringIO()):
            return make_craftax_env_from_name(env_id, auto_reset=False)
    except (EOFError, OSError, pickle.UnpicklingError) as err:
        import craftax

        folder = os.path.dirname(craftax.__file__)
        raise hub.errors.HubError(
            f"Craftax could not read its texture cache ({type(err).__name__}: {err}); the file "
            "was probably left half-written by a process that stopped while writing it. Delete "
            f"the texture_cache*.pbz2 files under {folder} and Craftax draws them again."
        ) from err


@cached
def craftax_simulator(env_id: str, **kwargs: Any) -> Simulator:
    """The Craftax env ``env_id`` (``make_craftax_env_from_name(env_id, auto_reset=False)``).

    Example:
        >>> craftax_simulator("Craftax-Classic-Symbolic-v1").discrete_actions
        True
    """
    import jax.numpy as jnp

    if env_id not in CRAFTAX_IDS:
        raise hub.errors.UnknownEnvError(
            f"Craftax has no env {env_id!r}; the ids are {', '.join(CRAFTAX_IDS)}.",
            env_id=env_id,
        )
    env = _build_craftax(env_id)
    params, extra = _split_kwargs(env.default_params, dict(kwargs))
    if extra:
        raise TypeError(
            f"Craftax envs take their env parameters as keyword arguments ("
            f"{', '.join(f.name for f in dataclasses.fields(params))}); got {sorted(extra)}."
        )
    unlimited = params.replace(max_timesteps=_NO_LIMIT)

    def reset(key: Any) -> tuple[dict[str, Any], Any]:
        obs, state = env.reset_env(key, params)
        return _observations(obs), state

    def step(key: Any, state: Any, action: Any) -> tuple:
        obs, state, reward, done, _ = env.step_env(key, state, action, params)
        done = jnp.asarray(done, dtype=bool)
        terminated = done & jnp.asarray(env.is_terminal(state, unlimited), dtype=bool)
        reward = jnp.asarray(reward, jnp.float32)
        return _observations(obs), state, reward, terminated, done & ~terminated

    observation_spec, action_spec, dtype, discrete = _space_specs(env, params, reset)
    return Simulator(
        name=env_id,
        reset=reset,
        step=step,
        observation_spec=observation_spec,
        action_spec=action_spec,
        action_dtype=dtype,
        discrete_actions=discrete,
        fuse_reset=False,  # generating a world costs more than a step
        library="craftax",
    )
