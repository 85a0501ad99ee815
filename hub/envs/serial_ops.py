"""Big-tensor copies that run in the calling thread (stack and masked merge of env data).

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

import functools
import math
import mmap
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

__all__ = ["PARALLEL_GRAIN", "HUGE_PAGE_MIN_BYTES", "empty_cpu", "stack_tensors", "where_rows"]

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


def empty_cpu(shape: Sequence[int], dtype: torch.dtype) -> torch.Tensor:
    """``torch.empty(shape, dtype=dtype)`` on the CPU; from :data:`HUGE_PAGE_MIN_BYTES` on, on
    transparent huge pages where the system offers them (else ordinary memory).

    The tensor keeps its private anonymous mapping alive and unmaps it when it is freed; it is
    an ordinary tensor otherwise (a view at a 2 MB boundary of that mapping: not resizable).

    Example:
        >>> empty_cpu((2, 3), torch.uint8).shape
        torch.Size([2, 3])
    """
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < HUGE_PAGE_MIN_BYTES or not _huge_pages_offered():
        return torch.empty(tuple(shape), dtype=dtype)
    region = mmap.mmap(-1, nbytes + HUGE_PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    region.madvise(mmap.MADV_HUGEPAGE)
    raw = torch.frombuffer(region, dtype=torch.uint8)  # holds a reference to the mapping
    start = -raw.data_ptr() % HUGE_PAGE
    return raw[start : start + nbytes].view(dtype).view(tuple(shape))


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


def stack_tensors(
    tensors: Sequence[torch.Tensor], dim: int, out: torch.Tensor | None = None
) -> torch.Tensor:
    """``torch.stack(tensors, dim, out=out)``, copied in the calling thread when it is big."""
    first = tensors[0]
    if _serial(first) and (out is None or out.device.type == "cpu"):
        arrays = _arrays(tensors)
        if arrays is not None:
            if out is None:
                shape = first.shape[:dim] + (len(tensors),) + first.shape[dim:]
                out = empty_cpu(shape, first.dtype)
            np.stack(arrays, axis=dim, out=out.numpy())
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
