"""``EnvBase``: the TensorDict environment contract.

An env reads and writes :class:`tensordict.TensorDict` objects. ``reset()`` returns the first
data of a trajectory; ``step(td)`` reads the action from ``td`` and writes what follows under
``td["next"]``; ``step_and_maybe_reset`` and ``rollout`` build on these. A subclass writes
``__init__`` (setting the specs, batch dims first), ``_reset``, ``_step`` and ``_set_seed``.

Example:
    >>> import torch
    >>> from tensordict import TensorDict
    >>> from hub import EnvBase
    >>> from hub.specs import Bounded, Composite, Unbounded
    >>> class Walk(EnvBase):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.observation_spec = Composite(position=Unbounded((1,)))
    ...         self.action_spec = Bounded(-1.0, 1.0, shape=(1,))
    ...         self.reward_spec = Unbounded((1,))
    ...     def _reset(self, tensordict):
    ...         self.position = torch.zeros(1)
    ...         return TensorDict({"position": self.position.clone()}, [])
    ...     def _step(self, tensordict):
    ...         self.position = self.position + tensordict["action"]
    ...         done = self.position.abs() > 2
    ...         return TensorDict(
    ...             {"position": self.position.clone(), "reward": -self.position.abs(), "done": done},
    ...             [],
    ...         )
    ...     def _set_seed(self, seed):
    ...         pass
    >>> env = Walk()
    >>> sorted(env.done_keys)
    ['done', 'terminated', 'truncated']
    >>> env.rollout(4, break_when_any_done=False).batch_size  # ended episodes restart
    torch.Size([4])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from tensordict import TensorDict, TensorDictBase

from hub.envs import checks as _checks
from hub.envs._fast_td import (
    fast_batch_size,
    fast_get,
    fast_items,
    fast_set,
    fast_update,
    new_td,
    shallow,
)
from hub.envs.arrays import as_tensor, nest, value_shape
from hub.envs.done import any_true, complete_done_flags
from hub.envs.env_keys import KeyList, OnlyKey, compute_keys
from hub.envs.reset_masks import (
    drop_reset_entries,
    mask_dims,
    mask_reset_output,
    mask_step_output,
    read_reset_masks,
)
from hub.envs.seeding import check_seed, next_seed
from hub.envs.spec_slots import (
    INPUT_SPECS,
    OUTPUT_SPECS,
    FullSpec,
    LeafSpec,
    assign,
    complete_default_specs,
    copy_into,
    empty_groups,
    set_full,
)
from hub.errors import ClosedEnvError, HubError, SpecMismatchError
from hub.specs import Composite, NestedKey, TensorSpec

__all__ = ["EnvBase"]


class _EnvMeta(type):
    """Runs ``_post_init`` once the whole ``__init__`` chain of a subclass has finished."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        env = super().__call__(*args, **kwargs)
        env._post_init()
        return env


class EnvBase(metaclass=_EnvMeta):
    """Base class of every hub environment.

    Args:
        device: where the env's tensors live (``None``: where ``_step`` puts them, usually CPU).
        batch_size: the env's batch dims (``()`` for a single env). Every spec starts with them.
        checks: check every action against the action spec (bounds included) and every output
            against the output specs (shapes, dtypes, finite rewards). With ``checks=False``,
            wrong action shapes and dtypes still raise, and so do discrete action values out of
            their spec (native code indexes with them); continuous bounds and finiteness are
            not checked.
        spec_locked: lock the specs after construction (setting a spec through the env's
            properties still works: it unlocks, sets and relocks).
        auto_reset: the env resets itself inside ``_step`` when an episode ends (see the
            "Auto-resetting envs" section of the docs).
        auto_reset_replace: with ``auto_reset``, replace the observations returned with the
            ``done`` flag by NaN (floats) or ``-1`` (integers), since they belong to the new episode.
        allow_done_after_reset: with ``checks``, tolerate ``done`` right after a reset.

    Subclasses set ``batch_locked = False`` (class or instance attribute) when they accept inputs
    of any batch size. They write ``_reset``, ``_step`` and ``_set_seed`` (and may write
    ``_close``, ``_step_into`` and ``_reset_finished``): the whole subclass contract, with when
    each hook is called and what it may assume, is ``hub.envs.subclass_hooks.SUBCLASS_HOOKS``
    (docs/plugins.md). Every other underscore name of this class is internal.
    """

    batch_locked: bool = True
    #: ``True`` when ``_reset`` itself keeps the input's values wherever ``"_reset"`` is ``False``
    #: (batched envs do: they reset only the chosen sub-envs and stack the others' data back), so
    #: that ``reset`` need not mask its output again.
    masks_partial_resets: bool = False

    def __init__(
        self,
        *,
        device: torch.device | str | int | None = None,
        batch_size: Sequence[int] | torch.Size | None = None,
        checks: bool = False,
        spec_locked: bool = True,
        auto_reset: bool = False,
        auto_reset_replace: bool = True,
        allow_done_after_reset: bool = False,
    ) -> None:
        self._device = torch.device(device) if device is not None else None
        self._batch_size = torch.Size(batch_size if batch_size is not None else ())
        self.checks = checks
        self._spec_locked = spec_locked
        self.auto_reset = auto_reset
        self.auto_reset_replace = auto_reset_replace
        self.allow_done_after_reset = allow_done_after_reset
        self._closed = False
        self._auto_reset_cache: TensorDictBase | None = None
        self._keys_ready = False
        self._output_spec, self._input_spec = empty_groups(self._batch_size, self._device)

    # ------------------------------------------------------------------ construction
    def _ensure_default_specs(self) -> None:
        """Add the default done flags and reward when the subclass declared none, and complete
        every done level with ``done``, ``terminated`` and ``truncated``."""
        complete_default_specs(self)

    def _post_init(self) -> None:
        """Complete the specs once the subclass's ``__init__`` has set them, then lock them."""
        self._ensure_default_specs()
        if self._spec_locked:
            self._output_spec.lock_()
            self._input_spec.lock_()
        self._compute_keys()

    # ------------------------------------------------------------------ batch size and device
    @property
    def batch_size(self) -> torch.Size:
        """The env's batch dims; every spec shape starts with them."""
        return self._batch_size

    @batch_size.setter
    def batch_size(self, value: Sequence[int]) -> None:
        value = torch.Size(value)
        if value == self._batch_size:
            return
        for group in (self._output_spec, self._input_spec):
            for sub in group.values():
                if list(sub.keys()):
                    raise HubError(
                        "the batch size of an env can only be set before its specs: got "
                        f"{list(value)} after specs of shape {list(self._batch_size)} were set."
                    )
        self._batch_size = value
        self._output_spec, self._input_spec = empty_groups(value, self._device)
        self._keys_ready = False

    @property
    def device(self) -> torch.device | None:
        """The device of the env's data (``None``: left to ``_step``)."""
        return self._device

    # ------------------------------------------------------------------ specs
    @property
    def output_spec(self) -> Composite:
        """``full_observation_spec``, ``full_reward_spec`` and ``full_done_spec`` in one Composite."""
        return self._output_spec

    @output_spec.setter
    def output_spec(self, value: Composite) -> None:
        for name in OUTPUT_SPECS:
            self._set_full(name, value[name])

    @property
    def input_spec(self) -> Composite:
        """``full_action_spec`` and ``full_state_spec`` in one Composite."""
        return self._input_spec

    @input_spec.setter
    def input_spec(self, value: Composite) -> None:
        for name in INPUT_SPECS:
            self._set_full(name, value[name])

    # overridden by TransformedEnv, whose specs come from its base env
    def _set_full(self, name: str, spec: TensorSpec) -> None:
        set_full(self, name, spec)

    def _assign(self, group_name: str, key: NestedKey, spec: TensorSpec) -> None:
        assign(self, group_name, key, spec)

    # each pair: the full spec (a Composite) and its leaf (hub.envs.spec_slots)
    full_observation_spec = FullSpec(
        "full_observation_spec",
        """Every observation entry, as written under ``"next"`` by ``step`` and by ``reset``.""",
    )
    observation_spec = full_observation_spec
    full_action_spec = FullSpec(
        "full_action_spec", """Every action entry (nested for multi-agent envs)."""
    )
    action_spec = LeafSpec(
        "full_action_spec",
        "action",
        """The action's leaf spec when the env has one action entry, else ``full_action_spec``.""",
    )
    full_reward_spec = FullSpec("full_reward_spec", """Every reward entry.""")
    reward_spec = LeafSpec(
        "full_reward_spec",
        "reward",
        """The reward's leaf spec when the env has one reward entry, else ``full_reward_spec``.""",
    )
    full_done_spec = FullSpec(
        "full_done_spec",
        """Every done flag: ``done``, ``terminated`` and ``truncated`` at each done level.""",
    )
    done_spec = LeafSpec(
        "full_done_spec",
        "done",
        """The done flags (a Composite, since ``terminated`` and ``truncated`` always exist).""",
    )
    full_state_spec = FullSpec(
        "full_state_spec",
        """Inputs other than actions that ``_step`` reads (the state of stateless envs).""",
    )
    state_spec = full_state_spec

    def set_spec_lock_(self, mode: bool = True) -> EnvBase:
        """Lock (``True``) or unlock (``False``) every spec of the env."""
        for group in (self._output_spec, self._input_spec):
            group.lock_() if mode else group.unlock_()
        self._spec_locked = mode
        self._keys_ready = False
        return self

    @property
    def is_spec_locked(self) -> bool:
        """Whether the specs are locked."""
        return self._output_spec.is_locked

    # ------------------------------------------------------------------ keys
    def _compute_keys(self) -> None:
        compute_keys(self)

    def _keys(self) -> None:
        if not self._keys_ready:
            compute_keys(self)

    action_keys = KeyList(
        "_action_keys", "The keys of the action entries (nested keys are tuples)."
    )
    reward_keys = KeyList("_reward_keys", "The keys of the reward entries.")
    done_keys = KeyList(
        "_done_keys",
        "The keys of every done flag (``done``, ``terminated``, ``truncated`` at each level).",
    )
    observation_keys = KeyList("_observation_keys", "The keys of the observation entries.")
    state_keys = KeyList("_state_keys", "The keys of the state entries.")
    reset_keys = KeyList("_reset_keys", 'The ``"_reset"`` keys, one next to each ``done`` flag.')

    action_key = OnlyKey("action", "The key of the env's action (raises when it has several).")
    reward_key = OnlyKey("reward", "The key of the env's reward (raises when it has several).")

    @property
    def done_key(self) -> NestedKey:
        """The key of the outermost ``done`` flag."""
        self._keys()
        return self._done_flag_keys[0]

    # ------------------------------------------------------------------ the contract
    def _step_arrays(
        self, inputs: Mapping[NestedKey, torch.Tensor], rows: torch.Tensor | None = None
    ) -> Mapping[NestedKey, Any]:
        """The backend's step, at the level of arrays (the hook a backend writes).

        Args:
            inputs: each action and state entry (``action_keys`` and ``state_keys``) as a tensor
                with the env's batch dims first, read with ``inputs[key]``. The actions are
                checked already (shape, dtype, discrete values; bounds with ``checks``).
            rows: ``None`` (step every sub-env) or a bool tensor of the batch shape: step those
                rows only; what is returned for the others is ignored.

        Returns:
            A dict from output leaf keys (observations, rewards, and at each done level any of
            ``done`` / ``terminated`` / ``truncated``: the missing ones are derived) to arrays of
            the spec's dtype and shape: tensors, numpy arrays or DLPack arrays (kept without a
            copy: do not write into them afterwards), or Python scalars for one-element entries.
        """
        raise NotImplementedError(
            f"{type(self).__name__} must implement _step_arrays(inputs, rows) (or _step)."
        )

    def _reset_arrays(
        self,
        rows: torch.Tensor | None = None,
        inputs: TensorDictBase | None = None,
        **kwargs: Any,
    ) -> Mapping[NestedKey, Any]:
        """The backend's reset, at the level of arrays (the hook a backend writes).

        Args:
            rows: ``None`` (reset every sub-env) or a bool tensor of the batch shape marking the
                sub-envs to reset.
            inputs: ``None``, or the input of a partial reset (its observations, done flags and
                state entries; envs with nested done levels find their masks under
                ``prefix + ("_reset",)``).
            **kwargs: the options given to ``reset`` (``seed=``, ``options=``...).

        Returns:
            The observation (and state) entries of the whole batch, as :meth:`_step_arrays`
            returns them; done flags may be left out (``False``). Rows outside ``rows`` are
            replaced by the input's values, unless the class sets ``masks_partial_resets``.
        """
        raise NotImplementedError(
            f"{type(self).__name__} must implement _reset_arrays(rows, inputs) (or _reset)."
        )

    # TensorDict-level hooks: what an env writes when it reads and writes tensordicts itself;
    # by default they call the array-level hooks above
    def _reset(self, tensordict: TensorDictBase | None, **kwargs: Any) -> TensorDictBase:
        if type(self)._reset_arrays is EnvBase._reset_arrays:
            raise NotImplementedError(
                f"{type(self).__name__} must implement _reset_arrays(rows, inputs) (or _reset)."
            )
        rows = None
        batch = self._batch_size
        if tensordict is not None:
            batch = tensordict.batch_size
            flags = fast_get(tensordict, "_reset")
            if flags is not None:
                rows = mask_dims(flags.bool())
        return self._arrays_to_td(self._reset_arrays(rows, tensordict, **kwargs), batch, "reset")

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        if type(self)._step_arrays is EnvBase._step_arrays:
            raise NotImplementedError(
                f"{type(self).__name__} must implement _step_arrays(inputs, rows) (or _step)."
            )
        rows = fast_get(tensordict, "_step")
        if rows is not None:
            rows = mask_dims(rows.bool())
        out = self._step_arrays(tensordict, rows)
        return self._arrays_to_td(out, tensordict.batch_size, "step")

    def _arrays_to_td(
        self, out: Mapping[NestedKey, Any], batch: torch.Size, what: str
    ) -> TensorDictBase:
        """The tensordict of an array-level hook's output (see :mod:`hub.envs.arrays`)."""
        if isinstance(out, TensorDictBase):
            return out
        if not self._keys_ready:
            self._compute_keys()
        plan = self.__dict__.get("_array_plan")
        if plan is None or plan[0] != self._spec_version:
            specs: dict[NestedKey, TensorSpec] = {}
            levels: dict[tuple[str, ...], torch.Size] = {}
            groups = [self._output_spec[name] for name in OUTPUT_SPECS]
            for group in [*groups, self._input_spec["full_state_spec"]]:
                for key in group.keys(include_nested=True):
                    spec = group[key]
                    if isinstance(spec, Composite):
                        levels.setdefault(key if isinstance(key, tuple) else (key,), spec.shape)
                    else:
                        specs.setdefault(key, spec)
            plan = self.__dict__["_array_plan"] = (self._spec_version, specs, levels)
        specs, levels = plan[1], plan[2]
        where = f"{type(self).__name__}._{what}_arrays output"
        n = len(self._batch_size)
        flat = {}
        for key, value in out.items():
            spec = specs.get(key)
            if spec is None:
                raise SpecMismatchError(
                    key,
                    "no entry (no spec declares it: declare it in the specs or leave it out)",
                    _checks.describe(value),
                    where=where,
                )
            flat[key] = as_tensor(value, spec, value_shape(spec, n, batch), key, where)
        return nest(flat, batch, levels, n, self._device)

    def _set_seed(self, seed: int | None) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement _set_seed(seed).")

    def _close(self) -> None:
        """Release the env's resources (called once by ``close``)."""

    # ------------------------------------------------------------------ reset
    def _closed_error(self, what: str) -> ClosedEnvError:
        return ClosedEnvError(
            f"{what}() was called on a closed {type(self).__name__}. Build a new env "
            "(an env cannot be reopened after close())."
        )

    def _check_batch(self, tensordict: TensorDictBase, what: str) -> None:
        if self.batch_locked and tensordict.batch_size != self._batch_size:
            raise SpecMismatchError(
                "<batch_size>",
                f"batch size {list(self._batch_size)} (this env is batch-locked)",
                f"a tensordict of batch size {list(tensordict.batch_size)}",
                where=what,
            )

    def reset(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> TensorDictBase:
        """Start new episodes and return the first data.

        With ``"_reset"`` entries in ``tensordict`` (next to the ``done`` flags), only the
        sub-envs (or agents) marked ``True`` are reset: the returned data keeps the values of
        ``tensordict`` everywhere else, and ``tensordict`` itself is updated in place. The
        ``"_reset"`` entries are removed.

        Example:
            >>> import hub
            >>> env = hub.make_env("hub:Counting", num_envs=2)
            >>> td = env.reset()
            >>> td["observation"].tolist()
            [[0], [0]]
        """
        if self._closed:
            raise self._closed_error("reset")
        if not self._keys_ready:
            self._compute_keys()
        masks = None
        if tensordict is not None:
            self._check_batch(tensordict, "reset")
            masks = read_reset_masks(tensordict, self._done_prefixes)
            if masks is not None and not any(bool(m.any()) for m in masks.values()):
                drop_reset_entries(tensordict, self._done_prefixes)
                return tensordict.copy()
        out = self._reset(tensordict, **kwargs)
        if out is None:
            raise HubError(
                f"{type(self).__name__}._reset returned None; it must return a TensorDict."
            )
        if out is tensordict:
            out = out.copy()
        drop_reset_entries(out, self._done_prefixes)
        complete_done_flags(out, self._done_prefixes, self._done_shapes)
        if masks is not None:
            if self.auto_reset and self._auto_reset_cache is not None:
                mask_reset_output(out, self._auto_reset_cache, _invert(masks), self._done_prefixes)
                self._auto_reset_cache = None
            if not self.masks_partial_resets:
                mask_reset_output(out, tensordict, masks, self._done_prefixes)
        elif self.auto_reset:
            self._auto_reset_cache = None
        if self.checks:
            _checks.check_reset_output(self, out)
        if tensordict is not None:
            drop_reset_entries(tensordict, self._done_prefixes)
            fast_update(tensordict, out)
        return out

    # ------------------------------------------------------------------ step
    def _check_actions(self, tensordict: TensorDictBase) -> None:
        """Raise :class:`~hub.errors.SpecMismatchError` when an action entry of ``tensordict``
        is missing, does not have its spec's shape, has a discrete value out of its spec (a
        category out of range, a one-hot row without exactly one 1) or, with ``checks``, is out
        of bounds or not finite: what :meth:`step` checks first. An action of another dtype
        that encodes the same values (an int64 one-hot for a bool ``OneHot``) is cast to the
        spec's dtype in ``tensordict``. For subclasses that step their backend outside
        :meth:`step` (see :meth:`_plain_step_ok`)."""
        locked = self.batch_locked
        for key, spec, shape, event_shape, dtype, values_ok in self._action_checks:
            value = fast_get(tensordict, key)
            if value is None:
                raise SpecMismatchError(
                    key, spec, "no such entry in the input tensordict", where="step"
                )
            if locked:
                bad_shape = value.shape != shape
            else:
                bad_shape = value.shape[tensordict.batch_dims :] != event_shape
            if bad_shape:
                raise SpecMismatchError(key, spec, _checks.describe(value), where="step")
            if value.dtype != dtype:
                value = _checks.cast_action(key, spec, value)
                tensordict.set(key, value)
            if self.checks:
                _checks.check_action_bounds(self, key, spec, value, tensordict)
            elif values_ok is not None and not values_ok(value):
                raise _checks.bad_action_values(key, spec, value)

    def _check_action_values(self, tensordict: TensorDictBase) -> None:
        """The part of :meth:`_check_actions` that keeps a bad discrete action from native
        code (out-of-range categories, invalid one-hot rows), for :meth:`step_into`."""
        for key, spec, _, _, _, values_ok in self._action_checks:
            value = fast_get(tensordict, key)
            if values_ok is not None and value is not None and not values_ok(value):
                raise _checks.bad_action_values(key, spec, value)

    def _plain_step_ok(self, tensordict: TensorDictBase) -> bool:
        """Whether stepping ``tensordict`` needs none of :meth:`step`'s generic work: the env is
        open with its keys computed, runs no ``checks`` and no ``auto_reset``, and
        ``tensordict`` is a plain ``TensorDict`` of the env's batch size with no ``"_step"``
        mask.

        For a subclass that writes a lean ``step_and_maybe_reset`` for its backend: it calls
        this and :meth:`_check_actions` first, and ``super().step_and_maybe_reset`` when this is
        ``False`` (see docs/plugins.md).
        """
        return (
            self._keys_ready
            and not self._closed
            and not self.checks
            and not self.auto_reset
            and type(tensordict) is TensorDict
            and fast_batch_size(tensordict) == self._batch_size
            and fast_get(tensordict, "_step") is None
        )

    def step(self, tensordict: TensorDictBase) -> TensorDictBase:
        """Apply the action in ``tensordict`` and write the result under ``tensordict["next"]``.

        A boolean ``"_step"`` entry of the tensordict's batch shape restricts the step to the
        elements marked ``True``; the others get their previous values (or zeros) under
        ``"next"``.

        Example:
            >>> import hub
            >>> env = hub.make_env("hub:Counting")
            >>> td = env.step(env.rand_action(env.reset()))
            >>> td["next", "observation"].tolist()
            [1]
        """
        if self._closed:
            raise self._closed_error("step")
        if not self._keys_ready:
            self._compute_keys()
        if self.batch_locked and fast_batch_size(tensordict) != self._batch_size:
            self._check_batch(tensordict, "step")
        self._check_actions(tensordict)
        step_mask = fast_get(tensordict, "_step")
        if step_mask is not None and not bool(step_mask.all()):  # rare: no fast path needed
            next_td = self._partial_step(tensordict, step_mask)
        else:
            next_td = self._step(tensordict)
            complete_done_flags(next_td, self._done_prefixes, self._done_shapes)
        if self.auto_reset:
            self._auto_reset_store(next_td)
        if self.checks:
            _checks.check_step_output(self, next_td)
        if fast_batch_size(next_td) == fast_batch_size(tensordict):
            fast_set(tensordict, "next", next_td)
        else:
            tensordict.set("next", next_td)
        return tensordict

    def step_into(
        self, tensordict: TensorDictBase, out: dict[NestedKey, torch.Tensor]
    ) -> list[NestedKey] | None:
        """Step, writing the ``"next"`` data into preallocated tensors instead of a new tensordict.

        For callers that checked the input themselves and keep the output in buffers of their
        own (a ``ParallelEnv`` worker: its parent checked the batched actions against the specs,
        and the results go to shared memory). ``out`` maps keys of the step's output
        (observations, rewards, done flags, state) to tensors of their specs' shapes and dtypes;
        each entry the step produces is copied into its tensor, the others are left alone (the
        step's entries that ``out`` lacks are dropped). ``tensordict`` is not modified. Returns
        ``None`` when every tensor of ``out`` was written, else the keys that were. The values of
        discrete actions are checked still (one reduction): a bad one never reaches native code.

        The values are those of ``step(tensordict)["next"]``; the default goes through
        ``_step`` (or through ``step`` itself when ``checks``, ``auto_reset``, a ``"_step"`` mask
        or an overridden ``step`` asks for more) and copies. An env may implement
        ``_step_into(tensordict, out)`` to write its backend's data straight into ``out``.

        Raises:
            SpecMismatchError: when an entry's shape or dtype does not fit its tensor.

        Example:
            >>> import hub, torch
            >>> env = hub.make_env("hub:Counting")
            >>> out = {"observation": torch.zeros(1, dtype=torch.int64)}
            >>> env.step_into(env.rand_action(env.reset()), out) is None  # out fully written
            True
            >>> out["observation"].tolist()
            [1]
        """
        if (
            self.checks
            or self.auto_reset
            or self._closed
            or type(self).step is not EnvBase.step
            or fast_get(tensordict, "_step") is not None
        ):
            next_td = self.step(tensordict.copy()).get("next")  # a shallow copy takes "next"
        else:
            if not self._keys_ready:
                self._compute_keys()
            self._check_action_values(tensordict)
            written = self._step_into(tensordict, out)
            if written is not NotImplemented:
                return written
            next_td = self._step(tensordict)
            complete_done_flags(next_td, self._done_prefixes, self._done_shapes)
        return copy_into(next_td, out, where=f"{type(self).__name__} step output")

    def _step_into(
        self, tensordict: TensorDictBase, out: dict[NestedKey, torch.Tensor]
    ) -> list[NestedKey] | None:
        """Optional: what :meth:`step_into` does, written straight into ``out``.

        Implement it when the backend's data can be copied into ``out`` without building
        tensors first; write every entry of ``out`` that ``_step`` would give (all three done
        flags included) and return as :meth:`step_into` does, or return ``NotImplemented`` for
        a case it does not handle (the default), which goes through ``_step``.
        """
        return NotImplemented

    def _partial_step(self, tensordict: TensorDictBase, step_mask: torch.Tensor) -> TensorDictBase:
        mask = mask_dims(step_mask) if step_mask.ndim > tensordict.batch_dims else step_mask
        if self.batch_locked:
            next_td = self._step(tensordict)
            complete_done_flags(next_td, self._done_prefixes, self._done_shapes)
            mask_step_output(next_td, tensordict, mask)
            return next_td
        sub = tensordict[mask]
        sub_next = self._step(sub)
        complete_done_flags(sub_next, self._done_prefixes, self._done_shapes)
        out = TensorDict({}, batch_size=tensordict.batch_size, device=sub_next.device)
        for key in sub_next.keys(include_nested=True, leaves_only=True):
            new = sub_next.get(key)
            old = tensordict.get(key, None)
            full_shape = tensordict.batch_size + new.shape[sub.batch_dims :]
            if isinstance(old, torch.Tensor) and old.shape == full_shape:
                full = old.clone()
            else:
                full = torch.zeros(full_shape, dtype=new.dtype, device=new.device)
            full[mask] = new
            out.set(key, full)
        return out

    def _auto_reset_store(self, next_td: TensorDictBase) -> None:
        """Keep the first observations of the new episodes for the next ``reset``, and replace
        the observations returned with ``done`` by placeholders when ``auto_reset_replace``."""
        done = next_td.get(self._done_flag_keys[0])
        if not any_true(done):
            return
        self._auto_reset_cache = next_td.select(*self._observation_keys, strict=False).clone()
        if not self.auto_reset_replace:
            return
        mask = mask_dims(done)
        for key in self._observation_keys:
            value = next_td.get(key, None)
            if not isinstance(value, torch.Tensor):
                continue
            fill = float("nan") if value.is_floating_point() else -1
            full = mask.reshape(mask.shape + (1,) * (value.ndim - mask.ndim))
            next_td.set(key, value.masked_fill(full, fill))

    # ------------------------------------------------------------------ loops
    def step_mdp(self, tensordict: TensorDictBase) -> TensorDictBase:
        """The input of the next step: ``tensordict["next"]`` without rewards, plus the root
        entries that are neither actions nor found under ``"next"`` (e.g. a policy's state)."""
        next_td = fast_get(tensordict, "next")
        exclude = self._mdp_exclude
        actions = self._action_set
        if type(next_td) is TensorDict and type(tensordict) is TensorDict and self._flat_rewards:
            tensor = torch.Tensor
            data = {
                k: v if type(v) is tensor else shallow(v)
                for k, v in fast_items(next_td)
                if k not in exclude
            }
            for key, value in fast_items(tensordict):
                if key in exclude or key in actions or key in data:
                    continue
                data[key] = value if type(value) is tensor else shallow(value)
            return new_td(data, fast_batch_size(next_td), next_td.device)
        out = next_td.exclude(*self._reward_keys) if self._reward_keys else next_td.copy()
        out_keys = out.keys()
        for key in tensordict.keys():
            if key in exclude or key in actions or key in out_keys:
                continue
            out.set(key, tensordict.get(key))
        return out

    def step_and_maybe_reset(
        self, tensordict: TensorDictBase
    ) -> tuple[TensorDictBase, TensorDictBase]:
        """Step, then reset the sub-envs whose episode ended.

        Returns ``(data, next_input)``: ``data`` is the stepped tensordict (with ``"next"``),
        ``next_input`` the input of the following step, holding the first observations of a new
        episode wherever one ended.

        Example:
            >>> import hub
            >>> env = hub.make_env("hub:Counting", num_envs=2, max_steps=2)
            >>> td = env.reset()
            >>> for _ in range(3):
            ...     data, td = env.step_and_maybe_reset(env.rand_action(td))
            >>> data["next", "done"].squeeze(-1).tolist(), td["observation"].squeeze(-1).tolist()
            ([False, False], [1, 1])
        """
        tensordict = self.step(tensordict)
        next_input = self.step_mdp(tensordict)
        self._reset_finished(next_input)
        return tensordict, next_input

    def _reset_finished(self, next_input: TensorDictBase) -> None:
        """Reset, in place, the sub-envs (or agents) of ``next_input`` whose episode ended.

        A ``"_reset"`` copy of each level's ``done`` flag drives a partial reset; entries the
        reset does not write (a policy's recurrent state, say) are kept.
        """
        any_done = False
        for done_key, reset_key in zip(self._done_flag_keys, self._reset_keys):
            done = fast_get(next_input, done_key)
            if done is not None and any_true(done):
                any_done = True
                fast_set(next_input, reset_key, done.clone())
        if any_done:
            self.reset(next_input)

    def rollout(
        self,
        max_steps: int,
        policy: Callable[[TensorDictBase], TensorDictBase] | None = None,
        callback: Callable[[EnvBase, TensorDictBase], Any] | None = None,
        *,
        auto_reset: bool = True,
        break_when_any_done: bool = True,
        break_when_all_done: bool = False,
        return_contiguous: bool = True,
        tensordict: TensorDictBase | None = None,
        out: TensorDictBase | None = None,
    ) -> TensorDictBase:
        """Run up to ``max_steps`` steps and return them stacked along a trailing ``"time"`` dim.

        Args:
            max_steps: the number of steps at most.
            policy: reads a tensordict and writes the action (default: random actions).
            callback: called as ``callback(env, data)`` after each step.
            auto_reset: reset first (``True``) or start from ``tensordict``; the sub-envs
                whose ``done`` flags are set in ``tensordict`` are reset then (a rollout
                continued from ``hub.step_mdp(previous[..., -1])`` goes on as one piece).
            break_when_any_done: stop at the first step where any sub-env is done.
            break_when_all_done: stop once every sub-env is done; done sub-envs are skipped
                (through ``"_step"``) until then. When both are ``False``, ended episodes are
                reset and the rollout goes on.
            return_contiguous: stack into one TensorDict (``False``: a lazy stack, needed when
                shapes vary between steps, as with dynamic specs).
            tensordict: the first input (required when ``auto_reset=False``).
            out: write the stacked steps into this tensordict (the output of an earlier rollout
                of the same length) instead of new memory, as a collector reusing its buffer
                does; it is returned, or a view of its first steps if the rollout stopped
                early. For pixel envs this saves most of the cost of keeping the frames.

        Example:
            >>> import hub
            >>> env = hub.make_env("hub:Counting", max_steps=5)
            >>> data = env.rollout(10)
            >>> data.batch_size, data.names[-1]
            (torch.Size([5]), 'time')
        """
        from hub.envs.rollout import run_rollout

        return run_rollout(
            self,
            max_steps,
            policy=policy,
            callback=callback,
            auto_reset=auto_reset,
            break_when_any_done=break_when_any_done,
            break_when_all_done=break_when_all_done,
            return_contiguous=return_contiguous,
            tensordict=tensordict,
            out=out,
        )

    # ------------------------------------------------------------------ random actions
    def rand_action(self, tensordict: TensorDictBase | None = None) -> TensorDictBase:
        """Write a random action (drawn from the action spec) into ``tensordict`` (or a new one)."""
        if not self._keys_ready:
            self._compute_keys()
        if tensordict is None:
            tensordict = TensorDict({}, batch_size=self._batch_size, device=self._device)
            extra: tuple[int, ...] = ()
        elif self.batch_locked:
            extra = ()
        else:
            extra = tuple(tensordict.batch_size[: tensordict.batch_dims - len(self._batch_size)])
        single = self._single_action
        if single is not None:
            tensordict.set(single[0], single[1].rand(extra))
        elif self._action_checks:
            tensordict.update(self._input_spec["full_action_spec"].rand(extra))
        return tensordict

    def rand_step(self, tensordict: TensorDictBase | None = None) -> TensorDictBase:
        """Step with a random action; resets first when no ``tensordict`` is given."""
        if tensordict is None:
            tensordict = self.reset()
        return self.step(self.rand_action(tensordict))

    # ------------------------------------------------------------------ seeding
    def set_seed(self, seed: int | None = None, static_seed: bool = False) -> int | None:
        """Seed the env and return the next seed to use (for the next env of a batch).

        The next seed is derived deterministically from ``seed``, so that seeding envs one after
        the other with the returned values never repeats a seed. ``static_seed=True`` returns
        ``seed`` itself.

        Example:
            >>> import hub
            >>> env = hub.make_env("hub:Pendulum")
            >>> env.set_seed(0) == env.set_seed(0) != 0
            True

        Raises:
            InvalidSeedError: ``seed`` is not ``None`` nor an int in ``[0, 2**32)``.
        """
        seed = check_seed(seed)
        self._set_seed(seed)
        if seed is None or static_seed:
            return seed
        return next_seed(seed)

    # ------------------------------------------------------------------ life cycle
    @property
    def is_closed(self) -> bool:
        """Whether ``close()`` was called."""
        return self._closed

    def close(self) -> None:
        """Release the env's resources. Calling it again does nothing."""
        if self._closed:
            return
        self._closed = True
        self._close()

    def __enter__(self) -> EnvBase:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ rendering
    def render_frames(self, tensordict: TensorDictBase | None = None) -> Any:
        """The env's current RGB frames, for a person to watch: a ``uint8`` numpy array of
        shape ``[*batch_size, H, W, 3]`` (``[H, W, 3]`` for an env of batch size ``[]``).

        ``tensordict`` is the env's current data (what its last ``reset`` or ``step`` gave);
        a stateless env draws from it, others may ignore it. ``VideoRecorder``,
        ``PixelRenderTransform``, ``hub rollout --record`` and the exports' ``render()`` all
        call this method. Envs that render override it: the gym and gymnasium plugins' (made
        with ``render_mode="rgb_array"``), EnvPool's (>= 1.0, same), dm_control's and
        ``hub:Pendulum``; ``SerialEnv`` / ``ParallelEnv`` stack their sub-envs' frames and a
        ``TransformedEnv`` gives its base env's.

        Raises:
            NoFramesError: this env does not render (the default), with how to get frames.

        Example:
            >>> import hub
            >>> hub.make_env("hub:Counting").render_frames()
            Traceback (most recent call last):
            ...
            hub.errors.NoFramesError: CountingEnv gives no frames: its class does not render. ...
        """
        from hub.errors import NoFramesError
        from hub.media.frames import no_frames_message

        raise NoFramesError(no_frames_message(type(self).__name__, "its class does not render"))

    def fake_tensordict(self) -> TensorDictBase:
        """A tensordict of zeros with every entry a step produces (inputs, and outputs under
        ``"next"``), from the specs."""
        data = self._input_spec["full_state_spec"].zero()
        data.update(self._input_spec["full_action_spec"].zero())
        obs = self._output_spec["full_observation_spec"].zero()
        done = self._output_spec["full_done_spec"].zero()
        data.update(obs)
        data.update(done)
        nxt = obs.clone()
        nxt.update(self._output_spec["full_reward_spec"].zero())
        nxt.update(done.clone())
        data.set("next", nxt)
        return data

    def append_transform(self, transform: Any) -> Any:
        """Return ``TransformedEnv(self, transform)`` (see :mod:`hub.transforms`).

        The transform builds it (``transform.wrap(self)``): the env layer knows no transform.
        """
        wrap = getattr(transform, "wrap", None)
        if wrap is None:
            raise TypeError(
                f"append_transform takes a hub.transforms.Transform (or a Compose of them), "
                f"got {type(transform).__name__}; wrap a function in a Transform subclass first."
            )
        return wrap(self)

    def __repr__(self) -> str:
        self._keys()
        dev = self._device if self._device is not None else "cpu"
        return (
            f"{type(self).__name__}(batch_size={list(self._batch_size)}, device={dev}, "
            f"observations={self._observation_keys}, actions={self._action_keys}, "
            f"batch_locked={self.batch_locked})"
        )


def _invert(masks: dict[tuple[str, ...], torch.Tensor]) -> dict[tuple[str, ...], torch.Tensor]:
    return {k: ~v for k, v in masks.items()}
