"""``Transform``: the base class of every env transform.

A transform reads ``in_keys`` of the data an env produces (step and reset outputs) and writes
``out_keys`` (``_apply_transform``); on the way in, it reads ``out_keys_inv`` of the data the
policy writes (actions, states) and writes ``in_keys_inv`` for the env below it
(``_inv_apply_transform``). ``in`` keys are the inner (base env) side, ``out`` keys the outer
(policy) side. ``transform_*_spec`` says what the outer specs are, given the inner ones.

Example:
    >>> import torch
    >>> import hub
    >>> from hub.transforms import Transform, TransformedEnv
    >>> class AddOneToObs(Transform):
    ...     def __init__(self):
    ...         super().__init__(in_keys=["observation"], out_keys=["observation"])
    ...     def _apply_transform(self, obs):
    ...         return obs + 1
    >>> env = TransformedEnv(hub.make_env("hub:Counting"), AddOneToObs())
    >>> env.reset()["observation"].tolist()
    [1]
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar

import torch
from tensordict import TensorDictBase

from hub.errors import HubError
from hub.specs import Composite, TensorSpec
from hub.transforms._utils import NestedKey, drop_keys, key_list

if TYPE_CHECKING:
    from hub.transforms.transformed_env import TransformedEnv

__all__ = ["Transform"]


class Transform:
    """Base class of the transforms (see the module docstring).

    Args:
        in_keys: entries read from the env's outputs (inner names).
        out_keys: where the results go (outer names); defaults to ``in_keys``.
        in_keys_inv: entries written for the env below on the way in (inner names).
        out_keys_inv: entries read from the policy's data on the way in (outer names); defaults
            to ``in_keys_inv``.

    Subclasses override ``_apply_transform`` / ``_inv_apply_transform`` for per-entry maps, or
    ``_call`` (step and reset outputs), ``_step(tensordict, next_tensordict)``,
    ``_reset(tensordict, tensordict_reset)`` and ``_inv_call`` for more, and the
    ``transform_*_spec`` methods whenever they change what an entry looks like.

    Example:
        >>> from hub.transforms import Transform
        >>> t = Transform(in_keys=["a"], out_keys=["b"])
        >>> t.in_keys, t.out_keys, t.parent is None
        (['a'], ['b'], True)
    """

    #: tolerate missing ``in_keys`` on step outputs (reset outputs always tolerate them)
    missing_tolerance: bool = False
    #: the env class :meth:`wrap` builds: ``TransformedEnv``, set by its module (which imports
    #: this one, so this one cannot import it)
    env_class: ClassVar[type[TransformedEnv]]

    def __init__(
        self,
        in_keys: NestedKey | Iterable[NestedKey] | None = None,
        out_keys: NestedKey | Iterable[NestedKey] | None = None,
        in_keys_inv: NestedKey | Iterable[NestedKey] | None = None,
        out_keys_inv: NestedKey | Iterable[NestedKey] | None = None,
    ) -> None:
        self._in_keys = key_list(in_keys)
        self._out_keys = key_list(out_keys) if out_keys is not None else list(self._in_keys)
        self._in_keys_inv = key_list(in_keys_inv)
        self._out_keys_inv = (
            key_list(out_keys_inv) if out_keys_inv is not None else list(self._in_keys_inv)
        )
        self._check_pairs()
        self._container: Any = None
        self._parent_cache: TransformedEnv | None = None

    def _check_pairs(self) -> None:
        if len(self._in_keys) != len(self._out_keys):
            raise ValueError(
                f"{type(self).__name__} got {len(self._in_keys)} in_keys {self._in_keys} and "
                f"{len(self._out_keys)} out_keys {self._out_keys}: give one out_key per in_key."
            )
        if len(self._in_keys_inv) != len(self._out_keys_inv):
            raise ValueError(
                f"{type(self).__name__} got {len(self._in_keys_inv)} in_keys_inv and "
                f"{len(self._out_keys_inv)} out_keys_inv: give one out_key_inv per in_key_inv."
            )

    # ------------------------------------------------------------------ keys
    @property
    def in_keys(self) -> list[NestedKey]:
        """Entries read from the env's outputs (inner names)."""
        return self._in_keys

    @in_keys.setter
    def in_keys(self, value: Any) -> None:
        self._in_keys = key_list(value)
        self._changed()

    @property
    def out_keys(self) -> list[NestedKey]:
        """Where the transformed entries are written (outer names)."""
        return self._out_keys

    @out_keys.setter
    def out_keys(self, value: Any) -> None:
        self._out_keys = key_list(value)
        self._changed()

    @property
    def in_keys_inv(self) -> list[NestedKey]:
        """Entries written for the env below on the way in (inner names)."""
        return self._in_keys_inv

    @in_keys_inv.setter
    def in_keys_inv(self, value: Any) -> None:
        self._in_keys_inv = key_list(value)
        self._changed()

    @property
    def out_keys_inv(self) -> list[NestedKey]:
        """Entries read from the policy's data on the way in (outer names)."""
        return self._out_keys_inv

    @out_keys_inv.setter
    def out_keys_inv(self, value: Any) -> None:
        self._out_keys_inv = key_list(value)
        self._changed()

    @property
    def has_inverse(self) -> bool:
        """Whether the transform changes the data on the way in (so the env must copy it)."""
        cls = type(self)
        return bool(self._in_keys_inv) or cls._inv_call is not Transform._inv_call

    @property
    def steps_nothing(self) -> bool:
        """Whether the transform leaves step outputs as they are (a chain skips it there)."""
        cls = type(self)
        return (
            not self._in_keys
            and cls._step is Transform._step
            and cls._call is Transform._call
            and cls._apply_keys is Transform._apply_keys
        )

    # ------------------------------------------------------------------ forward
    def _apply_transform(self, value: torch.Tensor) -> torch.Tensor:
        """Map one entry of the env's outputs (``in_key`` -> ``out_key``)."""
        raise NotImplementedError(
            f"{type(self).__name__} has in_keys {self._in_keys} but does not implement "
            "_apply_transform(value) (or _call(tensordict))."
        )

    def _apply_keys(self, tensordict: TensorDictBase, strict: bool) -> TensorDictBase:
        get = tensordict.get
        for in_key, out_key in zip(self._in_keys, self._out_keys):
            value = get(in_key, None)
            if value is None:
                if strict and not self.missing_tolerance:
                    raise KeyError(
                        f"{type(self).__name__} reads {in_key!r}, which is not in the data "
                        f"(keys: {list(tensordict.keys(True, True))}). Check the transform's "
                        "in_keys, or the order of the transforms."
                    )
                continue
            tensordict.set(out_key, self._apply_transform(value))
        return tensordict

    def _call(self, next_tensordict: TensorDictBase) -> TensorDictBase:
        """Transform the env's output (a step's ``"next"`` data) in place and return it."""
        return self._apply_keys(next_tensordict, strict=True)

    def _step(self, tensordict: TensorDictBase, next_tensordict: TensorDictBase) -> TensorDictBase:
        """Transform a step's output; ``tensordict`` is the step's input (outer names)."""
        return self._call(next_tensordict)

    def _reset(
        self, tensordict: TensorDictBase, tensordict_reset: TensorDictBase
    ) -> TensorDictBase:
        """Transform a reset's output; ``tensordict`` is the reset's input (with its
        ``"_reset"`` entries when the reset is partial). By default, as a step's output, with
        missing entries (a reward, for instance) skipped."""
        return self._apply_keys(tensordict_reset, strict=False)

    def _reset_env_preprocess(self, tensordict: TensorDictBase | None) -> TensorDictBase | None:
        """Change the input of the env's reset before it reaches the env below."""
        return tensordict

    def _base_reset_override(self, tensordict: TensorDictBase | None) -> TensorDictBase | None:
        """Data that replaces the env below's reset output (``None``: reset the env below)."""
        return None

    def forward(self, tensordict: TensorDictBase) -> TensorDictBase:
        """Apply the transform to any tensordict (data from a buffer, for instance), in place."""
        return self._apply_keys(tensordict, strict=True)

    __call__ = forward

    # ------------------------------------------------------------------ inverse
    def _inv_apply_transform(self, value: torch.Tensor) -> torch.Tensor:
        """Map one entry of the policy's data (``out_key_inv`` -> ``in_key_inv``)."""
        return value

    def _inv_call(self, tensordict: TensorDictBase) -> TensorDictBase:
        get = tensordict.get
        for in_key, out_key in zip(self._in_keys_inv, self._out_keys_inv):
            value = get(out_key, None)
            if value is None:
                if self.missing_tolerance:
                    continue
                raise KeyError(
                    f"{type(self).__name__} reads {out_key!r} on the way in, which is not in the "
                    f"input (keys: {list(tensordict.keys(True, True))}). The policy must write it."
                )
            tensordict.set(in_key, self._inv_apply_transform(value))
        return tensordict

    def inv(self, tensordict: TensorDictBase) -> TensorDictBase:
        """Apply the inverse transform (to the data going into the env), in place."""
        return self._inv_call(tensordict)

    # ------------------------------------------------------------------ specs
    def _transform_spec(self, spec: TensorSpec) -> TensorSpec:
        """The outer spec of one entry given its inner spec (forward keys); default: same."""
        return spec.clone()

    def _transform_inv_spec(self, spec: TensorSpec) -> TensorSpec:
        """The outer spec of one input entry given its inner spec (inverse keys); default: same."""
        return spec.clone()

    def _map_keys(self, spec: Composite) -> Composite:
        for in_key, out_key in zip(self._in_keys, self._out_keys):
            if in_key in spec:
                spec[out_key] = self._transform_spec(spec[in_key])
        return spec

    def transform_observation_spec(self, observation_spec: Composite) -> Composite:
        """The outer ``full_observation_spec`` given the inner one."""
        return self._map_keys(observation_spec)

    def transform_reward_spec(self, reward_spec: Composite) -> Composite:
        """The outer ``full_reward_spec`` given the inner one."""
        return self._map_keys(reward_spec)

    def transform_done_spec(self, done_spec: Composite) -> Composite:
        """The outer ``full_done_spec`` given the inner one."""
        return self._map_keys(done_spec)

    def _map_inv_keys(self, spec: Composite) -> Composite:
        for in_key, out_key in zip(self._in_keys_inv, self._out_keys_inv):
            if in_key in spec:
                new = self._transform_inv_spec(spec[in_key])
                if out_key != in_key:
                    drop_keys(spec, [in_key])
                spec[out_key] = new
        return spec

    def transform_action_spec(self, action_spec: Composite) -> Composite:
        """The outer ``full_action_spec`` given the inner one (the specs of ``out_keys_inv``)."""
        return self._map_inv_keys(action_spec)

    def transform_state_spec(self, state_spec: Composite) -> Composite:
        """The outer ``full_state_spec`` given the inner one."""
        return self._map_inv_keys(state_spec)

    def transform_output_spec(self, output_spec: Composite) -> Composite:
        """The outer output spec (observation, reward and done specs) given the inner one."""
        output_spec["full_observation_spec"] = self.transform_observation_spec(
            output_spec["full_observation_spec"]
        )
        output_spec["full_reward_spec"] = self.transform_reward_spec(
            output_spec["full_reward_spec"]
        )
        output_spec["full_done_spec"] = self.transform_done_spec(output_spec["full_done_spec"])
        return output_spec

    def transform_input_spec(self, input_spec: Composite) -> Composite:
        """The outer input spec (action and state specs) given the inner one."""
        input_spec["full_action_spec"] = self.transform_action_spec(input_spec["full_action_spec"])
        input_spec["full_state_spec"] = self.transform_state_spec(input_spec["full_state_spec"])
        return input_spec

    def wrap(self, env: Any) -> TransformedEnv:
        """``TransformedEnv(env, self)``: what ``env.append_transform(self)`` returns.

        Example:
            >>> import hub
            >>> from hub.transforms import StepCounter
            >>> type(StepCounter().wrap(hub.make_env("hub:Counting"))).__name__
            'TransformedEnv'
        """
        return self.env_class(env, self)

    # ------------------------------------------------------------------ parent and container
    @property
    def container(self) -> Any:
        """The ``TransformedEnv`` or ``Compose`` holding this transform (``None`` if free)."""
        return self._container

    def set_container(self, container: Any) -> None:
        """Attach the transform to an env or a Compose; a transform belongs to one at a time."""
        if self._container is not None and self._container is not container:
            raise HubError(
                f"this {type(self).__name__} already belongs to an env (its parent is set); a "
                "transform cannot serve two envs. Pass transform.clone() to the second env."
            )
        self._container = container
        self._parent_cache = None

    def reset_parent(self) -> None:
        """Detach the transform from its env (or Compose)."""
        self._container = None
        self._parent_cache = None

    def _forget_parent(self) -> None:
        """Drop the cached parent view (the chain it was built from changed)."""
        self._parent_cache = None

    @property
    def parent(self) -> TransformedEnv | None:
        """The env up to this transform: a ``TransformedEnv`` of the base env with (clones of)
        the transforms that come before this one; ``None`` for a free transform."""
        if self._parent_cache is None and self._container is not None:
            self._parent_cache = self._container._env_before(self)
        return self._parent_cache

    def _changed(self) -> None:
        """Tell the env holding this transform that its specs must be computed again."""
        container = getattr(self, "_container", None)
        if container is not None:
            container._transforms_changed()

    def clone(self) -> Transform:
        """A copy without a parent, sharing the tensors (buffers) of this one."""
        new = copy.copy(self)
        state = {}
        for name, value in self.__dict__.items():
            if isinstance(value, list | dict | set):
                value = copy.copy(value)
            state[name] = value
        new.__dict__.update(state)
        new._container = None
        new._parent_cache = None
        return new

    # ------------------------------------------------------------------ misc
    def _set_seed(self, seed: int | None) -> None:
        """Seed the transform's own randomness (the env's ``set_seed`` calls it)."""

    def close(self) -> None:
        """Release the transform's resources (the env's ``close`` calls it)."""

    def _extra_repr(self) -> str:
        parts = []
        if self._in_keys:
            parts.append(f"in_keys={self._in_keys}")
        if self._out_keys and self._out_keys != self._in_keys:
            parts.append(f"out_keys={self._out_keys}")
        if self._in_keys_inv:
            parts.append(f"in_keys_inv={self._in_keys_inv}")
        if self._out_keys_inv and self._out_keys_inv != self._in_keys_inv:
            parts.append(f"out_keys_inv={self._out_keys_inv}")
        return ", ".join(parts)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._extra_repr()})"
