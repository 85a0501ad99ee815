"""Values between hub tensors and gymnasium's numpy values, for the exported envs.

Example:
    >>> import numpy as np
    >>> from hub.specs import OneHot
    >>> to_numpy(OneHot(3).encode(2), OneHot(3))
    2
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from tensordict import TensorDictBase, is_tensor_collection

from hub.export.spaces import is_tuple_names, spec_to_space, sub_space
from hub.specs import Categorical, Composite, MultiOneHot, NonTensor, OneHot, TensorSpec

__all__ = [
    "to_numpy",
    "make_obs_reader",
    "observation_space",
    "make_action_writer",
    "make_buffer_writer",
    "default_observation_keys",
    "export_keys",
]


def to_numpy(value: torch.Tensor, spec: TensorSpec, batched: bool = False) -> Any:
    """A hub value as gymnasium expects it for the space of ``spec``: one-hot vectors as
    indices, a single category as a Python int (unless ``batched``), tensors as numpy copies."""
    if isinstance(spec, NonTensor):
        return _non_tensor_value(value, batched)
    if isinstance(spec, OneHot):
        value = value.to(torch.uint8).argmax(-1)
    elif isinstance(spec, MultiOneHot):
        value = spec.to_categorical(value)
    array = value.detach().cpu().numpy().copy()
    if not batched and isinstance(spec, (OneHot, Categorical)) and array.ndim == 0:
        return int(array)
    return array


def _non_tensor_value(value: Any, batched: bool) -> Any:
    """A non-tensor entry as gymnasium gives it: the value (one env), a tuple of values (a
    vector env, as gymnasium's ``SyncVectorEnv`` batches ``Text`` and other such spaces)."""
    if is_tensor_collection(value):
        value = value.tolist() if batched else value.data
    if batched:
        return tuple(value) if isinstance(value, (list, tuple)) else (value,)
    return value


def make_obs_reader(
    spec: Composite, keys: Sequence[Any], batched: bool, as_tuple: bool = False
) -> Callable[[TensorDictBase], Any]:
    """A function from a hub tensordict to the observation: one array, or a dict by key (a
    tuple for keys ``"0"``, ``"1"``, ... with ``as_tuple``)."""
    if len(keys) == 1:
        key = keys[0]
        leaf = spec[key]

        def read_one(td: TensorDictBase) -> Any:
            return to_numpy(td.get(key), leaf, batched)

        return read_one
    leaves = [(_name(k), k, spec[k]) for k in keys]
    if as_tuple and is_tuple_names([name for name, _, _ in leaves]):

        def read_tuple(td: TensorDictBase) -> tuple[Any, ...]:
            return tuple(to_numpy(td.get(key), leaf, batched) for _, key, leaf in leaves)

        return read_tuple

    def read_dict(td: TensorDictBase) -> dict[str, Any]:
        return {name: to_numpy(td.get(key), leaf, batched) for name, key, leaf in leaves}

    return read_dict


def observation_space(
    spec: Composite, keys: Sequence[Any], as_tuple: bool = True, source: Any = None
) -> Any:
    """The gymnasium space of the observation entries ``keys`` of ``spec`` (one value, no batch
    dims): one key gives its space, several a ``Dict``, or a ``Tuple`` when they are ``"0"``,
    ``"1"``, ... (a gymnasium ``Tuple`` observation that came into hub) and ``as_tuple``.
    ``source`` is the backend env's own observation space (one env's), when known: non-tensor
    entries go out as its parts.

    Example:
        >>> from hub.specs import Unbounded
        >>> spec = Composite({"0": Unbounded((2,)), "1": Unbounded((1,))})
        >>> type(observation_space(spec, ["0", "1"])).__name__
        'Tuple'
    """
    spaces = importlib.import_module("gymnasium.spaces")
    if len(keys) == 1:
        part = sub_space(source, keys[0])
        return spec_to_space(spec[keys[0]], source if part is None else part)
    names = [_name(k) for k in keys]
    if as_tuple and is_tuple_names(names):
        return spaces.Tuple([spec_to_space(spec[k], sub_space(source, k)) for k in keys])
    return spaces.Dict(
        {name: spec_to_space(spec[k], sub_space(source, k)) for name, k in zip(names, keys)}
    )


def make_action_writer(spec: TensorSpec) -> Callable[[Any], torch.Tensor]:
    """A function from a gymnasium action (int, array) to the hub action tensor of ``spec``."""
    if isinstance(spec, (OneHot, MultiOneHot)):

        def write_index(action: Any) -> torch.Tensor:
            return spec.encode(np.asarray(action, dtype=np.int64))

        return write_index
    dtype = torch.empty(0, dtype=spec.dtype).numpy().dtype

    def write_array(action: Any) -> torch.Tensor:
        return spec.encode(np.asarray(action, dtype=dtype))

    return write_array


def make_buffer_writer(spec: TensorSpec, buffer: torch.Tensor) -> Callable[[Any], None]:
    """A function that writes a gymnasium action (int, array) into ``buffer``, the hub action
    tensor of ``spec`` (through a numpy view when the buffer allows one: about 1 us).

    Example:
        >>> from hub.specs import Categorical
        >>> buffer = torch.zeros((), dtype=torch.int64)
        >>> make_buffer_writer(Categorical(3), buffer)(2)
        >>> int(buffer)
        2
    """
    if isinstance(spec, OneHot) and buffer.device.type == "cpu":
        view = buffer.numpy()
        off = False if view.dtype == np.bool_ else 0
        if view.ndim == 1:

            def write_one(action: Any) -> None:
                view[:] = off
                view[int(action)] = True

            return write_one
        rows = view.reshape(-1, view.shape[-1])
        arange = np.arange(rows.shape[0])

        def write_one_hot(action: Any) -> None:
            rows[:] = off
            rows[arange, np.asarray(action, dtype=np.int64).reshape(-1)] = True

        return write_one_hot
    if isinstance(spec, MultiOneHot) or buffer.device.type != "cpu":
        encode = make_action_writer(spec)

        def write_encoded(action: Any) -> None:
            buffer.copy_(encode(action))

        return write_encoded
    view = buffer.numpy()
    shape = view.shape

    def write_array(action: Any) -> None:
        if type(action) is np.ndarray and action.shape == shape:
            np.copyto(view, action, casting="unsafe")
        else:
            view[...] = np.asarray(action).reshape(shape)

    return write_array


def default_observation_keys(env: Any) -> list[Any]:
    """The observation entries an export shows a policy by default: ``"observation"`` alone
    when the env has it (hub's own envs keep their internal state, e.g. Pendulum's ``th``,
    ``thdot`` and ``step_count``, next to it), else ``"pixels"`` alone when present, else every
    observation entry.

    Example:
        >>> import hub
        >>> default_observation_keys(hub.make_env("hub:Pendulum"))
        ['observation']
    """
    keys = list(env.observation_keys)
    for name in ("observation", "pixels"):
        if name in keys:
            return [name]
    return keys


def export_keys(env: Any, observation_keys: Sequence[Any] | None, exporter: str) -> list[Any]:
    """The observation keys an export shows (``observation_keys``, else
    :func:`default_observation_keys`), after checking that the env has one action entry and
    that each key is an observation; the errors name ``exporter``.

    Example:
        >>> import hub
        >>> export_keys(hub.make_env("hub:Pendulum"), None, "to_gymnasium")
        ['observation']
    """
    from hub.errors import HubError

    if len(env.action_keys) != 1:
        raise HubError(
            f"{exporter} exports envs with one action entry; this one has {env.action_keys}."
        )
    keys = list(default_observation_keys(env) if observation_keys is None else observation_keys)
    missing = [k for k in keys if k not in env.observation_keys]
    if missing or not keys:
        raise HubError(
            f"observation_keys {missing or keys} are not observations of this env; its "
            f"observation keys are {env.observation_keys}."
        )
    return keys


def _name(key: Any) -> str:
    return key if isinstance(key, str) else "/".join(key)
