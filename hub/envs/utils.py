"""Helpers around the env contract: ``step_mdp``, ``terminated_or_truncated``, ``RandomPolicy``,
``make_composite_from_td``, ``prebuilt_tensordict``, ``fast_get``, ``fast_set``.

Example:
    >>> import torch
    >>> from tensordict import TensorDict
    >>> td = TensorDict({"obs": torch.zeros(1), "action": torch.ones(1),
    ...                  "next": {"obs": torch.ones(1), "reward": torch.ones(1)}}, [])
    >>> sorted(step_mdp(td).keys())
    ['obs']
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from tensordict import TensorDictBase

from hub.envs._fast_td import fast_get, fast_set, new_td  # fast_get/fast_set: public here
from hub.specs import Composite, NestedKey, NonTensor, TensorSpec, Unbounded

__all__ = [
    "step_mdp",
    "terminated_or_truncated",
    "RandomPolicy",
    "make_composite_from_td",
    "prebuilt_tensordict",
    "fast_get",
    "fast_set",
]

_DONE_NAMES = ("done", "terminated", "truncated")


def _keys(keys: NestedKey | Sequence[NestedKey]) -> list[NestedKey]:
    if isinstance(keys, (str, tuple)):
        return [keys]
    return list(keys)


def _root(key: NestedKey) -> str:
    return key if isinstance(key, str) else key[0]


def step_mdp(
    tensordict: TensorDictBase,
    next_tensordict: TensorDictBase | None = None,
    keep_other: bool = True,
    exclude_reward: bool = True,
    exclude_done: bool = False,
    exclude_action: bool = True,
    reward_keys: NestedKey | Sequence[NestedKey] = "reward",
    done_keys: NestedKey | Sequence[NestedKey] | None = None,
    action_keys: NestedKey | Sequence[NestedKey] = "action",
) -> TensorDictBase:
    """Build the input of the next step from a stepped tensordict.

    The entries under ``"next"`` move to the root (rewards dropped unless
    ``exclude_reward=False``, done flags (``done_keys``, default ``done``, ``terminated`` and
    ``truncated``) kept unless ``exclude_done=True``); with ``keep_other``,
    root entries that are not actions and not overwritten by ``"next"`` are carried over (a
    recurrent policy's state, for instance). ``next_tensordict``, when given, is filled in place.

    Example:
        >>> import torch
        >>> from tensordict import TensorDict
        >>> td = TensorDict({"obs": torch.zeros(1), "hidden": torch.ones(2), "action": torch.ones(1),
        ...                  "next": {"obs": torch.ones(1), "reward": torch.ones(1),
        ...                           "done": torch.zeros(1, dtype=torch.bool)}}, [])
        >>> sorted(step_mdp(td).keys())
        ['done', 'hidden', 'obs']
    """
    nxt = tensordict.get("next")
    excluded: list[NestedKey] = []
    if exclude_reward:
        excluded += _keys(reward_keys)
    if exclude_done:
        excluded += _keys(done_keys) if done_keys is not None else list(_DONE_NAMES)
    out = nxt.exclude(*excluded) if excluded else nxt.copy()
    if keep_other:
        skip = {"next", "_reset", "_step"} | set(excluded)
        actions = set(_keys(action_keys)) if exclude_action else set()
        out_keys = set(out.keys())
        for key in tensordict.keys():
            if key in skip or key in actions or key in out_keys:
                continue
            out.set(key, tensordict.get(key))
        # nested actions (e.g. ("agents", "action")) live in sub-tensordicts that "next" also has:
        # carry over their other entries
        for key in actions:
            if isinstance(key, tuple) and len(key) > 1 and key[0] in out_keys:
                src = tensordict.get(key[:-1], None)
                if src is None:
                    continue
                dst_prefix = key[:-1]
                for sub in src.keys():
                    full = dst_prefix + (sub,)
                    if full in actions or out.get(full, None) is not None:
                        continue
                    out.set(full, src.get(sub))
    elif not exclude_action:
        for key in _keys(action_keys):
            value = tensordict.get(key, None)
            if value is not None:
                out.set(key, value)
    if next_tensordict is not None:
        next_tensordict.update(out)
        return next_tensordict
    return out


def terminated_or_truncated(
    data: TensorDictBase,
    full_done_spec: Composite | None = None,
    key: str | None = "_reset",
    write_full_false: bool = False,
) -> bool:
    """Whether any episode in ``data`` ended, writing the end flags next to each done level.

    At each level that holds ``terminated`` or ``truncated`` (or ``done``), their union is
    written under ``key`` (default ``"_reset"``, ready for a partial ``reset``) when it has a
    ``True`` value or ``write_full_false`` is set. ``key=None`` writes nothing.

    Example:
        >>> import torch
        >>> from tensordict import TensorDict
        >>> td = TensorDict({"terminated": torch.tensor([[True], [False]]),
        ...                  "truncated": torch.tensor([[False], [False]])}, [2])
        >>> terminated_or_truncated(td)
        True
        >>> td["_reset"].squeeze(-1).tolist()
        [True, False]
    """
    if full_done_spec is not None:
        leaves = [
            (k,) if isinstance(k, str) else tuple(k)
            for k in full_done_spec.keys(include_nested=True, leaves_only=True)
        ]
    else:
        leaves = [
            (k,) if isinstance(k, str) else tuple(k)
            for k in data.keys(include_nested=True, leaves_only=True)
        ]
    prefixes: list[tuple[str, ...]] = []
    for leaf in leaves:
        if leaf[-1] in ("done", "terminated", "truncated") and leaf[:-1] not in prefixes:
            prefixes.append(leaf[:-1])
    found = False
    for prefix in prefixes:
        flag = None
        for name in ("terminated", "truncated", "done"):
            value = data.get(prefix + (name,), None)
            if value is None:
                continue
            if name == "done" and flag is not None:
                continue
            flag = value if flag is None else flag | value
        if flag is None:
            continue
        any_flag = bool(flag.any())
        found = found or any_flag
        if key is not None and (any_flag or write_full_false):
            data.set(prefix + (key,), flag.clone())
    return found


class RandomPolicy:
    """A policy that writes random actions drawn from an action spec.

    Args:
        action_spec: the env's ``full_action_spec`` (or a leaf spec, written under ``"action"``).

    Example:
        >>> import hub
        >>> env = hub.make_env("hub:Pendulum")
        >>> policy = RandomPolicy(env.full_action_spec)
        >>> policy(env.reset())["action"].shape
        torch.Size([1])
    """

    def __init__(self, action_spec: TensorSpec, action_key: NestedKey = "action") -> None:
        if not isinstance(action_spec, Composite):
            action_spec = Composite({action_key: action_spec}, shape=action_spec.shape[:0])
        self.action_spec = action_spec
        self._ndim = len(action_spec.shape)

    def __call__(self, tensordict: TensorDictBase) -> TensorDictBase:
        extra = tuple(tensordict.batch_size[: max(tensordict.batch_dims - self._ndim, 0)])
        return tensordict.update(self.action_spec.rand(extra))


def make_composite_from_td(data: TensorDictBase, unsqueeze_null_shapes: bool = False) -> Composite:
    """A Composite of ``Unbounded`` specs with the shapes, dtypes and nesting of ``data``.

    Example:
        >>> import torch
        >>> from tensordict import TensorDict
        >>> spec = make_composite_from_td(TensorDict({"a": torch.zeros(2, 3)}, [2]))
        >>> spec["a"].shape
        torch.Size([2, 3])
    """
    out = Composite(shape=data.batch_size, device=data.device)
    for key, value in data.items():
        if isinstance(value, TensorDictBase):
            out[key] = make_composite_from_td(value, unsqueeze_null_shapes)
        elif isinstance(value, torch.Tensor):
            shape = value.shape
            if unsqueeze_null_shapes and len(shape) == data.batch_dims:
                shape = shape + (1,)
            out[key] = Unbounded(shape, device=value.device, dtype=value.dtype)
        else:
            out[key] = NonTensor(shape=data.batch_size, device=data.device)
    return out


def prebuilt_tensordict(
    data: dict[str, torch.Tensor], batch_size: torch.Size, device: torch.device | None = None
) -> TensorDictBase:
    """``TensorDict(data, batch_size, device)`` without tensordict's checks, for an env's step
    output whose entries are right by construction: flat string keys, tensors whose leading
    dims are ``batch_size``, all on ``device`` (or anywhere when it is ``None``).

    The checks cost more than the rest of a small env's step; a plugin's ``_step`` builds its
    output with this once it has made its tensors. Wrong input is not caught: use
    ``TensorDict(...)`` for anything else.

    Example:
        >>> import torch
        >>> prebuilt_tensordict({"reward": torch.zeros(4, 1)}, torch.Size([4])).batch_size
        torch.Size([4])
    """
    return new_td(data, batch_size, device)
