"""``StepWriter``: copies each step of a rollout into its time slot of the output, in a helper
thread, while the rollout loop goes on.

A rollout of pixel envs spends most of its own time copying frames into its output: a batch of
8 Pong frames is 225 KB, and each step holds two (the observation and the next one). Synchronous
envs (EnvPool, ``ParallelEnv``) leave the cores idle between a step's results and the next step's
start, while the rollout loop does its Python work; a helper thread copies the step on the other
core in that time. The copies are numpy's, which release the GIL for big arrays.

The helper is one daemon thread per process, started at the first write (and again in a forked
child). Writes are ordered; :meth:`StepWriter.wait` returns once every write before it is done
and re-raises the first error of the writer's copies.

Example:
    >>> import torch
    >>> from tensordict import TensorDict
    >>> step = TensorDict({"a": torch.ones(2, 3)}, [2])
    >>> out = TensorDict({"a": torch.zeros(2, 4, 3)}, [2, 4])
    >>> writer = StepWriter.into(out, step, dim=1)
    >>> writer.write(0, step), writer.write(1, step.apply(lambda x: x * 2))
    (True, True)
    >>> writer.wait()
    >>> out["a"][0, :, 0].tolist()
    [1.0, 2.0, 0.0, 0.0]
"""

from __future__ import annotations

import os
import threading
from queue import SimpleQueue
from typing import Any

import numpy as np
import torch
from tensordict import TensorDictBase, is_tensor_collection

from hub.envs._fast_td import fast_get, fast_items

__all__ = ["StepWriter"]

Key = tuple[str, ...]


class _Copier:
    """The helper thread: runs ``(function, *args)`` jobs in the order they were submitted."""

    def __init__(self) -> None:
        self.queue: SimpleQueue | None = None
        self.lock = threading.Lock()

    def submit(self, job: tuple[Any, ...]) -> None:
        queue = self.queue
        if queue is None:
            queue = self._start()
        queue.put(job)

    def _start(self) -> SimpleQueue:
        with self.lock:
            if self.queue is None:
                queue: SimpleQueue = SimpleQueue()
                thread = threading.Thread(
                    target=_serve, args=(queue,), name="hub-step-writer", daemon=True
                )
                thread.start()
                self.queue = queue
            return self.queue

    def forget(self) -> None:
        """Drop the thread of the parent process (called in a forked child, where it is gone)."""
        self.queue = None
        self.lock = threading.Lock()


def _serve(queue: SimpleQueue) -> None:
    while True:
        function, *args = queue.get()
        function(*args)


_COPIER = _Copier()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_COPIER.forget)


def _leaves(td: TensorDictBase, prefix: Key = ()) -> list[tuple[Key, Any]]:
    out = []
    for key, value in fast_items(td):
        if is_tensor_collection(value):
            out.extend(_leaves(value, (*prefix, key)))
        else:
            out.append(((*prefix, key), value))
    return out


def _get(td: Any, key: Key) -> Any:
    for part in key:
        if td is None:
            return None
        td = fast_get(td, part)
    return td


def _copyable(value: Any) -> bool:
    """Whether ``value`` is a CPU tensor numpy can view (the helper copies through numpy)."""
    if not isinstance(value, torch.Tensor) or value.device.type != "cpu" or value.requires_grad:
        return False
    try:
        value.numpy()
    except (TypeError, RuntimeError):  # a dtype numpy lacks, conj/neg views
        return False
    return True


class StepWriter:
    """Writes steps of one structure into the time slots of a stacked output, in the helper
    thread. Build one with :meth:`into`.

    Args:
        keys: the leaf keys of a step.
        meta: each leaf's shape and dtype in a step.
        slots: each leaf's output as a numpy array with the time dim first.
    """

    def __init__(self, keys: list[Key], meta: list[tuple], slots: list[np.ndarray]) -> None:
        self.keys, self.meta, self.slots = keys, meta, slots
        self.error: BaseException | None = None

    @classmethod
    def into(cls, out: TensorDictBase, step: TensorDictBase, dim: int) -> StepWriter | None:
        """A writer of steps like ``step`` into ``out`` (time dim ``dim``), or ``None`` when
        ``out`` does not hold every leaf of ``step`` with the stacked shape and dtype, or a leaf
        is not a CPU tensor numpy can view (the caller then stacks the steps itself)."""
        keys, meta, slots = [], [], []
        for key, value in _leaves(step):
            target = _get(out, key)
            if not (_copyable(value) and _copyable(target)) or target.dtype != value.dtype:
                return None
            if target.shape[:dim] + target.shape[dim + 1 :] != value.shape:
                return None
            keys.append(key)
            meta.append((value.shape, value.dtype))
            slots.append(np.moveaxis(target.numpy(), dim, 0))
        return cls(keys, meta, slots) if keys else None

    def write(self, index: int, step: TensorDictBase) -> bool:
        """Queue the copy of ``step`` into time slot ``index``; ``False`` (nothing queued) when a
        leaf is missing or differs in shape or dtype from the first step's."""
        sources = []
        for key, (shape, dtype) in zip(self.keys, self.meta):
            value = _get(step, key)
            if (
                not isinstance(value, torch.Tensor)
                or value.shape != shape
                or value.dtype != dtype
                or value.device.type != "cpu"
                or value.requires_grad
            ):
                return False
            sources.append(value)
        _COPIER.submit((self._copy, index, sources))
        return True

    def _copy(self, index: int, sources: list[torch.Tensor]) -> None:
        """In the helper thread: one step into its slot."""
        if self.error is not None:
            return
        try:
            for slot, source in zip(self.slots, sources):
                np.copyto(slot[index], source.numpy())
        except BaseException as error:  # noqa: BLE001 - handed to the rollout by wait()
            self.error = error

    def wait(self) -> None:
        """Return once every queued write is done; re-raise the first error of the copies."""
        done = threading.Lock()
        done.acquire()
        _COPIER.submit((done.release,))
        done.acquire()
        if self.error is not None:
            error, self.error = self.error, None
            raise RuntimeError(
                f"copying a step into the rollout's output failed: {error}"
            ) from error
