"""Info-dict readers: write chosen entries of a gym ``info`` dict into hub data, with specs.

``env.set_info_dict_reader(InfoDictReader(["x_position"]))`` adds ``"x_position"`` to the env's
observation spec and to every reset and step output. Without ``spec``, the specs are inferred
from the env's first ``info`` dicts (a reset and one random step, then a reset again). An entry
missing from an ``info`` dict (a reset's, or a step's in a vector env where only some sub-envs
report it) is written as zeros.

Example:
    >>> import hub
    >>> env = hub.make_env("gymnasium:CartPole-v1")
    >>> env = env.set_info_dict_reader(InfoDictReader(["episode"], spec={"episode": hub.specs.Unbounded((1,))}))
    >>> "episode" in env.observation_spec.keys()
    True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import torch
from tensordict import TensorDictBase

import hub
from hub.specs import Composite, NonTensor, TensorSpec, Unbounded

__all__ = ["InfoDictReader", "default_info_dict_reader", "infer_info_spec"]


class InfoDictReader:
    """Reads ``keys`` from ``info`` dicts into a tensordict, encoded with their specs.

    Args:
        keys: the info entries to keep.
        spec: their specs (a ``Composite`` or a dict of specs, batch dims excluded: the env adds
            them); ``None`` to infer them when the reader is attached to an env.

    Example:
        >>> reader = InfoDictReader(["lives"])
        >>> reader.keys
        ['lives']
    """

    def __init__(self, keys: Iterable[str], spec: Mapping[str, TensorSpec] | None = None) -> None:
        self.keys = [str(k) for k in keys]
        if not self.keys:
            raise ValueError("InfoDictReader needs at least one info key to read.")
        self.info_spec: Composite | None = None
        self._spec = spec
        self._encoders: list[tuple[str, Any, TensorSpec]] = []

    def bind(self, batch_size: torch.Size, infos: list[Any] | None = None) -> Composite:
        """Fix the specs (batch dims first), inferring them from ``infos`` when none were given."""
        if self._spec is None:
            if not infos:
                raise hub.errors.HubError("InfoDictReader needs a spec or example info dicts.")
            given = infer_info_spec(self.keys, infos, batch_size)
        else:
            given = {k: self._spec[k] for k in self.keys}
            given = {
                k: (
                    s
                    if s.shape[: len(batch_size)] == batch_size
                    else s.expand(*batch_size, *s.shape)
                )
                for k, s in given.items()
            }
        self.info_spec = Composite(given, shape=batch_size)
        self._encoders = [(k, given[k].encode, given[k]) for k in self.keys]
        return self.info_spec

    def __call__(self, info: Any, tensordict: TensorDictBase) -> TensorDictBase:
        """Write the entries of ``info`` into ``tensordict`` (zeros for missing ones)."""
        if isinstance(info, (list, tuple)):  # gym < 0.24 vector envs: one dict per sub-env
            info = _stack_info_list(info, self.keys)
        for key, encode, spec in self._encoders:
            value = info.get(key) if info else None
            tensordict.set(key, spec.zero() if value is None else encode(value))
        return tensordict


def default_info_dict_reader(
    keys: Iterable[str], spec: Mapping[str, TensorSpec] | None = None
) -> InfoDictReader:
    """TorchRL's name for :class:`InfoDictReader`.

    Example:
        >>> default_info_dict_reader(["lives"]).keys
        ['lives']
    """
    return InfoDictReader(keys, spec)


def infer_info_spec(
    keys: list[str], infos: list[Any], batch_size: torch.Size
) -> dict[str, TensorSpec]:
    """Specs for ``keys`` from example info dicts: numeric values give ``Unbounded`` specs of
    their dtype and shape (a scalar gets shape ``(1,)``), anything else ``NonTensor``.

    Example:
        >>> infer_info_spec(["x"], [{"x": 1.5}], torch.Size([]))
        {'x': Unbounded(shape=[1], dtype=float32)}
    """
    found: dict[str, TensorSpec] = {}
    for key in keys:
        value = next((i[key] for i in infos if isinstance(i, Mapping) and key in i), None)
        if value is None:
            available = sorted({k for i in infos if isinstance(i, Mapping) for k in i})
            raise hub.errors.HubError(
                f"the info dicts of this env have no entry {key!r}; they hold {available}. "
                "Pass InfoDictReader(keys, spec=...) for entries that appear later."
            )
        array = np.asarray(value)
        if array.dtype == object or array.dtype.kind in "USO":
            found[key] = NonTensor(shape=batch_size)
            continue
        dtype = torch.from_numpy(np.zeros(0, array.dtype)).dtype
        if dtype == torch.float64:
            dtype = torch.float32
        event = tuple(array.shape[len(batch_size) :]) or (1,)
        found[key] = Unbounded((*batch_size, *event), dtype=dtype)
    return found


def _stack_info_list(infos: list[dict], keys: list[str]) -> dict[str, Any]:
    out = {}
    for key in keys:
        values = [i.get(key) for i in infos]
        if all(v is not None for v in values):
            out[key] = np.stack([np.asarray(v) for v in values])
    return out
