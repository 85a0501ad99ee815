"""The loops ``hub bench`` times: one per row of its table, each driven by the same policy.

A row is a way to step ``W`` copies of an env: the raw library's own vector env, or hub over it
(native batching, ``SerialEnv``, ``ParallelEnv``, a plugin's batching strategy). Each loop is
built by :func:`build_loop` and returned as a function that does one vector step: the policy
picks ``W`` actions from the current observations, the env steps, finished episodes reset
through the system's own path (the raw libraries' autoreset, hub's ``step_and_maybe_reset``).

The policy is the one of RLlib's 2018 table: an MLP ``obs -> 64 -> 64 -> n`` with tanh, argmax
of its output,
under ``torch.no_grad()``. hub rows hand the action over in hub's default encoding (one-hot for
a discrete action), as a user's policy would.

Example:
    >>> step, close = build_loop("hub-serial", "CartPole-v1", 2)
    >>> step(); step()
    >>> close()
"""

from __future__ import annotations

import importlib
import math
import os
import re
from collections.abc import Callable
from typing import Any

__all__ = [
    "BUILTIN_ROWS",
    "RAW_OF",
    "build_loop",
    "envpool_threads",
    "hub_strategy_row",
    "mlp_policy",
    "numpy_loop",
    "parallel_layout",
    "raw_row",
]

# row name -> what it runs (the table's first column)
BUILTIN_ROWS = {
    "gymnasium": "raw gymnasium SyncVectorEnv",
    "hub-gymnasium": "hub over it (native batching)",
    "hub-serial": "hub SerialEnv of gymnasium envs",
    "hub-parallel": "hub ParallelEnv of gymnasium envs",
    "envpool": "raw EnvPool",
    "hub-envpool": "hub over EnvPool (native batching)",
}
# hub row -> the raw row it is compared with
RAW_OF = {
    "hub-gymnasium": "gymnasium",
    "hub-serial": "gymnasium",
    "hub-parallel": "gymnasium",
    "hub-envpool": "envpool",
}
STRATEGY_PREFIX = "hub-batching-"
# ParallelEnv with a given layout: "hub-parallel-w2" (2 workers), "hub-parallel-e1" (1 env each)
LAYOUT_ROW = re.compile(r"hub-parallel-([we])([1-9][0-9]*)")

Step = Callable[[], None]
Close = Callable[[], None]


def hub_strategy_row(strategy: str) -> str:
    """The row name of a plugin's batching strategy (``"hub-batching-ray"``)."""
    return STRATEGY_PREFIX + strategy


def parallel_layout(row: str) -> dict[str, int] | None:
    """The ``ParallelEnv`` layout a ``hub-parallel-wN`` / ``hub-parallel-eK`` row names.

    Example:
        >>> parallel_layout("hub-parallel-w2"), parallel_layout("hub-parallel-e1")
        ({'num_workers': 2}, {'envs_per_worker': 1})
    """
    match = LAYOUT_ROW.fullmatch(row)
    if match is None:
        return None
    return {"num_workers" if match[1] == "w" else "envs_per_worker": int(match[2])}


def raw_row(row: str) -> str | None:
    """The raw row a hub row is compared with (``None`` for a raw row)."""
    if row.startswith(STRATEGY_PREFIX) or parallel_layout(row) is not None:
        return "gymnasium"
    return RAW_OF.get(row)


def mlp_policy(obs_size: int, n_actions: int, seed: int = 0) -> Any:
    """The policy of RLlib's 2018 table: ``obs_size -> 64 -> 64 -> n_actions``, tanh, untrained,
    seeded."""
    import torch

    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(obs_size, 64),
        torch.nn.Tanh(),
        torch.nn.Linear(64, 64),
        torch.nn.Tanh(),
        torch.nn.Linear(64, n_actions),
    )


def build_loop(row: str, env_id: str, width: int, seed: int = 0) -> tuple[Step, Close]:
    """``(step, close)`` for one row of the table, ``width`` envs of ``env_id``."""
    if row == "gymnasium":
        return _raw_gymnasium(env_id, width, seed)
    if row == "envpool":
        return _raw_envpool(env_id, width, seed)
    uri, kwargs = _hub_target(row, env_id)
    return _hub_loop(uri, width, seed, kwargs)


def _hub_target(row: str, env_id: str) -> tuple[str, dict[str, Any]]:
    if row == "hub-gymnasium":
        return f"gymnasium:{env_id}", {"batching": "native"}
    if row == "hub-serial":
        return f"gymnasium:{env_id}", {"batching": "serial"}
    if row == "hub-parallel":
        return f"gymnasium:{env_id}", {"batching": "parallel"}
    if row == "hub-envpool":
        return f"envpool:{env_id}", {"batching": "native"}
    if row.startswith(STRATEGY_PREFIX):
        return f"gymnasium:{env_id}", {"batching": row[len(STRATEGY_PREFIX) :]}
    layout = parallel_layout(row)
    if layout is not None:
        return f"gymnasium:{env_id}", {"batching": "parallel", **layout}
    known = [*BUILTIN_ROWS, "hub-parallel-wN", "hub-parallel-eK", hub_strategy_row("NAME")]
    raise ValueError(f"unknown bench row {row!r}; rows are {', '.join(known)}.")


def _flat_size(shape: Any) -> int:
    return int(math.prod(shape)) if len(shape) else 1


def numpy_loop(env: Any, width: int, seed: int, reset_kwargs: dict) -> tuple[Step, Close]:
    """The raw libraries' loop: numpy observations -> torch -> policy -> numpy actions."""
    import numpy as np
    import torch

    n = int(env.single_action_space.n)
    policy = mlp_policy(_flat_size(env.single_observation_space.shape), n, seed)
    obs, _ = env.reset(**reset_kwargs)
    state = {"obs": obs}

    def step() -> None:
        with torch.no_grad():
            x = torch.from_numpy(np.asarray(state["obs"], dtype=np.float32)).reshape(width, -1)
            actions = policy(x).argmax(-1).numpy()
        state["obs"] = env.step(actions)[0]

    return step, env.close


def _raw_gymnasium(env_id: str, width: int, seed: int) -> tuple[Step, Close]:
    # the raw library itself is the row (hub's core imports backends by name only, at run time)
    gymnasium = importlib.import_module("gymnasium")

    env = gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make(env_id)] * width)
    return numpy_loop(env, width, seed, {"seed": seed})


def envpool_threads(width: int) -> int:
    """The worker threads of the EnvPool rows, raw and hub alike: one per CPU the process may
    run on, up to the width (hub's default; EnvPool's own is one per CPU of the machine, which
    on ``hub bench``'s one core runs threads that spin on the core the loop needs)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return max(1, min(width, len(affinity(0)) if affinity else os.cpu_count() or 1))


def _raw_envpool(env_id: str, width: int, seed: int) -> tuple[Step, Close]:
    envpool = importlib.import_module("envpool")

    env = envpool.make_gymnasium(  # seeded when made
        env_id, num_envs=width, seed=seed, num_threads=envpool_threads(width)
    )
    return numpy_loop(env, width, seed, {})


def _hub_loop(uri: str, width: int, seed: int, kwargs: dict[str, Any]) -> tuple[Step, Close]:
    """hub's loop: ``step_and_maybe_reset`` with the policy reading and writing TensorDicts."""
    import torch

    import hub

    env = hub.make_env(uri, num_envs=width, seed=seed, **kwargs)
    action_spec = env.action_spec
    n = int(action_spec.shape[-1]) if isinstance(action_spec, hub.specs.OneHot) else None
    if n is None:
        n = int(action_spec.n)
    obs_key = env.observation_keys[0]
    policy = mlp_policy(_flat_size(env.observation_spec[obs_key].shape[1:]), n, seed)
    one_hot = isinstance(action_spec, hub.specs.OneHot)
    eye = torch.eye(n, dtype=action_spec.dtype)
    state = {"td": env.reset()}

    def step() -> None:
        td = state["td"]
        with torch.no_grad():
            x = td.get(obs_key).reshape(width, -1).to(torch.float32)
            index = policy(x).argmax(-1)
        td.set("action", eye[index] if one_hot else index.to(action_spec.dtype))
        state["td"] = env.step_and_maybe_reset(td)[1]

    return step, env.close
