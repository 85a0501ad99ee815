"""The ``info`` dicts of the exports: the hub env's ``"info"`` entries, as gymnasium gives them.

A hub env that carries its backend's per-step information (EnvPool's ``lives``, ``reward``,
``terminated``...) keeps it under the nested key ``("info", name)`` of its observation spec.
The exports hand those entries back as the backend's library would:

* vector exports (gymnasium's format, every version from 0.26 on): ``info[name]`` is an array
  with one row per sub-env and ``info["_" + name]`` the bool mask of the sub-envs that reported
  it, as gymnasium's vector envs build them (``DictInfoToList`` reads these masks);
* single exports: ``info[name]`` is the value of the one env;
* SB3: ``infos[i][name]`` for sub-env ``i``.

Example:
    >>> import torch
    >>> from tensordict import TensorDict
    >>> td = TensorDict({"info": {"lives": torch.tensor([3, 2])}}, [2])
    >>> reader = InfoReader([("info", "lives")])
    >>> info = reader.vector(td)
    >>> info["lives"].tolist(), info["_lives"].tolist()
    ([3, 2], [True, True])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from tensordict import TensorDictBase

__all__ = ["InfoReader", "info_keys"]

INFO = "info"


def info_keys(env: Any) -> list[tuple[str, ...]]:
    """The observation keys of ``env`` under ``"info"`` (leaves only, as tuples).

    Example:
        >>> import hub
        >>> info_keys(hub.make_env("hub:Counting"))
        []
    """
    keys = []
    for key in env.observation_keys:
        if isinstance(key, tuple) and len(key) > 1 and key[0] == INFO:
            keys.append(key)
    return keys


def _value(tensor: Any) -> Any:
    """A numpy copy of a tensor (the exported info outlives the next step's buffers)."""
    if isinstance(tensor, torch.Tensor):
        return tensor.detach().cpu().numpy().copy()
    return tensor


class InfoReader:
    """Reads the ``("info", ...)`` entries of a hub tensordict into the exports' info dicts."""

    def __init__(self, keys: Sequence[tuple[str, ...]]) -> None:
        self.keys = [tuple(k) for k in keys]
        self.names = ["/".join(k[1:]) for k in self.keys]

    def __bool__(self) -> bool:
        return bool(self.keys)

    def _arrays(self, td: TensorDictBase, batch: int | None) -> dict[str, Any]:
        out = {}
        for key, name in zip(self.keys, self.names):
            value = td.get(key, None)
            if value is None:
                continue
            array = _value(value)
            if isinstance(array, np.ndarray) and batch is not None:
                if array.ndim == 2 and array.shape[1] == 1:  # a number per env kept as [N, 1]
                    array = array.reshape(batch)
            elif isinstance(array, np.ndarray) and array.shape == (1,):
                array = array.reshape(())
            out[name] = array
        return out

    def vector(self, td: TensorDictBase, rows: np.ndarray | None = None) -> dict[str, Any]:
        """gymnasium's vector info: ``{name: array, "_" + name: mask}`` (``rows``: the mask,
        every sub-env by default)."""
        if not self.keys:
            return {}
        n = int(td.batch_size[0])
        mask = np.ones(n, dtype=bool) if rows is None else np.asarray(rows, dtype=bool)
        info: dict[str, Any] = {}
        for name, array in self._arrays(td, n).items():
            info[name] = array
            info["_" + name] = mask.copy()
        return info

    def single(self, td: TensorDictBase) -> dict[str, Any]:
        """One env's info: ``{name: value}``."""
        if not self.keys:
            return {}
        return {
            name: (array.item() if isinstance(array, np.ndarray) and array.ndim == 0 else array)
            for name, array in self._arrays(td, None).items()
        }

    def rows(self, td: TensorDictBase) -> list[dict[str, Any]]:
        """One info dict per sub-env (SB3's format)."""
        n = int(td.batch_size[0]) if td.batch_dims else 1
        if not self.keys:
            return [{} for _ in range(n)]
        arrays = self._arrays(td, n if td.batch_dims else None)
        if not td.batch_dims:
            arrays = {k: np.asarray(v)[None] for k, v in arrays.items()}
        return [{name: array[i] for name, array in arrays.items()} for i in range(n)]
