"""The step pipeline of every hub env: ``reset``, ``step``, ``step_and_maybe_reset``,
``rollout``.

One sequence serves them all, and reads top to bottom:

1. **check**: the env is open, the input has the env's batch size, every action has its spec's
   shape and dtype (an equivalent encoding is cast) and valid discrete values (bounds too with
   ``checks=True``); a sub-env whose episode ended is not stepped again before a reset;
2. **partial step**: a ``"_step"`` mask restricts the step to some rows;
3. **backend**: the env's hook (``_step_arrays`` with plain arrays, or ``_step`` with
   tensordicts: :mod:`hub.envs.contract`);
4. **done flags**: every done level gets ``done``, ``terminated`` and ``truncated``
   (:class:`hub.envs.arrays.OutputPlan`), and what ended is known from them;
5. **masks**: rows that did not step keep their previous values;
6. **auto-reset**: envs that reset themselves keep the first observations of the new episodes
   for the next ``reset``; in ``step_and_maybe_reset`` and ``rollout``, the rows that ended are
   reset through the reset hook, in the same pass.

A transform, a ``"_step"`` mask or ``checks=True`` changes what runs inside this sequence, never
which code runs: no backend overrides any of it. :class:`StepPipeline` is the part of
:class:`~hub.EnvBase` that holds it (``EnvBase`` adds construction, specs, seeding and the
life cycle).

Example:
    >>> import hub
    >>> env = hub.make_env("hub:Counting", num_envs=2, max_steps=2)
    >>> td = env.reset()
    >>> for _ in range(3):
    ...     data, td = env.step_and_maybe_reset(env.rand_action(td))
    >>> data["next", "done"].squeeze(-1).tolist(), td["observation"].squeeze(-1).tolist()
    ([False, False], [1, 1])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from tensordict import TensorDict, TensorDictBase

from hub.envs._fast_td import (
    fast_batch_size,
    fast_get,
    fast_items,
    fast_set,
    fast_update,
    new_td,
    shallow,
)
from hub.envs.action_checks import bad_action_values, cast_action
from hub.envs.arrays import rows_over
from hub.envs.checks import check_action_bounds, check_reset_output, check_step_output
from hub.envs.contract import EnvHooks
from hub.envs.describe import describe
from hub.envs.done import any_true
from hub.envs.keys import EnvKeys
from hub.envs.reset_masks import (
    drop_reset_entries,
    mask_dims,
    mask_reset_output,
    mask_step_output,
    read_reset_masks,
)
from hub.envs.rollout_actions import block_random_policy
from hub.envs.trajectory import StepStore, check_out, gc_paused, unalias
from hub.errors import ClosedEnvError, HubError, SpecMismatchError

__all__ = ["StepPipeline"]

Masks = dict[tuple[str, ...], torch.Tensor]


class StepPipeline(EnvHooks):
    """The data path of :class:`~hub.EnvBase` (see the module docstring).

    It reads the env's state through a few attributes that ``EnvBase.__init__`` sets:
    ``_closed``, ``_batch_size``, ``checks``, ``auto_reset``, ``auto_reset_replace``,
    ``allow_done_after_reset``, and ``env_keys`` (the env's :class:`~hub.envs.keys.EnvKeys`).
    """

    _closed: bool
    _batch_size: torch.Size
    checks: bool
    auto_reset: bool
    auto_reset_replace: bool
    allow_done_after_reset: bool
    #: whether the env's class writes the array-level hooks (set by EnvBase.__init__)
    _writes_arrays: bool = True
    #: whether it writes its own ``_step_reset_arrays`` (set by EnvBase.__init__)
    _fuses_resets: bool = False
    #: ``None``, or what ended and was not reset yet: ``True`` (an unbatched env) or the bool
    #: mask of the rows
    _ended: Any = None
    #: an auto-resetting env's first observations of the episodes it started by itself
    _auto_reset_cache: TensorDictBase | None = None
    #: refuse to step what ended (``False`` for a transform's view of the env below it, which
    #: the env it belongs to resets)
    _tracks_ends: bool = True

    env_keys: EnvKeys

    # ================================================================== 1. check
    def _refuse_closed(self, what: str) -> None:
        """Raise :class:`~hub.errors.ClosedEnvError` when the env is closed."""
        if self._closed:
            raise ClosedEnvError(
                f"{what}() was called on a closed {type(self).__name__}. Build a new env "
                "(an env cannot be reopened after close())."
            )

    def _open_keys(self, what: str) -> EnvKeys:
        """The env's keys, once it is known to be open."""
        if self._closed:
            self._refuse_closed(what)
        return self.env_keys

    def _check_batch(self, tensordict: TensorDictBase, what: str) -> None:
        if self.batch_locked and tensordict.batch_size != self._batch_size:
            raise SpecMismatchError(
                "<batch_size>",
                f"batch size {list(self._batch_size)} (this env is batch-locked)",
                f"a tensordict of batch size {list(tensordict.batch_size)}",
                where=what,
            )

    def _check_actions(self, tensordict: TensorDictBase, keys: EnvKeys) -> None:
        """Raise :class:`~hub.errors.SpecMismatchError` when an action entry of ``tensordict``
        is missing, does not have its spec's shape, has a discrete value out of its spec or,
        with ``checks``, is out of bounds or not finite. An action of another dtype that encodes
        the same values (an int64 one-hot for a bool ``OneHot``) is cast in ``tensordict``."""
        locked = self.batch_locked
        checks = self.checks
        for key, spec, shape, event_shape, dtype, values_ok in keys.action_checks:
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
                raise SpecMismatchError(key, spec, describe(value), where="step")
            if value.dtype != dtype:
                value = cast_action(key, spec, value)
                tensordict.set(key, value)
            if checks:
                check_action_bounds(key, spec, value)
            elif values_ok is not None and not values_ok(value):
                raise bad_action_values(key, spec, value)

    def _refuse_ended(self, stepped: torch.Tensor | None) -> None:
        """Raise if a row whose episode ended (and that was not reset) is about to step."""
        ended = self._ended
        hit = ended if stepped is None or ended is True else ended & stepped
        if hit is not True and not bool(hit.any()):
            return
        which = (
            "the episode ended and the env was not reset"
            if hit is True
            else f"sub-envs {hit.nonzero().flatten().tolist()[:16]} ended their episode and "
            "were not reset"
        )
        raise HubError(
            f"{type(self).__name__}: {which}: stepping again would make a transition across "
            "two episodes. Reset first: "
            "env.step_and_maybe_reset(td) and env.rollout(...) do it for you; otherwise call "
            "env.reset(td) with td['_reset'] set to the 'done' flags (or env.reset() for every "
            "sub-env)."
        )

    def check_step_input(self, tensordict: TensorDictBase, what: str = "step") -> None:
        """Run the checks ``step`` runs before the backend: the env is open, ``tensordict``
        has its batch size, and every action has its spec's shape, dtype (an equivalent
        encoding is cast in place) and valid discrete values (bounds too with ``checks``).

        For the first half of an asynchronous step (``step_send``), which reaches the backend
        without going through ``step``.

        Example:
            >>> import hub, torch
            >>> env = hub.make_env("hub:Counting")
            >>> env.check_step_input(env.rand_action(env.reset()))
        """
        keys = self._open_keys(what)
        self._check_batch(tensordict, what)
        self._check_actions(tensordict, keys)

    # ================================================================== reset
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
        keys = self._open_keys("reset")
        masks = None
        if tensordict is not None:
            self._check_batch(tensordict, "reset")
            masks = read_reset_masks(tensordict, list(keys.done_prefixes))
            if masks is not None and not any(bool(m.any()) for m in masks.values()):
                drop_reset_entries(tensordict, list(keys.done_prefixes))
                return tensordict.copy()
        out = self._run_reset(keys, masks, tensordict, kwargs)
        if tensordict is not None:
            drop_reset_entries(tensordict, list(keys.done_prefixes))
            fast_update(tensordict, out)
        return out

    def _run_reset(
        self,
        keys: EnvKeys,
        masks: Masks | None,
        inputs: TensorDictBase | None,
        kwargs: dict[str, Any],
        ended_rows: bool = False,
    ) -> TensorDictBase:
        """The reset sequence: backend, then :meth:`_finish_reset`."""
        rows = _root_rows(masks, self._batch_size)
        if self._writes_arrays:
            out = self._reset_arrays(_host(rows, keys), inputs, **kwargs)
        else:
            out = self._reset(inputs, **kwargs)
            if out is None:
                raise HubError(
                    f"{type(self).__name__}._reset returned None; it must return a TensorDict."
                )
            if out is inputs:
                out = out.copy()
            drop_reset_entries(out, list(keys.done_prefixes))
        return self._finish_reset(keys, out, masks, inputs, ended_rows)

    def _finish_reset(
        self,
        keys: EnvKeys,
        out: Any,
        masks: Masks | None,
        inputs: TensorDictBase | None,
        ended_rows: bool = False,
    ) -> TensorDictBase:
        """A reset's output with its done flags, merged with ``inputs`` where the masks are
        ``False``, the auto-reset cache used, checked; the ended rows are forgotten.
        ``ended_rows``: the masks are the rows whose episode ended, so the done flags of the
        other rows are ``False`` already and need no merge."""
        batch = self._batch_size if inputs is None else fast_batch_size(inputs)
        unlocked = batch if batch != self._batch_size else None
        out, _ = keys.outputs.build(out, unlocked, "_reset_arrays")
        if masks is not None:
            cache = self._auto_reset_cache
            if self.auto_reset and cache is not None:
                mask_reset_output(out, cache, _invert(masks), list(keys.done_prefixes))
                self._auto_reset_cache = None
            if not self.masks_partial_resets:
                skip = keys.done_keys if ended_rows else ()
                mask_reset_output(out, inputs, masks, list(keys.done_prefixes), skip)
        elif self.auto_reset:
            self._auto_reset_cache = None
        if self.checks:
            flags = () if self.auto_reset or self.allow_done_after_reset else keys.done_flag_keys
            where = f"{type(self).__name__} reset output"
            check_reset_output(self.output_spec, out, where, flags)
        self._forget_ended(_root_rows(masks, self._batch_size), masks)
        return out

    def _forget_ended(self, rows: torch.Tensor | None, masks: Masks | None) -> None:
        ended = self._ended
        if ended is None:
            return
        if masks is None or rows is None or ended is True:
            self._ended = None
            return
        left = ended & ~rows.to(ended.device)
        self._ended = left if bool(left.any()) else None

    def maybe_reset(self, tensordict: TensorDictBase) -> TensorDictBase:
        """Reset, in place, the sub-envs (or agents) of ``tensordict`` whose ``done`` flags are
        set (the next input of a step); entries the reset does not write (a policy's recurrent
        state, say) are kept. Returns ``tensordict``.

        Example:
            >>> import hub
            >>> env = hub.make_env("hub:Counting", num_envs=2, max_steps=1)
            >>> td = env.step_mdp(env.step(env.rand_action(env.reset())))
            >>> env.maybe_reset(td)["observation"].squeeze(-1).tolist()
            [0, 0]
        """
        keys = self._open_keys("maybe_reset")
        if self._writes_arrays and keys.single_level and not self.auto_reset:
            done = fast_get(tensordict, keys.done_key)
            if done is not None and any_true(done):
                ended = mask_dims(done) if len(self._batch_size) else True
                self._reset_rows(keys, ended, tensordict)
            return tensordict
        any_done = False
        for done_key, reset_key in zip(keys.done_flag_keys, keys.reset_keys):
            done = fast_get(tensordict, done_key)
            if done is not None and any_true(done):
                any_done = True
                fast_set(tensordict, reset_key, done.clone())
        if any_done:
            self.reset(tensordict)
        return tensordict

    def _reset_rows(self, keys: EnvKeys, ended: Any, next_input: TensorDictBase) -> None:
        """Reset, into ``next_input``, the rows that ended (``True``: the unbatched env; else
        their bool mask): an array-level env with one done level, straight from the step's
        flags, without writing and reading back ``"_reset"`` entries."""
        masks = None if ended is True or bool(ended.all()) else {(): ended}
        fast_update(next_input, self._run_reset(keys, masks, next_input, {}, ended_rows=True))

    # ================================================================== step
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
        keys = self._open_keys("step")
        if self.batch_locked and fast_batch_size(tensordict) != self._batch_size:
            self._check_batch(tensordict, "step")
        self._check_actions(tensordict, keys)
        next_td, _, _ = self._run_step(tensordict, keys)
        _set_next(tensordict, next_td)
        return tensordict

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
        if self._closed:
            self._refuse_closed("step")
        keys = self.env_keys
        batch = fast_batch_size(tensordict)
        if batch != self._batch_size and self.batch_locked:
            self._check_batch(tensordict, "step")
        self._check_actions(tensordict, keys)
        # one pass through the backend (step, then reset what ended) where it can: an
        # array-level env with one done level that does not reset itself
        fused = (
            self._writes_arrays
            and keys.single_level
            and not self.auto_reset
            and batch == self._batch_size
        )
        next_td, ended, first = self._run_step(tensordict, keys, fused)
        if fused:  # the output has the env's batch size, which is the input's
            fast_set(tensordict, "next", next_td)
        else:
            _set_next(tensordict, next_td)
        next_input = self._next_input(tensordict, keys)
        if not fused:
            self.maybe_reset(next_input)
        elif ended is not False:
            if first is None:  # the backend reset nothing: reset through the reset hook
                self._reset_rows(keys, ended, next_input)
            else:
                # the backend's reset output holds the step's values in the rows that did not
                # end; after a partial step ("_step") the rows that did not step come from the
                # input, so those are merged in
                masks = None
                if fast_get(tensordict, "_step") is not None and not (
                    ended is True or bool(ended.all())
                ):
                    masks = {(): ended}
                fast_update(next_input, self._finish_reset(keys, first, masks, next_input, True))
        return tensordict, next_input

    def _run_step(
        self, tensordict: TensorDictBase, keys: EnvKeys, fused: bool = False
    ) -> tuple[TensorDictBase, Any, TensorDictBase | None]:
        """The step sequence after the checks: partial step, backend, done flags, masks,
        auto-reset. Returns the next data, what ended (see ``OutputPlan.build``), and with
        ``fused``, the backend's reset of the rows that ended (``None``: it reset none)."""
        # 2. partial step
        step_mask = fast_get(tensordict, "_step")
        rows = None
        if step_mask is not None:
            rows = (
                mask_dims(step_mask.bool()) if step_mask.ndim > tensordict.batch_dims else step_mask
            )
            if bool(rows.all()):
                rows = None
        if self._ended is not None:
            self._refuse_ended(rows)
        # 3. backend and 4. done flags
        first = None
        if rows is None and fused:  # the common case, without the general dispatch below
            plan = keys.outputs
            inputs = _inputs(tensordict, keys.input_keys, plan.on_cpu)
            if self._fuses_resets:
                out, first = self._step_reset_arrays(inputs, None)
            else:
                out = self._step_arrays(inputs, None)
            next_td, ended = plan.build(out)
        elif rows is None:
            next_td, ended, first = self._backend_step(tensordict, None, keys, fused)
        elif not bool(rows.any()):
            next_td, ended = self._zero_step(tensordict, keys), False
            mask_step_output(next_td, tensordict, rows)
        elif self.batch_locked or fast_batch_size(tensordict) == self._batch_size:
            next_td, ended, first = self._backend_step(tensordict, rows, keys, fused)
            # 5. masks: the rows that did not step keep their previous values
            mask_step_output(next_td, tensordict, rows)
            if ended is not False and ended is not True:
                ended = ended & rows
                ended = ended if bool(ended.any()) else False
        else:
            next_td, ended = self._sub_batch_step(tensordict, rows, keys)
        # 6. auto-reset, checks, and the rows that ended
        if self.auto_reset:
            self._auto_reset_store(next_td, keys)
        elif ended is not False and not fused and self._tracks_ends:
            self._ended = ended if self._ended is None or ended is True else self._ended | ended
        if self.checks:
            check_step_output(self.output_spec, next_td, f"{type(self).__name__} step output")
        return next_td, ended, first

    def _backend_step(
        self, tensordict: TensorDictBase, rows: torch.Tensor | None, keys: EnvKeys, fused: bool
    ) -> tuple[TensorDictBase, Any, Any]:
        """Call the env's step hook (``fused``: the step-and-reset hook) and build its output
        with every done flag. Returns ``(next data, what ended, the reset's raw output)``."""
        plan = keys.outputs
        if self._writes_arrays:
            inputs = _inputs(tensordict, keys.input_keys, plan.on_cpu)
            if fused:
                out, first = self._step_reset_arrays(inputs, _host(rows, keys))
                return (*plan.build(out), first)
            batch = fast_batch_size(tensordict)
            unlocked = batch if batch != self._batch_size else None
            return (*plan.build(self._step_arrays(inputs, _host(rows, keys)), unlocked), None)
        next_td = self._step(tensordict)
        if next_td is None:
            raise HubError(
                f"{type(self).__name__}._step returned None; it must return a TensorDict."
            )
        return (*plan.build(next_td), None)

    def _step_reset_arrays(self, inputs: Any, rows: Any = None) -> tuple[Any, Any]:
        """The default of the ``_step_reset_arrays`` hook: ``_step_arrays``, and no reset (the
        caller resets the rows that ended through ``_reset_arrays``)."""
        return self._step_arrays(inputs, rows), None

    def _sub_batch_step(
        self, tensordict: TensorDictBase, rows: torch.Tensor, keys: EnvKeys
    ) -> tuple[TensorDictBase, Any]:
        """A batch-unlocked env given more rows than it has: step the selected rows only."""
        sub = tensordict[rows]
        sub_next, _, _ = self._backend_step(sub, None, keys, False)
        out = TensorDict({}, batch_size=tensordict.batch_size, device=sub_next.device)
        for key in sub_next.keys(include_nested=True, leaves_only=True):
            new = sub_next.get(key)
            old = tensordict.get(key, None)
            full_shape = tensordict.batch_size + new.shape[sub.batch_dims :]
            if isinstance(old, torch.Tensor) and old.shape == full_shape:
                full = old.clone()
            else:
                full = torch.zeros(full_shape, dtype=new.dtype, device=new.device)
            full[rows] = new
            out.set(key, full)
        return out, keys.outputs.build(out)[1]

    def _zero_step(self, tensordict: TensorDictBase, keys: EnvKeys) -> TensorDictBase:
        """A step output of zeros (no row steps): the masks put the previous values back."""
        spec = self.output_spec
        out = spec["full_observation_spec"].zero()
        out.update(spec["full_reward_spec"].zero())
        out.update(spec["full_done_spec"].zero())
        return out

    def _auto_reset_store(self, next_td: TensorDictBase, keys: EnvKeys) -> None:
        """Keep the first observations of the new episodes for the next ``reset``, and replace
        the observations returned with ``done`` by placeholders when ``auto_reset_replace``."""
        done = next_td.get(keys.done_key)
        if not any_true(done):
            return
        self._auto_reset_cache = next_td.select(*keys.observation_keys, strict=False).clone()
        if not self.auto_reset_replace:
            return
        mask = mask_dims(done)
        for key in keys.observation_keys:
            value = next_td.get(key, None)
            if not isinstance(value, torch.Tensor):
                continue
            fill = float("nan") if value.is_floating_point() else -1
            full = mask.reshape(mask.shape + (1,) * (value.ndim - mask.ndim))
            next_td.set(key, value.masked_fill(full, fill))

    # ================================================================== tensordict-level hooks
    # An env written at the array level still has the tensordict-level hooks: a subclass that
    # overrides _step or _reset (as TorchRL envs are extended) calls these through super().
    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        """The tensordict-level step of an env written at the array level."""
        keys = self.env_keys
        step_mask = fast_get(tensordict, "_step")
        rows = None if step_mask is None else mask_dims(step_mask.bool())
        batch = fast_batch_size(tensordict)
        out = self._step_arrays(
            _inputs(tensordict, keys.input_keys, keys.outputs.on_cpu), _host(rows, keys)
        )
        unlocked = batch if batch != self._batch_size else None
        return keys.outputs.build(out, unlocked)[0]

    def _reset(self, tensordict: TensorDictBase | None, **kwargs: Any) -> TensorDictBase:
        """The tensordict-level reset of an env written at the array level."""
        keys = self.env_keys
        masks = None
        if tensordict is not None:
            masks = read_reset_masks(tensordict, list(keys.done_prefixes))
        rows = _root_rows(masks, self._batch_size)
        out = self._reset_arrays(_host(rows, keys), tensordict, **kwargs)
        batch = self._batch_size if tensordict is None else fast_batch_size(tensordict)
        unlocked = batch if batch != self._batch_size else None
        return keys.outputs.build(out, unlocked, "_reset_arrays")[0]

    # ================================================================== array-level entry points
    # A batched env steps its sub-envs, and a worker process its env, through these: the
    # caller has checked the inputs for the whole batch and builds one output for it.
    def step_arrays(self, inputs: dict[Any, Any], rows: Any = None) -> dict[Any, Any]:
        """Step the backend with arrays, as the ``_step_arrays`` hook does, whatever level
        the env's class writes its hooks at (a tensordict-level env gets a tensordict).

        For batched envs and worker processes: the caller checked ``inputs`` (each action and
        state entry, numpy arrays on the CPU) and builds the step's output itself; nothing of
        the pipeline runs here (no checks, no done flags completed, no resets).

        Example:
            >>> import hub, numpy as np
            >>> env = hub.make_env("hub:Counting")
            >>> _ = env.reset()
            >>> env.step_arrays({"action": np.array([1])})["observation"].tolist()
            [1]
        """
        self._refuse_closed("step_arrays")
        if self._writes_arrays:
            return self._step_arrays(inputs, rows)
        td = _tensordict_of(inputs, self._batch_size)
        if rows is not None:
            td.set("_step", torch.as_tensor(rows))
        return _leaves_of(self._step(td))

    def reset_arrays(self, rows: Any = None, **kwargs: Any) -> dict[Any, Any]:
        """Reset the backend with arrays (``rows``: ``None`` for every sub-env, else their
        bool mask), as the ``_reset_arrays`` hook does, for batched envs and workers (see
        :meth:`step_arrays`). The rows outside ``rows`` hold anything."""
        self._refuse_closed("reset_arrays")
        if self._writes_arrays:
            return self._reset_arrays(rows, None, **kwargs)
        td = None
        if rows is not None:
            keys = self.env_keys
            shape = keys.done_shapes[()] if keys.done_prefixes[:1] == ((),) else self._batch_size
            td = TensorDict({}, self._batch_size)
            td.set("_reset", torch.as_tensor(rows).reshape(shape))
        return _leaves_of(self._reset(td, **kwargs))

    def step_reset_arrays(
        self, inputs: dict[Any, Any], rows: Any = None
    ) -> tuple[dict[Any, Any], dict[Any, Any] | None]:
        """Step, then reset the sub-envs whose episode ended, with arrays (the
        ``_step_reset_arrays`` hook), for batched envs and workers (see :meth:`step_arrays`).
        Returns the step's arrays and the reset's (``None`` when no episode ended): the whole
        batch, with the first observations where an episode ended and the step's values in
        the other rows (the next input, as it is).

        Example:
            >>> import hub, numpy as np
            >>> env = hub.make_env("hub:Counting", num_envs=2, max_steps=1)
            >>> _ = env.reset()
            >>> out, first = env.step_reset_arrays({"action": np.array([[1], [1]])})
            >>> out["observation"].ravel().tolist(), first["observation"].ravel().tolist()
            ([1, 1], [0, 0])
        """
        if self._closed:
            self._refuse_closed("step_reset_arrays")
        if self._writes_arrays:
            out, first = self._step_reset_arrays(inputs, rows)
            if first is not None or (rows is None and self._fuses_resets):
                return out, first
        else:
            out = self.step_arrays(inputs, rows)
        ended = self.env_keys.outputs.raw_ended(out, rows)
        if ended is None:
            return out, None
        if ended is True:
            return out, self.reset_arrays()
        return out, rows_over(out, self.reset_arrays(ended), ended)

    def array_stepper(self) -> Callable[[dict[Any, Any]], tuple[Any, Any]]:
        """The function a batched env calls for this env at each of its steps: ``inputs ->
        (out, first)``, as :meth:`step_reset_arrays` with every row. It is the env's own
        ``_step_reset_arrays`` hook where that hook resets what ended, so a batch of many
        envs pays one call per env and step; it does not check that the env is open (the
        batched env that holds it closes it).

        Example:
            >>> import hub, numpy as np
            >>> env = hub.make_env("hub:Counting", max_steps=1)
            >>> _ = env.reset()
            >>> step = env.array_stepper()
            >>> out, first = step({"action": np.array([1])})
            >>> out["observation"].tolist(), first["observation"].tolist()
            ([1], [0])
        """
        self._refuse_closed("array_stepper")
        if self._writes_arrays and self._fuses_resets:
            return self._step_reset_arrays
        return self.step_reset_arrays

    @staticmethod
    def group_stepper(envs: Sequence[Any]) -> Callable[..., Any] | None:
        """One function that steps all of ``envs`` at once, where their class provides one
        (its ``_group_stepper`` hook), else ``None``: ``run(inputs, reset_ended) -> (out,
        firsts)`` or ``None`` (this step declined), ``inputs`` holding the whole group's
        columns, ``out`` one value per env for each key, ``firsts`` ``None`` or one reset
        output per env (``None`` where it did not reset). A batched env uses it in place of
        one :meth:`array_stepper` call per env; envs of different classes, closed envs, or a
        class without the hook give ``None``.

        Example:
            >>> import hub
            >>> envs = [hub.make_env("hub:Counting") for _ in range(2)]
            >>> hub.EnvBase.group_stepper(envs) is None  # CountingEnv has no group step
            True
        """
        if not envs:
            return None
        cls = type(envs[0])
        if any(type(env) is not cls or env._closed for env in envs):
            return None
        return cls._group_stepper(list(envs))

    # ================================================================== the next input
    def step_mdp(self, tensordict: TensorDictBase) -> TensorDictBase:
        """The input of the next step: ``tensordict["next"]`` without rewards, plus the root
        entries that are neither actions nor found under ``"next"`` (e.g. a policy's state)."""
        return self._next_input(tensordict, self.env_keys)

    def _next_input(self, tensordict: TensorDictBase, keys: EnvKeys) -> TensorDictBase:
        next_td = fast_get(tensordict, "next")
        exclude = keys.mdp_exclude
        actions = keys.action_set
        if type(next_td) is TensorDict and type(tensordict) is TensorDict and keys.flat_rewards:
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
        out = next_td.exclude(*keys.reward_keys) if keys.reward_keys else next_td.copy()
        out_keys = out.keys()
        for key in tensordict.keys():
            if key in exclude or key in actions or key in out_keys:
                continue
            out.set(key, tensordict.get(key))
        return out

    # ================================================================== rollout
    def rollout(
        self,
        max_steps: int,
        policy: Callable[[TensorDictBase], TensorDictBase] | None = None,
        callback: Callable[[Any, TensorDictBase], Any] | None = None,
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
            max_steps: the number of steps at most (a positive int).
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
        max_steps = _steps(max_steps)
        if break_when_any_done and break_when_all_done:
            raise ValueError("break_when_any_done and break_when_all_done cannot both be True.")
        if out is not None and not return_contiguous:
            raise ValueError("out= needs return_contiguous=True (a lazy stack keeps the steps).")
        with gc_paused():
            if auto_reset:
                td = self.reset(tensordict)
            elif tensordict is None:
                raise HubError(
                    "rollout(auto_reset=False) needs the first input: pass tensordict=..."
                )
            else:
                td = self.maybe_reset(tensordict)
            if out is not None:
                unalias(td, out)
            keys = self.env_keys
            random_policy = None
            if policy is None:
                random_policy = block_random_policy(
                    keys.single_action, td, len(self._batch_size), max_steps
                )
                policy = random_policy or self.rand_action
            dim = td.batch_dims
            if out is not None:
                check_out(out, dim, max_steps)
            steps = StepStore(dim, return_contiguous, out)
            # a rollout that cannot stop early and has no callback is a collector's loop
            nonstop = not (break_when_any_done or break_when_all_done) and callback is None
            last = max_steps - 1
            any_step = False
            for i in range(max_steps):
                result = policy(td)
                if result is not None:
                    td = result
                if nonstop and i < last:
                    td, next_td = self.step_and_maybe_reset(td)
                    steps.append(td)
                    td = next_td
                    continue
                if break_when_all_done and any_step:
                    done = _root_done(td, keys)
                    if bool(done.any()):
                        td.set("_step", ~done)
                td = self.step(td)
                if break_when_all_done and td.get("_step", None) is not None:
                    td = td.exclude("_step")
                steps.append(td)
                any_step = True
                if callback is not None:
                    callback(self, td)
                if i == last:
                    break
                next_td = self.step_mdp(td)
                if break_when_any_done:
                    if _any_done(next_td, keys):
                        break
                elif break_when_all_done:
                    if bool(_root_done(next_td, keys).all()):
                        break
                else:
                    self.maybe_reset(next_td)
                td = next_td
            if random_policy is not None:
                random_policy.finish()
            data = steps.result()  # the steps are freed before the collector is back on
            del steps
        try:
            data.refine_names(*([None] * dim), "time")
        except Exception:  # noqa: BLE001 - names are a convenience; lazy stacks may refuse them
            pass
        return data


# ---------------------------------------------------------------------- helpers of the sequence
def _steps(max_steps: Any) -> int:
    if isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer)):
        raise TypeError(
            f"rollout(max_steps) takes a positive int, got {max_steps!r} "
            f"({type(max_steps).__name__}); e.g. env.rollout(100)."
        )
    if max_steps < 1:
        raise ValueError(f"max_steps must be at least 1, got {max_steps}.")
    return int(max_steps)


def _inputs(tensordict: TensorDictBase, keys: tuple[Any, ...], on_cpu: bool) -> dict[Any, Any]:
    """The step's inputs for an array-level hook: numpy arrays for CPU envs, tensors else."""
    inputs = {}
    for key in keys:
        value = fast_get(tensordict, key)
        if value is None:
            continue
        if on_cpu and type(value) is torch.Tensor:
            try:
                value = value.numpy()
            except (RuntimeError, TypeError):  # on another device, needs grad, no numpy dtype
                value = value.detach().cpu().numpy()
        inputs[key] = value
    return inputs


def _host(rows: torch.Tensor | None, keys: EnvKeys) -> Any:
    """A row mask as an array-level hook takes it: numpy on the CPU, a tensor else."""
    if rows is None or not keys.outputs.on_cpu:
        return rows
    return rows.numpy() if rows.device.type == "cpu" else rows.cpu().numpy()


def _root_rows(masks: Masks | None, batch_size: torch.Size) -> torch.Tensor | None:
    """The rows a reset touches at all (``None``: every row), as a mask of the batch shape."""
    if masks is None or not len(batch_size):
        return None
    root = masks.get(())
    if root is not None:
        rows = root.reshape(batch_size) if root.shape != batch_size else root
    else:
        rows = None
        for mask in masks.values():
            level = mask.reshape(batch_size + (-1,)).any(-1)
            rows = level if rows is None else rows | level
    if rows is None or bool(rows.all()):
        return None
    return rows


def _set_next(tensordict: TensorDictBase, next_td: TensorDictBase) -> None:
    if fast_batch_size(next_td) == fast_batch_size(tensordict):
        fast_set(tensordict, "next", next_td)
    else:
        tensordict.set("next", next_td)


def _invert(masks: Masks) -> Masks:
    return {k: ~v for k, v in masks.items()}


def _any_done(td: TensorDictBase, keys: EnvKeys) -> bool:
    for key in keys.done_flag_keys:
        done = fast_get(td, key)
        if done is not None and any_true(done):
            return True
    return False


def _root_done(td: TensorDictBase, keys: EnvKeys) -> torch.Tensor:
    done = td.get(keys.done_key)
    if done.ndim > td.batch_dims:
        done = done.reshape(td.batch_size + (-1,)).any(-1)
    return done


def _tensordict_of(inputs: dict[Any, Any], batch_size: torch.Size) -> TensorDictBase:
    """A tensordict of arrays keyed by leaf keys (for an env written on tensordicts)."""
    td = TensorDict({}, batch_size)
    for key, value in inputs.items():
        td.set(key, torch.as_tensor(value))
    return td


def _leaves_of(td: TensorDictBase) -> dict[Any, Any]:
    """The leaves of a tensordict, keyed by leaf keys."""
    return dict(td.items(include_nested=True, leaves_only=True))
