"""Action transforms: ``ActionMask``, ``ActionDiscretizer``, ``DiscreteActionProjection``,
``MultiAction``.

Example:
    >>> import hub
    >>> from hub.transforms import ActionDiscretizer, TransformedEnv
    >>> env = TransformedEnv(hub.make_env("hub:Pendulum"), ActionDiscretizer(5))
    >>> env.action_spec
    Categorical(shape=[1], dtype=int64, n=5)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from tensordict import TensorDictBase

from hub.errors import HubError, SpecMismatchError
from hub.specs import (
    Bounded,
    Categorical,
    Composite,
    MultiCategorical,
    MultiOneHot,
    OneHot,
    TensorSpec,
)
from hub.transforms._utils import NestedKey, norm_key, step_again
from hub.transforms.transform import Transform

__all__ = [
    "ActionMask",
    "ActionDiscretizer",
    "DiscreteActionProjection",
    "MultiAction",
    "MaskedCategorical",
    "MaskedOneHot",
]


def _sample_masked(mask: torch.Tensor, shape: torch.Size) -> torch.Tensor:
    """Indices drawn uniformly among the allowed (``True``) entries of ``mask`` (last dim)."""
    n = mask.shape[-1]
    full = mask.expand(*shape, n).reshape(-1, n)
    if not bool(full.any(-1).all()):
        raise HubError("ActionMask: a mask allows no action at all; the env must allow one.")
    index = torch.multinomial(full.float(), 1).reshape(shape)
    return index


class _Masked:
    """What :class:`MaskedCategorical` and :class:`MaskedOneHot` share: the ``mask`` they are
    rebuilt with and compare by, and :meth:`update_mask`."""

    mask: torch.Tensor | None
    n: int

    def _init_args(self) -> dict[str, Any]:
        return {**super()._init_args(), "mask": self.mask}  # type: ignore[misc]

    def _params(self) -> dict[str, Any]:
        return {"n": self.n}

    def update_mask(self, mask: torch.Tensor | None) -> None:
        """Set the allowed values (``None``: all)."""
        self.mask = None if mask is None else mask.to(torch.bool)


class MaskedCategorical(_Masked, Categorical):
    """A :class:`~hub.specs.Categorical` whose ``rand`` draws only allowed values (``mask``,
    shape ``(*shape, n)``); ``is_allowed`` checks a value against the mask.

    Example:
        >>> import torch
        >>> spec = MaskedCategorical(3)
        >>> spec.update_mask(torch.tensor([False, True, False]))
        >>> spec.rand().item()
        1
    """

    def __init__(
        self,
        n: int,
        shape: Any = None,
        device: Any = None,
        dtype: torch.dtype = torch.int64,
        mask: torch.Tensor | None = None,
    ) -> None:
        super().__init__(n, shape, device, dtype)
        self.mask = mask

    def rand(self, shape: Any = ()) -> torch.Tensor:
        if self.mask is None:
            return super().rand(shape)
        full = self._full_shape(shape)
        return _sample_masked(self.mask, full).to(self.dtype)

    def is_allowed(self, value: torch.Tensor) -> bool:
        """Whether ``value`` is allowed by the current mask."""
        if self.mask is None:
            return True
        mask = self.mask.expand(*value.shape, self.n)
        return bool(mask.gather(-1, value.long().unsqueeze(-1)).all())


class MaskedOneHot(_Masked, OneHot):
    """A :class:`~hub.specs.OneHot` whose ``rand`` draws only allowed values (``mask`` has the
    spec's shape).

    Example:
        >>> import torch
        >>> spec = MaskedOneHot(3)
        >>> spec.update_mask(torch.tensor([False, False, True]))
        >>> spec.rand().tolist()
        [False, False, True]
    """

    def __init__(
        self,
        n: int,
        shape: Any = None,
        device: Any = None,
        dtype: torch.dtype = torch.bool,
        mask: torch.Tensor | None = None,
    ) -> None:
        super().__init__(n, shape, device, dtype)
        self.mask = mask

    def rand(self, shape: Any = ()) -> torch.Tensor:
        if self.mask is None:
            return super().rand(shape)
        full = self._full_shape(shape)
        index = _sample_masked(self.mask, full[:-1])
        return torch.nn.functional.one_hot(index, self.n).to(self.dtype)

    def is_allowed(self, value: torch.Tensor) -> bool:
        """Whether ``value`` is allowed by the current mask."""
        if self.mask is None:
            return True
        return bool((value.bool() <= self.mask.expand(value.shape)).all())


class ActionMask(Transform):
    """Keep the action spec's mask up to date with the env's ``"action_mask"`` output, so that
    random actions (``env.rand_action``, ``rollout`` without a policy) are always allowed ones.

    The action must be :class:`~hub.specs.Categorical` or :class:`~hub.specs.OneHot`. With
    ``checks=True``, an action outside the mask raises. Put it on the batched env, not on its
    sub-envs.

    Example:
        >>> import torch
        >>> from tensordict import TensorDict
        >>> from hub import EnvBase
        >>> from hub.specs import Categorical, Composite
        >>> from hub.transforms import ActionMask, TransformedEnv
        >>> class OnlyOne(EnvBase):  # the allowed action cycles 0, 1, 2, 0, ...
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.observation_spec = Composite(action_mask=Categorical(2, (3,), dtype=torch.bool))
        ...         self.action_spec = Categorical(3)
        ...     def _obs(self):
        ...         return TensorDict(action_mask=torch.arange(3) == self.t % 3)
        ...     def _reset(self, td):
        ...         self.t = 0
        ...         return self._obs()
        ...     def _step(self, td):
        ...         assert bool(td["action"] == self.t % 3)
        ...         self.t += 1
        ...         return self._obs().set("reward", torch.ones(1))
        ...     def _set_seed(self, seed):
        ...         pass
        >>> env = TransformedEnv(OnlyOne(), ActionMask())
        >>> env.rollout(4)["action"].tolist()
        [0, 1, 2, 0]
    """

    def __init__(
        self, action_key: NestedKey = "action", mask_key: NestedKey = "action_mask"
    ) -> None:
        super().__init__()
        self.action_key = norm_key(action_key)
        self.mask_key = norm_key(mask_key)
        self._spec: MaskedCategorical | MaskedOneHot | None = None

    def transform_input_spec(self, input_spec: Composite) -> Composite:
        actions = input_spec["full_action_spec"]
        spec = actions.get(self.action_key)
        if isinstance(spec, MaskedCategorical | MaskedOneHot):
            masked = spec
        elif isinstance(spec, Categorical):
            masked = MaskedCategorical(spec.n, spec.shape, spec.device, spec.dtype)
        elif isinstance(spec, OneHot):
            masked = MaskedOneHot(spec.n, spec.shape, spec.device, spec.dtype)
        else:
            raise HubError(
                f"ActionMask needs a Categorical or OneHot action at {self.action_key!r}, got "
                f"{spec!r}."
            )
        actions[self.action_key] = masked
        self._spec = masked
        return input_spec

    def _update(self, data: TensorDictBase) -> None:
        mask = data.get(self.mask_key, None)
        if mask is None:
            raise KeyError(f"ActionMask reads {self.mask_key!r}, which the env did not write.")
        env = _root_env(self)
        spec = env.full_action_spec[self.action_key] if env is not None else self._spec
        if isinstance(spec, MaskedCategorical | MaskedOneHot):
            spec.update_mask(mask)

    def _call(self, next_tensordict: TensorDictBase) -> TensorDictBase:
        self._update(next_tensordict)
        return next_tensordict

    def _reset(
        self, tensordict: TensorDictBase, tensordict_reset: TensorDictBase
    ) -> TensorDictBase:
        self._update(tensordict_reset)
        return tensordict_reset

    @property
    def has_inverse(self) -> bool:
        return True  # checks the action against the mask when the env's checks are on

    def _inv_call(self, tensordict: TensorDictBase) -> TensorDictBase:
        env = _root_env(self)
        if env is not None and env.checks:
            spec = env.full_action_spec[self.action_key]
            value = tensordict.get(self.action_key)
            if isinstance(spec, MaskedCategorical | MaskedOneHot) and not spec.is_allowed(value):
                raise SpecMismatchError(
                    self.action_key,
                    spec,
                    f"an action outside the mask: {value.tolist()}",
                    where="step",
                )
        return tensordict


def _root_env(transform: Transform) -> Any:
    """The TransformedEnv a transform belongs to (through Composes), or ``None``."""
    container = transform.container
    while container is not None and isinstance(container, Transform):
        container = container.container
    return container


class ActionDiscretizer(Transform):
    """Expose a continuous (``Bounded``) action as a discrete one: each dim's range is cut into
    ``num_intervals`` intervals, and the policy picks one per dim.

    Args:
        num_intervals: intervals per dim (an int, or one per dim).
        action_key: the env's continuous action.
        out_action_key: the policy's discrete action (default: ``action_key``); the env's action
            is then hidden from the policy's action spec.
        sampling: where in its interval an index lands: ``"median"`` (centre), ``"low"``,
            ``"high"`` or ``"random"``.
        categorical: indices (``Categorical`` / ``MultiCategorical``) or one-hot
            (``OneHot`` / ``MultiOneHot``).

    Example:
        >>> import hub
        >>> from hub.transforms import ActionDiscretizer, TransformedEnv
        >>> t = ActionDiscretizer(4, out_action_key="action_discrete", sampling="low")
        >>> env = TransformedEnv(hub.make_env("hub:Pendulum"), t)
        >>> env.action_keys
        ['action_discrete']
        >>> t.to_continuous(torch.tensor([0, 3])).tolist()
        [-2.0, 1.0]
    """

    def __init__(
        self,
        num_intervals: int | Sequence[int],
        action_key: NestedKey = "action",
        out_action_key: NestedKey | None = None,
        sampling: str = "median",
        categorical: bool = True,
    ) -> None:
        action_key = norm_key(action_key)
        out_key = norm_key(out_action_key) if out_action_key is not None else action_key
        super().__init__(in_keys_inv=[action_key], out_keys_inv=[out_key])
        if sampling not in ("median", "low", "high", "random"):
            raise ValueError(
                f"sampling must be 'median', 'low', 'high' or 'random', got {sampling!r}."
            )
        self.num_intervals = num_intervals
        self.action_key = action_key
        self.out_action_key = out_key
        self.sampling = sampling
        self.categorical = categorical
        self._low: torch.Tensor | None = None
        self._width: torch.Tensor | None = None
        self._nvec: list[int] = []

    def _transform_inv_spec(self, spec: TensorSpec) -> TensorSpec:
        if not isinstance(spec, Bounded) or not spec.dtype.is_floating_point:
            raise HubError(f"ActionDiscretizer needs a Bounded float action, got {spec!r}.")
        if not bool(torch.isfinite(spec.low).all() & torch.isfinite(spec.high).all()):
            raise HubError("ActionDiscretizer needs finite action bounds.")
        dims = spec.shape[-1] if spec.shape else 1
        nvec = self.num_intervals
        nvec = [int(nvec)] * dims if isinstance(nvec, int) else [int(n) for n in nvec]
        if len(nvec) != dims or min(nvec) < 1:
            raise ValueError(
                f"ActionDiscretizer got num_intervals={self.num_intervals} for an action with "
                f"{dims} dims: give a positive int, or one per dim."
            )
        self._nvec = nvec
        counts = torch.tensor(nvec, dtype=spec.dtype, device=spec.device)
        self._low = spec.low
        self._width = (spec.high - spec.low) / counts
        shape = spec.shape
        if self.categorical:
            if dims == 1:
                return Categorical(nvec[0], shape=shape, device=spec.device)
            return MultiCategorical(nvec, shape=shape, device=spec.device)
        if dims == 1:
            return OneHot(nvec[0], shape=(*shape[:-1], nvec[0]), device=spec.device)
        return MultiOneHot(nvec, shape=(*shape[:-1], sum(nvec)), device=spec.device)

    def _indices(self, value: torch.Tensor) -> torch.Tensor:
        if self.categorical:
            return value.long()
        if len(self._nvec) == 1:
            return value.long().argmax(-1, keepdim=True)
        parts = value.long().split(self._nvec, -1)
        return torch.stack([p.argmax(-1) for p in parts], -1)

    def to_continuous(self, index: torch.Tensor) -> torch.Tensor:
        """The continuous action for interval indices (one per dim)."""
        if self._low is None or self._width is None:
            raise HubError("ActionDiscretizer has not seen its env's action spec yet.")
        offset: Any
        if self.sampling == "median":
            offset = 0.5
        elif self.sampling == "low":
            offset = 0.0
        elif self.sampling == "high":
            offset = 1.0
        else:
            offset = torch.rand(index.shape, dtype=self._width.dtype, device=index.device)
        return self._low + (index.to(self._width.dtype) + offset) * self._width

    def _inv_apply_transform(self, value: torch.Tensor) -> torch.Tensor:
        return self.to_continuous(self._indices(value))


class DiscreteActionProjection(Transform):
    """Let a policy with ``max_actions`` one-hot actions drive an env with fewer
    (``num_actions_effective``): an action beyond the env's range becomes a random valid one.

    Example:
        >>> import torch
        >>> from tensordict import TensorDict
        >>> from hub.transforms import DiscreteActionProjection
        >>> t = DiscreteActionProjection(3, 5)
        >>> td = TensorDict(action=torch.nn.functional.one_hot(torch.tensor(1), 5).bool())
        >>> t.inv(td)["action"].tolist()
        [False, True, False]
    """

    def __init__(
        self, num_actions_effective: int, max_actions: int, action_key: NestedKey = "action"
    ) -> None:
        if num_actions_effective > max_actions:
            raise ValueError(
                f"num_actions_effective ({num_actions_effective}) cannot exceed max_actions "
                f"({max_actions})."
            )
        key = norm_key(action_key)
        super().__init__(in_keys_inv=[key], out_keys_inv=[key])
        self.num_actions_effective = int(num_actions_effective)
        self.max_actions = int(max_actions)
        self.dtype = torch.bool

    def _transform_inv_spec(self, spec: TensorSpec) -> TensorSpec:
        if not isinstance(spec, OneHot) or spec.n != self.num_actions_effective:
            raise HubError(
                f"DiscreteActionProjection needs a OneHot({self.num_actions_effective}) action, "
                f"got {spec!r}."
            )
        self.dtype = spec.dtype
        shape = (*spec.shape[:-1], self.max_actions)
        return OneHot(self.max_actions, shape=shape, device=spec.device, dtype=spec.dtype)

    def _inv_apply_transform(self, value: torch.Tensor) -> torch.Tensor:
        index = value.long().argmax(-1)
        n = self.num_actions_effective
        beyond = index >= n
        if bool(beyond.any()):
            index = torch.where(beyond, torch.randint_like(index, n), index)
        return torch.nn.functional.one_hot(index, n).to(self.dtype)


class MultiAction(Transform):
    """Run a sequence of actions in one step: the policy writes ``n_actions`` actions stacked
    right after the batch dims, the env below runs them in turn (a sub-env whose episode ends
    stops), and the step returns the last data with the rewards summed.

    Put it first (innermost): it steps the env below it.

    Example:
        >>> import torch
        >>> import hub
        >>> from hub.transforms import MultiAction, TransformedEnv
        >>> env = TransformedEnv(hub.make_env("hub:Counting"), MultiAction(3))
        >>> env.action_spec.shape
        torch.Size([3, 1])
        >>> td = env.reset().set("action", torch.ones(3, 1, dtype=torch.int64))
        >>> out = env.step(td)["next"]
        >>> out["observation"].tolist(), out["reward"].tolist()
        ([3], [3.0])
    """

    def __init__(self, n_actions: int) -> None:
        super().__init__()
        if int(n_actions) != n_actions or n_actions < 1:
            raise ValueError(f"n_actions must be a positive int, got {n_actions!r}.")
        self.n_actions = int(n_actions)
        self._batch_ndim = 0
        self._action_keys: list[NestedKey] = []
        self._sequence: dict[NestedKey, torch.Tensor] = {}

    @property
    def has_inverse(self) -> bool:
        return True

    def transform_input_spec(self, input_spec: Composite) -> Composite:
        actions = input_spec["full_action_spec"]
        n = len(input_spec.shape)
        self._batch_ndim = n
        self._action_keys = [norm_key(k) for k in actions.keys(True, True)]
        for key in self._action_keys:
            spec = actions[key]
            actions[key] = torch.stack([spec] * self.n_actions, n)
        return input_spec

    def _inv_call(self, tensordict: TensorDictBase) -> TensorDictBase:
        dim = tensordict.batch_dims
        first = {}
        for key in self._action_keys:
            value = tensordict.get(key)
            first[key] = value
            tensordict.set(key, value.select(dim, 0))
        self._sequence = first
        return tensordict

    def _call(self, next_tensordict: TensorDictBase) -> TensorDictBase:
        return next_tensordict

    def _step(self, tensordict: TensorDictBase, next_tensordict: TensorDictBase) -> TensorDictBase:
        parent = self.parent
        if parent is None:
            raise HubError("MultiAction steps the env it belongs to: use it in one.")
        sequence = self._sequence
        dim = tensordict.batch_dims

        def inputs_for(i: int, inputs: TensorDictBase) -> TensorDictBase:
            for key, value in sequence.items():
                inputs.set(key, value.select(dim, i))
            return inputs

        return step_again(parent, tensordict, next_tensordict, self.n_actions, inputs_for)
