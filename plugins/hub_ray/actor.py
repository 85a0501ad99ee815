"""The Ray actor: one hub env of batch size ``[k]``, stepped with numpy arrays.

The actor builds its env itself (``build()`` runs in the actor's process, on its node), so that
only a small picklable factory crosses the network, never an env. Each call takes and returns
dicts of numpy arrays (see :mod:`hub_ray.arrays`), which Ray moves through its object store.

Example:
    >>> import functools, hub
    >>> from hub.envs.builtin import CountingEnv
    >>> actor = EnvActor(functools.partial(hub.SerialEnv, 2, CountingEnv))
    >>> actor.reset(None, {})["observation"].ravel().tolist()
    [0, 0]
    >>> actor.step({"action": actor.env.rand_action()["action"].numpy()})["observation"].ravel()
    array([1, 1])
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from typing import Any

import torch

import hub
from hub_ray.arrays import Arrays, arrays_tensordict, tensordict_arrays

__all__ = ["EnvActor", "METHOD"]

#: What ``get_attr`` returns for a method (call it with ``call``).
METHOD = "<method>"


class EnvActor:
    """Holds ``build()`` (an env of batch size ``[k]``) and steps it for a :class:`RayEnv`."""

    def __init__(self, build: Callable[[], Any]) -> None:
        torch.set_num_threads(1)  # the actors of a node share its cores
        self.env = build()
        if not isinstance(self.env, hub.EnvBase):
            raise TypeError(
                f"the actor's env factory returned {type(self.env).__name__}, not a hub.EnvBase."
            )
        self._batch = self.env.batch_size

    # ------------------------------------------------------------ start-up
    def describe(self) -> dict[str, Any]:
        """The env's batch size and specs, and where this actor runs."""
        import ray

        env = self.env
        return {
            "batch_size": tuple(env.batch_size),
            "full_observation_spec": env.full_observation_spec,
            "full_reward_spec": env.full_reward_spec,
            "full_done_spec": env.full_done_spec,
            "full_action_spec": env.full_action_spec,
            "full_state_spec": env.full_state_spec,
            "node_id": ray.get_runtime_context().get_node_id(),
            "node_ip": ray.util.get_node_ip_address(),
            "host": socket.gethostname(),
            "pid": os.getpid(),
        }

    def ping(self) -> bool:
        """``True``: the actor is alive and answers."""
        return True

    # ------------------------------------------------------------ the env contract
    def set_seed(self, seed: int | None, static_seed: bool) -> int | None:
        return self.env.set_seed(seed, static_seed=static_seed)

    def reset(self, arrays: Arrays | None, kwargs: dict[str, Any]) -> Arrays:
        td = None if arrays is None else arrays_tensordict(arrays, self._batch)
        return tensordict_arrays(self.env.reset(td, **kwargs))

    def step(self, arrays: Arrays) -> Arrays:
        td = arrays_tensordict(arrays, self._batch)
        return tensordict_arrays(self.env.step(td).get("next"))

    def step_and_maybe_reset(self, arrays: Arrays) -> tuple[Arrays, Arrays | None]:
        """The step's ``"next"`` data, and the next input when a sub-env was reset (else
        ``None``: the next input is ``"next"`` without the rewards)."""
        env = self.env
        td = arrays_tensordict(arrays, self._batch)
        data, next_input = env.step_and_maybe_reset(td)
        next_arrays = tensordict_arrays(data.get("next"))
        done = [next_arrays[key] for key in env.done_keys if _last(key) == "done"]
        if not any(flag.any() for flag in done):
            return next_arrays, None
        return next_arrays, tensordict_arrays(next_input)

    # ------------------------------------------------------------ attributes
    def get_attr(self, name: str) -> list[Any]:
        """The attribute of each sub-env (one value for a natively batched env)."""
        env = self.env
        values = env.get_attr(name) if isinstance(env, hub.SerialEnv) else [getattr(env, name)]
        return [METHOD if callable(value) else value for value in values]

    def set_attr(self, name: str, values: list[Any]) -> None:
        env = self.env
        if isinstance(env, hub.SerialEnv):
            env.set_attr(name, values)
        else:
            setattr(env, name, values[0])

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        env = self.env
        if isinstance(env, hub.SerialEnv):
            return env.call(name, *args, **kwargs)
        return [getattr(env, name)(*args, **kwargs)]

    def close(self) -> None:
        self.env.close()


def _last(key: Any) -> str:
    return key[-1] if isinstance(key, tuple) else key
