"""The Ray actor: one hub env of batch size ``[k]``, stepped with numpy arrays.

The actor builds its env itself (``build()`` runs in the actor's process, on its node), so that
only a small picklable factory crosses the network, never an env. Each call steps or resets the
env through its array-level entry points (``step_arrays``, ``step_reset_arrays``,
``reset_arrays``) and takes and returns dicts of numpy arrays, which Ray moves through its
object store.

Example:
    >>> import functools, hub, numpy as np
    >>> from hub.envs.builtin import CountingEnv
    >>> actor = EnvActor(functools.partial(hub.SerialEnv, 2, CountingEnv))
    >>> actor.reset(None, {})["observation"].ravel().tolist()
    [0, 0]
    >>> actor.step({"action": np.ones((2, 1), np.int64)}, None)["observation"].ravel()
    array([1, 1])
    >>> actor.reset_first_ready()["is_init"].tolist()  # first-ready batches
    [True, True]
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import hub
from hub.batching import RestartingBatch
from hub_ray.arrays import Arrays

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
        self._restarting: RestartingBatch | None = None  # first-ready batches: on first use

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
    def set_seed(self, seed: int | None) -> int | None:
        return self.env.set_seed(seed)

    def reset(self, rows: Any, kwargs: dict[str, Any]) -> Arrays:
        return _numpy(self.env.reset_arrays(rows, **kwargs))

    def step(self, arrays: Arrays, rows: Any) -> Arrays:
        return _numpy(self.env.step_arrays(_writable(arrays), rows))

    def step_reset(self, arrays: Arrays, rows: Any) -> tuple[Arrays, Arrays | None]:
        """The step's arrays, and the reset's when some sub-env's episode ended (else
        ``None``)."""
        out, first = self.env.step_reset_arrays(_writable(arrays), rows)
        return _numpy(out), None if first is None else _numpy(first)

    # ------------------------------------------------------------ first-ready batches
    def reset_first_ready(self) -> Arrays:
        """Restart every env; one row each, ``"is_init"`` set (see
        :class:`hub.batching.RestartingBatch`)."""
        return _numpy(self._first_ready().reset())

    def step_first_ready(self, arrays: Arrays) -> Arrays:
        """Restart the envs whose episode ended, step the others; one row each."""
        return _numpy(self._first_ready().step(_writable(arrays)))

    def _first_ready(self) -> RestartingBatch:
        if self._restarting is None:
            self._restarting = RestartingBatch(self.env)
        return self._restarting

    # ------------------------------------------------------------ attributes
    def get_attr(self, name: str) -> list[Any]:
        """The attribute of each sub-env (a natively batched env's own, once per sub-env)."""
        values = hub.batching.rows_get_attr(self.env, name)
        return [METHOD if callable(value) else value for value in values]

    def get_attr_at(self, rows: list[int], name: str) -> list[Any]:
        """The attribute of the sub-envs ``rows`` (this actor's indices) only."""
        values = hub.batching.rows_get_attr_at(self.env, rows, name)
        return [METHOD if callable(value) else value for value in values]

    def set_attr(self, name: str, values: list[Any]) -> None:
        hub.batching.rows_set_attr(self.env, name, values)

    def set_attr_at(self, rows: list[int], name: str, values: list[Any]) -> None:
        """Set the attribute of the sub-envs ``rows`` only, one value each."""
        hub.batching.rows_set_attr_at(self.env, rows, name, values)

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        return hub.batching.rows_call(self.env, name, args, kwargs)

    def call_at(
        self, rows: list[int], name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> list[Any]:
        """Call the method of the sub-envs ``rows`` (this actor's indices) only."""
        return hub.batching.rows_call_at(self.env, rows, name, args, kwargs)

    def close(self) -> None:
        self.env.close()


def _writable(arrays: Arrays) -> Arrays:
    """The inputs Ray hands over, writable: it gives read-only views of its object store, which
    an env may not write into (and which torch warns about); the read-only ones are copied."""
    out = {}
    for key, value in arrays.items():
        value = np.asarray(value)
        out[key] = value if value.flags.writeable else value.copy()
    return out


def _numpy(arrays: Any) -> Arrays:
    """A hook's output as numpy arrays (what Ray moves without pickling their data)."""
    out: Arrays = {}
    for key, value in arrays.items():
        if isinstance(value, torch.Tensor):
            value = value.detach().cpu().numpy()
        out[key] = np.asarray(value)
    return out
