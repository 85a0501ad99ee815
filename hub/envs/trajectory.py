"""The steps of a rollout, kept and stacked along a trailing "time" dim (:class:`StepStore`).

``EnvBase.rollout`` (:mod:`hub.envs.pipeline`) runs the steps; this module keeps them: stacked a
chunk at a time or at the end, into new memory or into an ``out=`` tensordict of an earlier
rollout, with the garbage collector paused while thousands of step objects are alive.

Example:
    >>> import torch
    >>> from tensordict import TensorDict
    >>> store = StepStore(dim=0, contiguous=True, out=None)
    >>> for t in range(3):
    ...     store.append(TensorDict({"x": torch.full((2,), t)}, []))
    >>> store.result()["x"].shape
    torch.Size([3, 2])
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

import torch
from tensordict import LazyStackedTensorDict, TensorDict, TensorDictBase

from hub.envs.serial_ops import PARALLEL_GRAIN
from hub.envs.stacking import cat_like, stack_like

__all__ = ["CHUNK", "StepStore", "check_out", "gc_paused", "unalias"]


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


def unalias(tensordict: TensorDictBase, out: TensorDictBase) -> None:
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


def check_out(out: TensorDictBase, dim: int, max_steps: int) -> None:
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


class StepStore:
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
        self.pending = []  # freed while the collector is still off (see gc_paused)

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
"""Steps a rollout stacks at a time (see :class:`StepStore`)."""


def _is_small(step: TensorDictBase) -> bool:
    """Whether a step holds fewer elements than torch's parallel grain, all leaves together."""
    total = 0
    for leaf in step.values(include_nested=True, leaves_only=True):
        if isinstance(leaf, torch.Tensor):
            total += leaf.numel()
    return total < PARALLEL_GRAIN


@contextmanager
def gc_paused() -> Iterator[None]:
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
