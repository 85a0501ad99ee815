"""Big-tensor copies that run in the calling thread (stack and masked merge of env data), and
half of a big stack in one helper thread (:mod:`hub.envs.copy_helper`).

torch runs the copy of a tensor above its parallel grain (32768 elements; one batch of Atari
frames is 225,792) on its intra-op thread pool. In an env process those threads compete with the
env's own: EnvPool's worker threads, ParallelEnv's worker processes, other jobs on a shared
machine. Measured here with 2 cores and a second busy process, ``torch.stack`` of a rollout's
100 batches of Pong frames took 135-350 ms on 2 threads (the pool's threads spin waiting for
each other) against 1.7 ms in one thread. numpy copies in the calling thread, so env data is
moved through it; everything else (small tensors, other devices, dtypes numpy lacks) goes to
torch, which runs those serially anyway.

A big stacked output also gets its memory from :func:`empty_cpu`: on transparent huge pages
where Linux offers them. Writing a new 45 MB rollout of Pong frames into ordinary memory takes
one page fault per 4 KB (11,000 of them); on huge pages it is one per 2 MB, which measured 3.5x
faster here (13.5 ms down to 3.8 ms for 22.6 MB).

Example:
    >>> import torch
    >>> frames = [torch.full((2, 3), i, dtype=torch.uint8) for i in range(4)]
    >>> stack_tensors(frames, 1).shape
    torch.Size([2, 4, 3])
    >>> where_rows(torch.tensor([True, False]), torch.ones(2, 3), torch.zeros(2, 3))[:, 0].tolist()
    [1.0, 0.0]
"""

from __future__ import annotations

import ctypes
import functools
import math
import mmap
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from hub.envs.copy_helper import run_split

__all__ = [
    "PARALLEL_GRAIN",
    "HUGE_PAGE_MIN_BYTES",
    "CACHE_MAX_BYTES",
    "SPLIT_MIN_BYTES",
    "empty_cpu",
    "release_cached_memory",
    "stack_tensors",
    "where_rows",
]

PARALLEL_GRAIN = 32768
"""torch's ``at::internal::GRAIN_SIZE``: copies of more elements may use its thread pool."""

HUGE_PAGE = 2 << 20
HUGE_PAGE_MIN_BYTES = 8 << 20
"""Buffers from this size on go to huge pages (the 2 MB of alignment slack are then small)."""


@functools.cache
def _huge_pages_offered() -> bool:
    """Whether ``madvise(MADV_HUGEPAGE)`` can give this process transparent huge pages (read
    once, at the first big allocation: not at import)."""
    if not hasattr(mmap, "MADV_HUGEPAGE") or not hasattr(mmap, "MAP_ANONYMOUS"):
        return False
    try:
        mode = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    except OSError:
        return False
    return "[never]" not in mode


CACHE_MAX_BYTES = 128 << 20
"""At most this many bytes of freed huge-page mappings are kept for reuse (see
:func:`empty_cpu`); :func:`release_cached_memory` returns them to the system."""


class _MappingCache:
    """Freed huge-page mappings by size, newest last, kept for the next buffer of that size."""

    def __init__(self) -> None:
        self.lock = threading.RLock()  # a finalizer may run while this thread holds it
        self.free: list[mmap.mmap] = []

    def take(self, size: int) -> mmap.mmap | None:
        with self.lock:
            for i in range(len(self.free) - 1, -1, -1):
                if len(self.free[i]) == size:
                    return self.free.pop(i)
        return None

    def give_back(self, region: mmap.mmap) -> None:
        with self.lock:
            self.free.append(region)
            total = sum(len(r) for r in self.free)
            while total > CACHE_MAX_BYTES:
                total -= len(self.free.pop(0))  # the oldest goes back to the system

    def clear(self) -> None:
        with self.lock:
            self.free.clear()


_CACHE = _MappingCache()


class _Mapping:
    """The owner of one mapping while arrays view it: numpy takes the memory through
    ``__array_interface__`` and keeps this object as the array's base, torch keeps the array;
    when the last of them is freed, the mapping goes back to the cache instead of to the system.
    """

    def __init__(self, region: mmap.mmap, nbytes: int) -> None:
        self.region = region
        address = ctypes.addressof(ctypes.c_char.from_buffer(region))
        address += -address % HUGE_PAGE  # the first 2 MB boundary
        self.__array_interface__ = {
            "data": (address, False),
            "shape": (nbytes,),
            "typestr": "|u1",
            "version": 3,
        }

    def __del__(self) -> None:
        try:
            _CACHE.give_back(self.region)
        except Exception:  # noqa: BLE001, S110 - interpreter exit: the mapping is simply unmapped
            pass


def release_cached_memory() -> None:
    """Return the freed huge-page buffers that :func:`empty_cpu` keeps for reuse to the system.

    Example:
        >>> release_cached_memory()
    """
    _CACHE.clear()


def empty_cpu(shape: Sequence[int], dtype: torch.dtype) -> torch.Tensor:
    """``torch.empty(shape, dtype=dtype)`` on the CPU; from :data:`HUGE_PAGE_MIN_BYTES` on, on
    transparent huge pages where the system offers them (else ordinary memory).

    The tensor keeps its private anonymous mapping alive; it is an ordinary tensor otherwise
    (at a 2 MB boundary of that mapping: not resizable). When the last tensor viewing the
    mapping is freed, the mapping is kept for the next buffer of the same size, up to
    :data:`CACHE_MAX_BYTES` in all: a rollout's outputs then reuse the pages of the last
    rollout's instead of having the kernel fault in and zero new ones (that cost 110 µs per
    batch step of Pong frames, 7% of the step).

    Example:
        >>> empty_cpu((2, 3), torch.uint8).shape
        torch.Size([2, 3])
    """
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < HUGE_PAGE_MIN_BYTES or not _huge_pages_offered():
        return torch.empty(tuple(shape), dtype=dtype)
    size = nbytes + HUGE_PAGE
    region = _CACHE.take(size)
    if region is None:
        region = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        region.madvise(mmap.MADV_HUGEPAGE)
    raw = torch.from_numpy(np.asarray(_Mapping(region, nbytes)))
    return raw.view(dtype).view(tuple(shape))


def _serial(tensor: torch.Tensor) -> bool:
    return (
        tensor.numel() >= PARALLEL_GRAIN
        and tensor.device.type == "cpu"
        and not tensor.requires_grad
        and torch.get_num_threads() > 1
    )


def _arrays(tensors: Sequence[torch.Tensor]) -> list[np.ndarray] | None:
    """numpy views of ``tensors`` when all share a dtype and shape numpy can hold, else None."""
    first = tensors[0]
    try:
        arrays = [tensor.numpy() for tensor in tensors]
    except (TypeError, RuntimeError):  # a dtype numpy lacks (bfloat16, ...), conj/neg views
        return None
    if any(t.dtype != first.dtype or t.shape != first.shape for t in tensors):
        return None
    return arrays


SPLIT_MIN_BYTES = 4 << 20
"""Stacks of this many bytes or more are split between the calling thread and a helper
(:func:`hub.envs.copy_helper.run_split`), when torch may use more than one thread."""


def stack_tensors(
    tensors: Sequence[torch.Tensor], dim: int, out: torch.Tensor | None = None
) -> torch.Tensor:
    """``torch.stack(tensors, dim, out=out)``, copied with numpy when it is big: in the calling
    thread, and from :data:`SPLIT_MIN_BYTES` on half of it in a helper thread."""
    first = tensors[0]
    if _serial(first) and (out is None or out.device.type == "cpu"):
        arrays = _arrays(tensors)
        if arrays is not None:
            n = len(arrays)
            if out is None:
                out = empty_cpu(first.shape[:dim] + (n,) + first.shape[dim:], first.dtype)
            target = out.numpy()
            if n < 2 or first.numel() * first.element_size() * n < SPLIT_MIN_BYTES:
                np.stack(arrays, axis=dim, out=target)
                return out
            half = n // 2
            lead = (slice(None),) * dim
            run_split(
                lambda: np.stack(arrays[:half], axis=dim, out=target[(*lead, slice(0, half))]),
                lambda: np.stack(arrays[half:], axis=dim, out=target[(*lead, slice(half, n))]),
            )
            return out
    if out is None:
        return torch.stack(list(tensors), dim)
    return torch.stack(list(tensors), dim, out=out)


def where_rows(mask: torch.Tensor, new: torch.Tensor, old: torch.Tensor) -> torch.Tensor:
    """``torch.where(mask, new, old)`` with ``mask`` broadcast over the trailing dims (the rows
    of a batch), computed in the calling thread when the tensors are big."""
    full = mask.reshape(mask.shape + (1,) * (new.ndim - mask.ndim))
    if _serial(new) and mask.device.type == "cpu" and old.device.type == "cpu":
        arrays = _arrays([new, old])
        if arrays is not None:
            return torch.from_numpy(np.where(full.numpy(), arrays[0], arrays[1]))
    return torch.where(full, new, old)
