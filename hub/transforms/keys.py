"""Key transforms: ``RenameTransform``, ``ExcludeTransform``, ``SelectTransform``,
``RemoveEmptySpecs``, ``TensorDictPrimer``.

Example:
    >>> import hub
    >>> from hub.transforms import RenameTransform, TransformedEnv
    >>> env = TransformedEnv(hub.make_env("hub:Counting"),
    ...                      RenameTransform(["observation"], ["count"]))
    >>> sorted(env.reset().keys())
    ['count', 'done', 'terminated', 'truncated']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import torch
from tensordict import TensorDictBase

from hub.envs.done import DONE_NAMES
from hub.specs import Composite, TensorSpec
from hub.transforms._utils import NestedKey, as_tuple, drop_keys, key_list, norm_key, spec_leaves
from hub.transforms.transform import Transform

__all__ = [
    "RenameTransform",
    "ExcludeTransform",
    "SelectTransform",
    "RemoveEmptySpecs",
    "TensorDictPrimer",
]

_OUT_GROUPS = ("full_observation_spec", "full_reward_spec", "full_done_spec")


def _delete(tensordict: TensorDictBase, key: NestedKey) -> None:
    if tensordict.get(key, None) is not None:
        tensordict.del_(key)


class RenameTransform(Transform):
    """Rename entries: ``in_keys`` (the env's names) become ``out_keys`` on the way out, and
    ``out_keys_inv`` (the policy's names) become ``in_keys_inv`` on the way in.

    Args:
        in_keys, out_keys: output entries and their new names.
        in_keys_inv, out_keys_inv: input entries (actions, states): the env's name and the
            policy's name.
        create_copy: keep the old names as well.

    Example:
        >>> import hub
        >>> from hub.transforms import RenameTransform, TransformedEnv
        >>> t = RenameTransform([], [], in_keys_inv=["action"], out_keys_inv=["move"])
        >>> env = TransformedEnv(hub.make_env("hub:Counting"), t)
        >>> env.action_keys, env.rollout(2)["next", "observation"].squeeze(-1).tolist()
        (['move'], [1, 2])
    """

    def __init__(
        self,
        in_keys: NestedKey | Iterable[NestedKey],
        out_keys: NestedKey | Iterable[NestedKey],
        in_keys_inv: NestedKey | Iterable[NestedKey] | None = None,
        out_keys_inv: NestedKey | Iterable[NestedKey] | None = None,
        create_copy: bool = False,
    ) -> None:
        if in_keys_inv is not None and out_keys_inv is None:
            raise ValueError("RenameTransform needs out_keys_inv along with in_keys_inv.")
        super().__init__(in_keys, out_keys, in_keys_inv, out_keys_inv)
        for key in self._in_keys:
            if as_tuple(key)[-1] in DONE_NAMES and not create_copy:
                raise ValueError(
                    f"RenameTransform cannot rename the done flag {key!r}: every env keeps "
                    "'done', 'terminated' and 'truncated'. Use create_copy=True for an alias."
                )
        self.create_copy = create_copy

    def _rename(self, tensordict: TensorDictBase, strict: bool) -> TensorDictBase:
        for in_key, out_key in zip(self._in_keys, self._out_keys):
            value = tensordict.get(in_key, None)
            if value is None:
                if strict and not self.missing_tolerance:
                    raise KeyError(f"RenameTransform reads {in_key!r}, which is not in the data.")
                continue
            if not self.create_copy:
                tensordict.del_(in_key)
            tensordict.set(out_key, value)
        return tensordict

    def _apply_keys(self, tensordict: TensorDictBase, strict: bool) -> TensorDictBase:
        return self._rename(tensordict, strict)

    def _inv_call(self, tensordict: TensorDictBase) -> TensorDictBase:
        for in_key, out_key in zip(self._in_keys_inv, self._out_keys_inv):
            value = tensordict.get(out_key, None)
            if value is None:
                raise KeyError(
                    f"RenameTransform reads {out_key!r} on the way in, which is not in the input."
                )
            if not self.create_copy:
                tensordict.del_(out_key)
            tensordict.set(in_key, value)
        return tensordict

    def _map_keys(self, spec: Composite) -> Composite:
        for in_key, out_key in zip(self._in_keys, self._out_keys):
            if in_key in spec:
                leaf = spec[in_key]
                if not self.create_copy:
                    del spec[in_key]
                spec[out_key] = leaf.clone()
        return spec

    def transform_state_spec(self, state_spec: Composite) -> Composite:
        state_spec = self._map_keys(state_spec)
        return super().transform_state_spec(state_spec)


class ExcludeTransform(Transform):
    """Remove entries from the env's outputs (and from its specs).

    Args:
        *excluded_keys: the entries to remove.
        inverse: remove them from the inputs instead (before the env below sees them).

    Example:
        >>> import hub
        >>> from hub.transforms import ExcludeTransform, TransformedEnv
        >>> env = TransformedEnv(hub.make_env("hub:Pendulum"), ExcludeTransform("thdot"))
        >>> "thdot" in env.observation_keys
        False
    """

    def __init__(self, *excluded_keys: NestedKey, inverse: bool = False) -> None:
        super().__init__()
        keys = key_list(list(excluded_keys))
        for key in keys:
            if as_tuple(key)[-1] in DONE_NAMES:
                raise ValueError(f"ExcludeTransform cannot remove the done flag {key!r}.")
        self.excluded_keys = keys
        self.inverse = inverse

    @property
    def has_inverse(self) -> bool:
        return self.inverse

    def _drop(self, tensordict: TensorDictBase) -> TensorDictBase:
        for key in self.excluded_keys:
            _delete(tensordict, key)
        return tensordict

    def _apply_keys(self, tensordict: TensorDictBase, strict: bool) -> TensorDictBase:
        return tensordict if self.inverse else self._drop(tensordict)

    def _inv_call(self, tensordict: TensorDictBase) -> TensorDictBase:
        return self._drop(tensordict) if self.inverse else tensordict

    def transform_output_spec(self, output_spec: Composite) -> Composite:
        if not self.inverse:
            for group in _OUT_GROUPS:
                drop_keys(output_spec[group], self.excluded_keys)
        return output_spec

    def transform_input_spec(self, input_spec: Composite) -> Composite:
        drop_keys(input_spec["full_state_spec"], self.excluded_keys)
        if self.inverse:
            drop_keys(input_spec["full_action_spec"], self.excluded_keys)
        return input_spec

    def _extra_repr(self) -> str:
        return f"excluded_keys={self.excluded_keys}, inverse={self.inverse}"


class SelectTransform(Transform):
    """Keep only some entries of the env's outputs (and of its specs).

    Rewards, done flags and the env's state entries (which it needs back at the next step) are
    kept unless ``keep_rewards`` / ``keep_dones`` / ``keep_states`` say otherwise.

    Example:
        >>> import hub
        >>> from hub.transforms import SelectTransform, TransformedEnv
        >>> env = TransformedEnv(hub.make_env("hub:Pendulum", from_pixels=True),
        ...                      SelectTransform("observation", keep_states=False))
        >>> env.observation_keys
        ['observation']
    """

    def __init__(
        self,
        *selected_keys: NestedKey,
        keep_rewards: bool = True,
        keep_dones: bool = True,
        keep_states: bool = True,
    ) -> None:
        super().__init__()
        self.selected_keys = key_list(list(selected_keys))
        self.keep_rewards = keep_rewards
        self.keep_dones = keep_dones
        self.keep_states = keep_states
        self._drop_keys: list[NestedKey] = []

    def transform_output_spec(self, output_spec: Composite) -> Composite:
        keep = set(self.selected_keys)
        state = self._state_keys()
        drop: list[NestedKey] = []
        for group in _OUT_GROUPS:
            if group == "full_reward_spec" and self.keep_rewards:
                continue
            for key, _ in spec_leaves(output_spec[group]):
                if group == "full_done_spec" and (
                    self.keep_dones or as_tuple(key)[-1] in DONE_NAMES
                ):
                    continue
                if key not in keep and key not in state:
                    drop.append(key)
            drop_keys(output_spec[group], [k for k in drop if k in output_spec[group]])
        self._drop_keys = drop
        return output_spec

    def _state_keys(self) -> set[NestedKey]:
        if not self.keep_states:
            return set()
        parent = self.parent
        return set(parent.state_keys) if parent is not None else set()

    def transform_input_spec(self, input_spec: Composite) -> Composite:
        if not self.keep_states:
            keep = set(self.selected_keys)
            state = input_spec["full_state_spec"]
            drop_keys(state, [k for k, _ in spec_leaves(state) if k not in keep])
        return input_spec

    def _apply_keys(self, tensordict: TensorDictBase, strict: bool) -> TensorDictBase:
        for key in self._drop_keys:
            _delete(tensordict, key)
        return tensordict

    def _extra_repr(self) -> str:
        return f"selected_keys={self.selected_keys}"


def _prune(spec: Composite) -> None:
    for key in list(spec.keys()):
        child = spec[key]
        if isinstance(child, Composite):
            _prune(child)
            if not len(child):
                del spec[key]


def _prune_data(tensordict: TensorDictBase) -> None:
    for key in list(tensordict.keys()):
        child = tensordict.get(key)
        if isinstance(child, TensorDictBase):
            _prune_data(child)
            if child.is_empty():
                tensordict.del_(key)


class RemoveEmptySpecs(Transform):
    """Remove empty nested entries (Composites without leaves) from the specs and the data.

    Example:
        >>> import hub
        >>> from hub.specs import Composite
        >>> from hub.transforms import RemoveEmptySpecs, TransformedEnv
        >>> base = hub.make_env("hub:Counting")
        >>> base.observation_spec = base.observation_spec.clone().set("info", Composite())
        >>> env = TransformedEnv(base, RemoveEmptySpecs())
        >>> "info" in env.observation_spec.keys()
        False
    """

    def transform_output_spec(self, output_spec: Composite) -> Composite:
        for group in _OUT_GROUPS:
            _prune(output_spec[group])
        return output_spec

    def transform_input_spec(self, input_spec: Composite) -> Composite:
        for group in ("full_action_spec", "full_state_spec"):
            _prune(input_spec[group])
        return input_spec

    def _apply_keys(self, tensordict: TensorDictBase, strict: bool) -> TensorDictBase:
        _prune_data(tensordict)
        return tensordict


class TensorDictPrimer(Transform):
    """Add entries that the policy carries from step to step (a recurrent state, for instance):
    set at reset (to ``default_value``, or random draws from their spec), declared as
    observations and states, and carried over from the step's input when the env does not
    write them.

    Args:
        primers: the entries' specs (a Composite or a dict; shapes with or without the env's
            batch dims); keyword arguments add more.
        random: draw the reset values from the specs.
        default_value: the reset value otherwise (a number, or a dict per key).

    Example:
        >>> import hub
        >>> from hub.specs import Unbounded
        >>> from hub.transforms import TensorDictPrimer, TransformedEnv
        >>> env = TransformedEnv(hub.make_env("hub:Counting"),
        ...                      TensorDictPrimer(hidden=Unbounded((4,))))
        >>> env.reset()["hidden"].tolist()
        [0.0, 0.0, 0.0, 0.0]
    """

    def __init__(
        self,
        primers: Composite | Mapping[NestedKey, TensorSpec] | None = None,
        random: bool = False,
        default_value: float | Mapping[NestedKey, float] = 0.0,
        **kwargs: TensorSpec,
    ) -> None:
        super().__init__()
        specs: dict[NestedKey, TensorSpec] = {}
        if isinstance(primers, Composite):
            specs.update({k: v for k, v in spec_leaves(primers)})
        elif primers is not None:
            specs.update({norm_key(k): v for k, v in primers.items()})
        specs.update(kwargs)
        if not specs:
            raise ValueError("TensorDictPrimer needs at least one entry spec.")
        self.primers = specs
        self.random = random
        self.default_value = default_value
        self._specs: dict[NestedKey, TensorSpec] = {}
        self._batch_ndim = 0

    def _expanded(self, batch: torch.Size) -> dict[NestedKey, TensorSpec]:
        out = {}
        for key, spec in self.primers.items():
            if spec.shape[: len(batch)] != batch:
                spec = spec.expand(*batch, *spec.shape)
            out[key] = spec
        return out

    def transform_output_spec(self, output_spec: Composite) -> Composite:
        self._batch_ndim = len(output_spec.shape)
        self._specs = self._expanded(output_spec.shape)
        obs = output_spec["full_observation_spec"]
        for key, spec in self._specs.items():
            obs[key] = spec.clone()
        return output_spec

    def transform_input_spec(self, input_spec: Composite) -> Composite:
        state = input_spec["full_state_spec"]
        for key, spec in self._specs.items():
            state[key] = spec.clone()
        return input_spec

    def _value(self, key: NestedKey, spec: TensorSpec, td: TensorDictBase) -> torch.Tensor:
        extra = td.batch_size[: td.batch_dims - self._batch_ndim]
        if self.random:
            return spec.rand(extra)
        default = self.default_value
        if isinstance(default, Mapping):
            default = default.get(key, 0.0)
        return torch.full_like(spec.zero(extra), default)

    def _call(self, next_tensordict: TensorDictBase) -> TensorDictBase:
        return next_tensordict

    def _step(self, tensordict: TensorDictBase, next_tensordict: TensorDictBase) -> TensorDictBase:
        for key, spec in self._specs.items():
            if next_tensordict.get(key, None) is None:
                value = tensordict.get(key, None)
                if value is None:
                    value = self._value(key, spec, next_tensordict)
                next_tensordict.set(key, value)
        return next_tensordict

    def _reset(
        self, tensordict: TensorDictBase, tensordict_reset: TensorDictBase
    ) -> TensorDictBase:
        for key, spec in self._specs.items():
            tensordict_reset.set(key, self._value(key, spec, tensordict_reset))
        return tensordict_reset

    def _extra_repr(self) -> str:
        return f"primers={list(self.primers)}, random={self.random}"
