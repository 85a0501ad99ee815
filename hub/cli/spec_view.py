"""Specs as rows for ``hub info``: key, spec class, shape, dtype, bounds or category counts.

Example:
    >>> import torch
    >>> from hub.specs import Bounded
    >>> spec_row(("action",), Bounded(-2.0, 2.0, shape=(1,)))
    {'key': ['action'], 'class': 'Bounded', 'shape': [1], 'dtype': 'float32', 'low': -2.0, 'high': 2.0}
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# a bound tensor with at most this many distinct elements is listed in full
LIST_LIMIT = 8

# the sections of ``hub info``: name -> the env attributes that may hold the composite spec
SPEC_SECTIONS = (
    ("observation", ("full_observation_spec",)),
    ("action", ("full_action_spec",)),
    ("reward", ("full_reward_spec",)),
    ("done", ("full_done_spec",)),
    ("state", ("full_state_spec", "state_spec")),
)


def dtype_name(dtype: Any) -> str | None:
    """``torch.float32`` -> ``"float32"``.

    Example:
        >>> import torch
        >>> dtype_name(torch.uint8)
        'uint8'
    """
    return None if dtype is None else str(dtype).removeprefix("torch.")


def summarize_bound(value: Any) -> Any:
    """A bound tensor as one number (all equal), a short list, or ``{"min": .., "max": ..}``.

    Example:
        >>> import torch
        >>> summarize_bound(torch.tensor([1.0, 1.0])), summarize_bound(torch.tensor([0, 3]))
        (1.0, [0, 3])
    """
    import torch

    tensor = torch.as_tensor(value).detach().cpu()
    if tensor.numel() == 0:
        return None
    flat = tensor.reshape(-1)
    if bool((flat == flat[0]).all()):
        return flat[0].item()
    if flat.numel() <= LIST_LIMIT:
        return flat.tolist()
    return {"min": flat.min().item(), "max": flat.max().item()}


def spec_row(key: tuple[str, ...], spec: Any) -> dict[str, Any]:
    """One leaf spec as a JSON-able row."""
    row: dict[str, Any] = {
        "key": list(key),
        "class": type(spec).__name__,
        "shape": [int(d) for d in spec.shape],
        "dtype": dtype_name(getattr(spec, "dtype", None)),
    }
    if hasattr(spec, "low") and hasattr(spec, "high"):
        row["low"] = summarize_bound(spec.low)
        row["high"] = summarize_bound(spec.high)
    nvec = getattr(spec, "nvec", None)
    if nvec is not None:
        row["nvec"] = [int(v) for v in (nvec.tolist() if hasattr(nvec, "tolist") else nvec)]
    elif getattr(spec, "n", None) is not None:
        row["n"] = int(spec.n)
    return row


def _key_tuple(key: Any) -> tuple[str, ...]:
    return (key,) if isinstance(key, str) else tuple(key)


def composite_rows(spec: Any) -> list[dict[str, Any]]:
    """The rows of every leaf of a composite spec, nested keys included, sorted by key.

    Example:
        >>> composite_rows(None)
        []
    """
    if spec is None:
        return []
    keys: Iterable[Any] = spec.keys(include_nested=True, leaves_only=True)
    rows = [spec_row(_key_tuple(k), spec[k]) for k in keys]
    return sorted(rows, key=lambda r: r["key"])


def env_spec_sections(env: Any) -> dict[str, list[dict[str, Any]]]:
    """The rows of each of the env's spec sections (observation, action, reward, done, state).

    Example:
        >>> env_spec_sections(object())
        {'observation': [], 'action': [], 'reward': [], 'done': [], 'state': []}
    """
    sections = {}
    for name, attributes in SPEC_SECTIONS:
        spec = next((getattr(env, a) for a in attributes if hasattr(env, a)), None)
        sections[name] = composite_rows(spec)
    return sections


def format_key(key: list[str]) -> str:
    """A key for people: ``"reward"``, or ``("agents", "reward")`` for a nested one.

    Example:
        >>> format_key(["agents", "reward"])
        "('agents', 'reward')"
    """
    return key[0] if len(key) == 1 else str(tuple(key))


def format_bounds(row: dict[str, Any]) -> str:
    """The ``bounds / n`` column: ``[-2.0, 2.0]``, ``n=5`` or ``nvec=[3, 3]``.

    Example:
        >>> format_bounds({"low": -1.0, "high": {"min": 0.5, "max": 2.0}})
        '[-1, 0.5..2]'
        >>> format_bounds({"low": [-4.800000190734863, float("-inf")], "high": [4.8, float("inf")]})
        'low=[-4.8, -inf] high=[4.8, inf]'
    """
    if "low" in row:
        low, high = row["low"], row["high"]
        if isinstance(low, list) or isinstance(high, list):
            return f"low={_bound_text(low)} high={_bound_text(high)}"
        return f"[{_bound_text(low)}, {_bound_text(high)}]"
    if "nvec" in row:
        return f"nvec={row['nvec']}"
    if "n" in row:
        return f"n={row['n']}"
    return ""


def _bound_text(bound: Any) -> str:
    """A bound for people: floats with 6 significant digits (the JSON keeps them all)."""
    if isinstance(bound, dict):
        return f"{_number(bound['min'])}..{_number(bound['max'])}"
    if isinstance(bound, list):
        return "[" + ", ".join(_number(v) for v in bound) + "]"
    return _number(bound)


def _number(value: Any) -> str:
    if isinstance(value, float):
        return format(value, ".6g")
    return str(value)
