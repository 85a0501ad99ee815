"""``rollout``: run an env for a number of steps and stack the results along a "time" dim.

Example:
    >>> import hub
    >>> env = hub.make_env("hub:Counting", num_envs=3, max_steps=4)
    >>> data = env.rollout(6, break_when_any_done=False)
    >>> data.batch_size
    torch.Size([3, 6])
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import torch
from tensordict import LazyStackedTensorDict, TensorDict, TensorDictBase

from hub.envs._fast_td import fast_get
from hub.envs.done import any_true
from hub.envs.rollout_actions import block_random_policy
from hub.envs.serial_ops import PARALLEL_GRAIN
from hub.envs.stacking import cat_like, stack_like
from hub.errors import HubError

if TYPE_CHECKING:
    from hub.envs.base import EnvBase

__all__ = ["run_rollout"]


def _stack_steps(
    steps: list[TensorDictBase], dim: int, out: TensorDictBase | None = None
) -> TensorDictBase:
    """Stack the steps along ``dim`` (into ``out`` if given): leaf by leaf when they share one
    structure of tensors (several times faster than ``torch.stack`` on tensordicts), else with
    ``torch.stack``."""
    if all(type(step) is TensorDict for step in steps):
        try:
            return stack_like(steps, dim=dim, out=out)
        except (KeyError, RuntimeError, TypeError):
            pass  # differing keys or shapes: torch.stack gives the informative error
    if out is None:
        return torch.stack(steps, dim)
    return torch.stack(steps, dim, out=out)


def _unalias(tensordict: TensorDictBase, out: TensorDictBase) -> None:
    """Copy, in place, the entries of ``tensordict`` that live in ``out``'s memory.

    The natural way to go on from a rollout is ``td = env.step_mdp(data[..., -1])`` and then
    ``rollout(..., tensordict=td, out=data)``: ``td`` then views the last slot of ``data``, which
    the new rollout overwrites while its first step may still need those values.
    """
    storages = {
        leaf.untyped_storage().data_ptr()
        for leaf in out.values(include_nested=True, leaves_only=True)
        if isinstance(leaf, torch.Tensor)
    }
    for key, leaf in tensordict.items(include_nested=True, leaves_only=True):
        if isinstance(leaf, torch.Tensor) and leaf.untyped_storage().data_ptr() in storages:
            tensordict.set(key, leaf.clone())


def _check_out(out: TensorDictBase, dim: int, max_steps: int) -> None:
    if out.batch_dims != dim + 1 or out.batch_size[dim] < max_steps:
        raise ValueError(
            f"out= has batch size {list(out.batch_size)}; a rollout of this env needs the "
            f"env's batch size followed by a time dim of at least {max_steps} steps (pass the "
            "output of an earlier rollout with the same max_steps)."
        )


def _time_slots(out: TensorDictBase, dim: int, start: int, stop: int) -> TensorDictBase:
    """``out`` itself when ``[start, stop)`` covers its time dim, else a view of those slots."""
    if start == 0 and stop == out.batch_size[dim]:
        return out
    return out[(slice(None),) * dim + (slice(start, stop),)]


class _StepStore:
    """The steps of a rollout, and their stacking into its output.

    Steps are stacked :data:`CHUNK` at a time during the rollout when that is cheaper than
    keeping them all: when they go into ``out=`` (each chunk into its slots), or when they are
    small (each chunk stacked, the chunks concatenated at the end). Thousands of live step
    objects push the env's own data out of the CPU caches; stacking them early frees them and
    the allocator hands their memory out again while it is still cached. Big steps (pixels)
    without ``out=`` are stacked once at the end: a chunk would copy their frames twice.
    """

    def __init__(self, dim: int, contiguous: bool, out: TensorDictBase | None) -> None:
        self.dim, self.contiguous, self.out = dim, contiguous, out
        self.pending: list[TensorDictBase] = []
        self.chunks: list[TensorDictBase] = []
        self.stacked = 0  # steps already stacked
        self.chunking: bool | None = None if contiguous else False

    def append(self, step: TensorDictBase) -> None:
        pending = self.pending
        pending.append(step)
        if len(pending) == CHUNK:
            if self.chunking is None:
                self.chunking = self.out is not None or _is_small(step)
            if self.chunking:
                self._stack_pending()

    def _stack_pending(self) -> None:
        n = len(self.pending)
        if self.out is not None:
            slots = _time_slots(self.out, self.dim, self.stacked, self.stacked + n)
            _stack_steps(self.pending, self.dim, slots)
        else:
            self.chunks.append(_stack_steps(self.pending, self.dim))
        self.stacked += n
        self.pending = []  # freed while the collector is still off (see _gc_paused)

    def result(self) -> TensorDictBase:
        """Every step, stacked along the time dim (a lazy stack unless ``contiguous``)."""
        if not self.contiguous:
            return LazyStackedTensorDict.lazy_stack(self.pending, self.dim)
        if self.pending:
            self._stack_pending()
        if self.out is not None:
            return _time_slots(self.out, self.dim, 0, self.stacked)
        if len(self.chunks) == 1:
            return self.chunks[0]
        data = cat_like(self.chunks, self.dim)
        self.chunks = []
        return data


CHUNK = 128
"""Steps a rollout stacks at a time (see :class:`_StepStore`)."""


def _is_small(step: TensorDictBase) -> bool:
    """Whether a step holds fewer elements than torch's parallel grain, all leaves together."""
    total = 0
    for leaf in step.values(include_nested=True, leaves_only=True):
        if isinstance(leaf, torch.Tensor):
            total += leaf.numel()
    return total < PARALLEL_GRAIN


def _any_done(env: EnvBase, td: TensorDictBase) -> bool:
    for key in env._done_flag_keys:
        done = fast_get(td, key)
        if done is not None and any_true(done):
            return True
    return False


def _root_done(env: EnvBase, td: TensorDictBase) -> torch.Tensor:
    done = td.get(env._done_flag_keys[0])
    if done.ndim > td.batch_dims:
        done = done.reshape(td.batch_size + (-1,)).any(-1)
    return done


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the garbage collector: a rollout keeps every step alive until it stacks them, and
    the collector's full passes over those thousands of young objects would otherwise cost more
    than the steps themselves. The rollout frees the steps before it restores the collector:
    the allocations counted meanwhile would otherwise start a collection over all of them at
    once (measured: 4 ms at the end of a 3000-step dm_control rollout)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def run_rollout(
    env: EnvBase,
    max_steps: int,
    *,
    policy: Callable[[TensorDictBase], TensorDictBase] | None,
    callback: Callable[[EnvBase, TensorDictBase], Any] | None,
    auto_reset: bool,
    break_when_any_done: bool,
    break_when_all_done: bool,
    return_contiguous: bool,
    tensordict: TensorDictBase | None,
    out: TensorDictBase | None = None,
) -> TensorDictBase:
    """The body of :meth:`hub.EnvBase.rollout` (see there for the arguments); the loop runs with
    the garbage collector paused (see :func:`_gc_paused`)."""
    if max_steps < 1:
        raise ValueError(f"max_steps must be at least 1, got {max_steps}.")
    if break_when_any_done and break_when_all_done:
        raise ValueError("break_when_any_done and break_when_all_done cannot both be True.")
    if out is not None and not return_contiguous:
        raise ValueError("out= needs return_contiguous=True (a lazy stack keeps the steps).")
    with _gc_paused():
        if auto_reset:
            td = env.reset(tensordict)
        elif tensordict is None:
            raise HubError("rollout(auto_reset=False) needs the first input: pass tensordict=...")
        else:
            # a rollout continued from step_mdp(previous[..., -1]): the sub-envs whose episode
            # ended there start a new one first (as TorchRL's rollout does)
            td = tensordict
            env._reset_finished(td)
        if out is not None:
            _unalias(td, out)
        env._keys()
        random_policy = block_random_policy(env, td, max_steps) if policy is None else None
        if policy is None:
            policy = random_policy or env.rand_action
        dim = td.batch_dims
        if out is not None:
            _check_out(out, dim, max_steps)
        steps = _StepStore(dim, return_contiguous, out)
        # a rollout that cannot stop early and has no callback steps as a collector's loop does,
        # through step_and_maybe_reset (the same calls as below, where an env may fuse them)
        nonstop = not (break_when_any_done or break_when_all_done) and callback is None
        last = max_steps - 1
        any_step = False
        for i in range(max_steps):
            result = policy(td)
            if result is not None:
                td = result
            if nonstop and i < last:
                td, next_td = env.step_and_maybe_reset(td)
                steps.append(td)
                td = next_td
                continue
            if break_when_all_done and any_step:
                done = _root_done(env, td)
                if bool(done.any()):
                    td.set("_step", ~done)
            td = env.step(td)
            if break_when_all_done and td.get("_step", None) is not None:
                td = td.exclude("_step")
            steps.append(td)
            any_step = True
            if callback is not None:
                callback(env, td)
            if i == last:
                break
            next_td = env.step_mdp(td)
            if break_when_any_done:
                if _any_done(env, next_td):
                    break
            elif break_when_all_done:
                if bool(_root_done(env, next_td).all()):
                    break
            else:
                env._reset_finished(next_td)
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
