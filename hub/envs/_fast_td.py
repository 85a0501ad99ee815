"""Fast paths into plain ``TensorDict`` objects for the env step path (core use only;
``fast_get`` and ``fast_set`` are public through :mod:`hub.envs.utils`).

The step path reads and writes a handful of root entries per step; tensordict's public
``get``/``set`` parse and validate keys and values on every call. For exact ``TensorDict``
instances and string keys, these helpers go to the underlying dict, and fall back to the public
API for everything else (nested keys, lazy stacks, other tensordict classes).

Example:
    >>> import torch
    >>> from tensordict import TensorDict
    >>> td = TensorDict({"a": torch.zeros(1)}, [])
    >>> fast_get(td, "a").shape, fast_get(td, "b") is None
    (torch.Size([1]), True)
"""

from __future__ import annotations

from typing import Any

import torch
from tensordict import TensorDict, TensorDictBase, is_tensor_collection

__all__ = [
    "fast_get",
    "fast_set",
    "fast_del",
    "fast_batch_size",
    "fast_update",
    "fast_keys",
    "fast_items",
    "fast_column",
    "new_td",
    "shallow",
]


def _probe() -> bool:
    try:
        td = TensorDict._new_unsafe({}, batch_size=torch.Size(()), device=None, nested=False)
        return (
            isinstance(td._tensordict, dict)
            and td._is_locked is False
            and isinstance(td._batch_size, torch.Size)
        )
    except (AttributeError, TypeError):  # pragma: no cover - another tensordict layout
        return False


_FAST = _probe()


def fast_get(td: TensorDictBase, key: Any, default: Any = None) -> Any:
    """``td.get(key, default)``, about 5x faster for a plain ``TensorDict`` and a string key
    (other tensordicts and nested keys go through ``td.get``).

    Public as ``hub.envs.utils.fast_get``, for a plugin's per-step code, where tensordict's own
    ``get`` costs more than the rest of the work on small envs.

    Example:
        >>> import torch
        >>> from tensordict import TensorDict
        >>> td = TensorDict({"action": torch.zeros(2)}, [2])
        >>> fast_get(td, "action").shape, fast_get(td, "missing")
        (torch.Size([2]), None)
    """
    if _FAST and type(td) is TensorDict and type(key) is str:
        return td._tensordict.get(key, default)
    return td.get(key, default)


def fast_set(td: TensorDictBase, key: Any, value: Any) -> None:
    """``td.set(key, value)`` without tensordict's checks, for a value whose leading dims are
    already ``td``'s batch size and that is on ``td``'s device (about 7x faster for a plain,
    unlocked ``TensorDict`` and a string key; anything else goes through ``td.set``).

    Public as ``hub.envs.utils.fast_set``. Wrong input is not caught: use ``td.set`` for
    anything not right by construction.

    Example:
        >>> import torch
        >>> from tensordict import TensorDict
        >>> td = TensorDict({}, [2])
        >>> fast_set(td, "next", TensorDict({"reward": torch.ones(2, 1)}, [2]))
        >>> td["next", "reward"].shape
        torch.Size([2, 1])
    """
    if _FAST and type(td) is TensorDict and type(key) is str and not td._is_locked:
        td._set_str(key, value, inplace=False, validated=True)
    else:
        td.set(key, value)


def fast_del(td: TensorDictBase, key: Any) -> None:
    """``td.del_(key)`` for an entry that exists."""
    if _FAST and type(td) is TensorDict and type(key) is str and not td._is_locked:
        del td._tensordict[key]
    else:
        td.del_(key)


def fast_update(td: TensorDictBase, source: TensorDictBase) -> None:
    """``td.update(source)`` when ``source``'s batch dims are ``td``'s: entry by entry for plain
    TensorDicts holding tensors at the root, through ``update`` otherwise."""
    if _FAST and type(td) is TensorDict and type(source) is TensorDict and not td._is_locked:
        items = source._tensordict.items()
        if all(type(value) is torch.Tensor for _, value in items):
            target = td._tensordict
            for key, value in items:
                target[key] = value
            return
    td.update(source)


def fast_batch_size(td: TensorDictBase) -> torch.Size:
    """``td.batch_size``."""
    if _FAST and type(td) is TensorDict:
        return td._batch_size
    return td.batch_size


def fast_keys(td: TensorDictBase) -> Any:
    """The root keys of ``td`` (a view: do not modify ``td`` while iterating)."""
    if _FAST and type(td) is TensorDict:
        return td._tensordict.keys()
    return td.keys()


def fast_items(td: TensorDictBase) -> Any:
    """The root ``(key, value)`` pairs of ``td`` (do not modify ``td`` while iterating)."""
    if _FAST and type(td) is TensorDict:
        return td._tensordict.items()
    return td.items()


def fast_column(tds: list[Any], key: Any) -> list[Any] | None:
    """``[td[key] for td in tds]`` when every ``td`` is a plain ``TensorDict`` holding ``key``
    (a string), else ``None`` (the caller takes the general path)."""
    if not _FAST or type(key) is not str:
        return None
    try:
        return [td._tensordict[key] for td in tds if type(td) is TensorDict]
    except (KeyError, AttributeError):
        return None


def new_td(data: dict[str, Any], batch_size: torch.Size, device: Any) -> TensorDictBase:
    """A TensorDict of ``data`` (tensors and tensordicts whose batch dims are already right)."""
    if _FAST:
        return TensorDict._new_unsafe(data, batch_size=batch_size, device=device, nested=False)
    return TensorDict(data, batch_size=batch_size, device=device)  # pragma: no cover


def shallow(value: Any) -> Any:
    """A shallow copy of a sub-tensordict (so that two parents never share one), else ``value``."""
    return value.copy() if is_tensor_collection(value) else value
