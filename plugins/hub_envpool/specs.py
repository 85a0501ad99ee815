"""EnvPool spaces -> hub specs, and where each hub entry sits in EnvPool's raw output.

EnvPool describes a task with gym or gymnasium spaces (which one depends on its version and the
``env_type``; the class is read from the space object, never assumed) and returns every output
as a flat list of numpy arrays named by its ``_state_keys`` (``"obs"`` or ``"obs:position"``,
``"reward"``, ``"done"``, ``"trunc"``, ``"info:env_id"``, ...). hub reads that list directly:
:func:`state_layout` says which position holds which hub entry.

A ``Dict`` observation space gives one hub entry per key (nested keys for nested dicts,
EnvPool's ``"obs:a.b"``); any other space gives the single entry ``"observation"``.

Example:
    >>> layout = state_layout(["info:env_id", "done", "reward", "trunc", "obs"], dict_obs=False)
    >>> layout.observations, layout.reward, layout.done, layout.trunc, layout.env_id
    ((('observation', 4),), 2, 1, 3, 0)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import hub
from hub.specs import Categorical, Composite, NestedKey, TensorSpec

__all__ = [
    "StateLayout",
    "state_layout",
    "clean_space",
    "is_dict_space",
    "observation_spec",
    "action_spec",
    "flag_spec",
    "info_names",
    "info_spec",
]

#: EnvPool's info arrays that hub keeps for itself (the env ids) or that hold one row per player
_OWN_INFOS = ("env_id", "players.env_id")


@dataclass(frozen=True)
class StateLayout:
    """Positions in EnvPool's raw state list: one per observation entry, then the flags."""

    observations: tuple[tuple[NestedKey, int], ...]
    reward: int
    done: int
    trunc: int
    env_id: int


def _hub_key(state_key: str, dict_obs: bool) -> NestedKey:
    if not dict_obs:
        return "observation"
    path = tuple(state_key.split(":", 1)[1].split("."))
    return path[0] if len(path) == 1 else path


def state_layout(
    state_keys: Sequence[str], *, dict_obs: bool, infos: Sequence[str] = ()
) -> StateLayout:
    """Where each hub entry sits in the list EnvPool's ``_recv()`` returns; the info arrays
    named in ``infos`` (``"lives"``...) are observation entries ``("info", name)``.

    Raises:
        HubError: the keys lack one EnvPool always has (an EnvPool version hub does not know).

    Example:
        >>> state_layout(["obs:a.b", "obs:c", "done", "reward", "trunc", "info:env_id"],
        ...              dict_obs=True).observations
        ((('a', 'b'), 0), ('c', 1))
    """
    keys = list(state_keys)
    obs = tuple(
        (_hub_key(key, dict_obs), i)
        for i, key in enumerate(keys)
        if key == "obs" or key.startswith("obs:")
    )
    try:
        found = {name: keys.index(name) for name in ("reward", "done", "trunc", "info:env_id")}
    except ValueError as err:
        raise hub.errors.HubError(
            f"EnvPool's outputs are named {keys}, without {err.args[0].split()[0]}: this EnvPool "
            "version lays its outputs out in a way hub does not know. hub supports envpool "
            '>= 0.8: pip install "envpool>=0.8".'
        ) from None
    if not obs:
        raise hub.errors.HubError(f"EnvPool's outputs {keys} hold no observation ('obs...').")
    if not dict_obs and len(obs) != 1:
        raise hub.errors.HubError(
            f"EnvPool returns {len(obs)} observation arrays but declares a single space."
        )
    obs = obs + tuple((("info", name), keys.index(f"info:{name}")) for name in infos)
    return StateLayout(obs, found["reward"], found["done"], found["trunc"], found["info:env_id"])


def is_dict_space(space: Any) -> bool:
    """Whether ``space`` is a gym or gymnasium ``Dict`` space.

    Example:
        >>> import gymnasium
        >>> is_dict_space(gymnasium.spaces.Dict(a=gymnasium.spaces.Discrete(2)))
        True
    """
    return type(space).__name__ == "Dict" and hasattr(space, "spaces")


def _unbounded(bound: np.ndarray, limit: float) -> np.ndarray:
    return np.isclose(np.abs(bound), limit, rtol=1e-6, atol=0.0)


def clean_space(space: Any) -> Any:
    """``space`` with EnvPool's "no bound" markers turned into infinities.

    EnvPool declares an unbounded float entry with C++'s ``numeric_limits<T>::min()`` (the
    smallest *positive* number) and ``max()``; taken literally, every negative observation of a
    dm_control task would be out of its space. A float ``Box`` bound equal to the dtype's
    ``tiny`` or ``max`` (either sign) is read as infinite; ``Dict`` spaces are cleaned
    recursively; other spaces are returned as they are.

    Example:
        >>> import gymnasium
        >>> tiny, big = np.finfo(np.float64).tiny, np.finfo(np.float64).max
        >>> clean_space(gymnasium.spaces.Box(tiny, big, (2,), np.float64)).low.tolist()
        [-inf, -inf]
    """
    if is_dict_space(space):
        return type(space)({key: clean_space(sub) for key, sub in space.spaces.items()})
    if type(space).__name__ != "Box" or not np.issubdtype(space.dtype, np.floating):
        return space
    info = np.finfo(space.dtype)
    low = np.array(space.low, dtype=np.float64)
    high = np.array(space.high, dtype=np.float64)
    low_open = (low == float(info.tiny)) | _unbounded(low, float(info.max))
    high_open = _unbounded(high, float(info.max))
    if not (low_open.any() or high_open.any()):
        return space
    low[low_open] = -np.inf
    high[high_open] = np.inf
    dtype = space.dtype
    return type(space)(
        low=low.astype(dtype), high=high.astype(dtype), shape=space.shape, dtype=dtype
    )


def observation_spec(space: Any, batch_size: Sequence[int], device: Any) -> Composite:
    """The observation Composite of an EnvPool space (``"observation"`` or the Dict's keys).

    Example:
        >>> import gymnasium, torch
        >>> spec = observation_spec(gymnasium.spaces.Box(0, 255, (4, 84, 84), np.uint8), (8,), None)
        >>> spec["observation"].shape, spec["observation"].dtype
        (torch.Size([8, 4, 84, 84]), torch.uint8)
    """
    space = clean_space(space)
    batch = tuple(batch_size)
    converted = hub.convert_spec(space, batch_size=batch, device=device)
    if isinstance(converted, Composite):
        return converted
    return Composite(observation=converted, shape=batch, device=device)


def action_spec(
    space: Any, batch_size: Sequence[int], device: Any, categorical_action_encoding: bool
) -> TensorSpec:
    """The action spec (``OneHot`` for discrete actions unless ``categorical_action_encoding``).

    Example:
        >>> import gymnasium
        >>> action_spec(gymnasium.spaces.Discrete(6), (8,), None, True).shape
        torch.Size([8])
    """
    return hub.convert_spec(
        clean_space(space),
        batch_size=tuple(batch_size),
        device=device,
        categorical_action_encoding=categorical_action_encoding,
    )


def flag_spec(batch_size: Sequence[int], device: Any) -> Categorical:
    """A boolean flag per env, shaped like hub's done flags (``[*batch, 1]``).

    Example:
        >>> flag_spec((4,), None).shape
        torch.Size([4, 1])
    """
    import torch

    return Categorical(2, shape=(*batch_size, 1), device=device, dtype=torch.bool)


def info_names(state_keys: Sequence[str], wanted: bool | Sequence[str]) -> list[str]:
    """The names of the EnvPool info arrays to keep: every one (``True``; not the env ids,
    which hub keeps itself), none (``False``), or those of ``wanted``.

    Raises:
        HubError: a name of ``wanted`` is not one of the task's info arrays.

    Example:
        >>> keys = ["info:env_id", "info:players.env_id", "obs", "info:lives", "info:reward"]
        >>> info_names(keys, True), info_names(keys, ["lives"]), info_names(keys, False)
        (['lives', 'reward'], ['lives'], [])
    """
    available = [
        key.split(":", 1)[1]
        for key in state_keys
        if key.startswith("info:") and key.split(":", 1)[1] not in _OWN_INFOS
    ]
    if wanted is True:
        return available
    if wanted is False or wanted is None:
        return []
    names = [str(name) for name in wanted]
    unknown = [name for name in names if name not in available]
    if unknown:
        raise hub.errors.HubError(
            f"this EnvPool task has no info array {unknown}; its infos are {available} "
            "(infos=True keeps them all)."
        )
    return names


def info_spec(
    task_spec: Any, names: Sequence[str], batch_size: Sequence[int], device: Any
) -> Composite:
    """The specs of the info arrays ``names`` (an entry of shape ``batch_size`` for a number per
    env, ``(*batch_size, *shape)`` for an array per env), from EnvPool's array specs.

    Example:
        >>> import envpool
        >>> spec = info_spec(envpool.make_spec("Pong-v5"), ["lives", "ram"], (2,), None)
        >>> spec["lives"].shape, spec["lives"].dtype, spec["ram"].shape
        (torch.Size([2]), torch.int32, torch.Size([2, 128]))
    """
    from hub.specs import Unbounded, torch_dtype

    arrays = task_spec.state_array_spec
    batch = tuple(batch_size)
    if not batch:
        raise hub.errors.HubError(
            "EnvPool's infos are kept for batched envs: build with num_envs=N (num_envs=1 for "
            "one env) to keep them."
        )
    leaves = {}
    for name in names:
        array = arrays[f"info:{name}"]
        shape = tuple(int(d) for d in array.shape if int(d) != -1)
        leaves[name] = Unbounded((*batch, *shape), device=device, dtype=torch_dtype(array.dtype))
    return Composite(leaves, shape=batch, device=device)
