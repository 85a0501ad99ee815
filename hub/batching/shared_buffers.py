"""Shared-memory buffers for ``ParallelEnv``, laid out from the batched specs.

One anonymous shared file (``memfd`` on Linux, an unlinked temporary file elsewhere) holds every
buffer. The parent creates it before the workers start and hands its descriptor to each of them;
once the specs are known (they come from the workers), the parent sizes it and sends the
:class:`BufferLayout`, and every process maps it and carves typed tensor views out of it. Step
data then never travels through a pipe: the parent writes actions in place, the workers write
observations in place.

The layout has four groups of leaves (sub-env dim first, ``[num_envs, *sub_batch, ...]``); each
worker owns a slice of the sub-env dim (``bounds``: its ``(start, stop)``) and reads and writes
only that slice:

* ``"input"``: actions and state, written by the parent before a step;
* ``"rows"``: one flag per sub-env, the rows a partial step or reset reaches;
* ``"next"``: what a step produces (observations, rewards, done flags, state);
* ``"reset_out"``: what a reset produces (observations, done flags, state);

and one boolean ``"present"`` table (``[num_workers, n_flags]``) telling, per worker, which
optional leaves of ``"next"`` and ``"reset_out"`` hold data this time. Non-tensor entries of
``"next"`` and ``"reset_out"`` (MiniGrid's mission, a ``Text`` observation) cannot live in
shared memory: the layout lists them apart (``side``) and each worker sends their values with
its answer.

Example:
    >>> from hub.specs import Unbounded
    >>> layout = BufferLayout.from_groups((2,), {"input": [("action", Unbounded((2, 1)))]}, [(0, 2)])
    >>> buffers = SharedBuffers.create()
    >>> views = buffers.map(layout)
    >>> views.group("input")["action"].shape
    torch.Size([2, 1])
    >>> buffers.close()
"""

from __future__ import annotations

import mmap
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing import reduction
from typing import Any

import torch
from tensordict import TensorDict, TensorDictBase

from hub.errors import HubError
from hub.specs import NestedKey, NonTensor

__all__ = ["BufferLayout", "FdHandle", "Leaf", "SharedBuffers", "SharedViews", "GROUPS"]

GROUPS = ("input", "rows", "next", "reset_out")
ALIGN = 64


@dataclass(frozen=True)
class Leaf:
    """One tensor of a group: its key, dtype, full (batched) shape and byte offset."""

    key: NestedKey
    dtype: torch.dtype
    shape: tuple[int, ...]
    offset: int
    flag: int  # its column in the "present" table, or -1 when always present

    @property
    def nbytes(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n * torch.empty((), dtype=self.dtype).element_size()


@dataclass(frozen=True)
class BufferLayout:
    """Where each leaf lives in the shared file; picklable, sent once to each worker."""

    num_workers: int
    batch_shape: tuple[int, ...]  # [num_envs, *sub_batch]
    bounds: tuple[tuple[int, int], ...]  # each worker's (start, stop) along the sub-env dim
    groups: dict[str, tuple[Leaf, ...]]
    present_offset: int
    n_flags: int
    size: int
    side: dict[str, tuple[NestedKey, ...]]  # per group, the non-tensor keys (sent with answers)

    @classmethod
    def from_groups(
        cls,
        batch_shape: tuple[int, ...],
        groups: dict[str, Sequence[tuple[NestedKey, Any]]],
        bounds: Sequence[tuple[int, int]],
        optional: frozenset[str] = frozenset(),
    ) -> BufferLayout:
        """Lay out one leaf per ``(key, spec)`` of each group (specs with the batch dims first)
        for workers owning the sub-env slices ``bounds``; leaves of the ``optional`` groups get
        a column in the presence table, and their non-tensor entries go to ``side``.

        Raises:
            HubError: for a spec that cannot live in shared memory (non-tensor inputs or a
                dynamic ``-1`` dimension), naming the key and the way out.
        """
        offset = 0
        flags = 0
        laid: dict[str, tuple[Leaf, ...]] = {}
        side: dict[str, tuple[NestedKey, ...]] = {}
        for name, pairs in groups.items():
            leaves = []
            for key, spec in pairs:
                if isinstance(spec, NonTensor) and name in optional:
                    side[name] = (*side.get(name, ()), key)
                    continue
                _check_shareable(key, spec)
                flag = -1
                if name in optional:
                    flag = flags
                    flags += 1
                leaf = Leaf(key, spec.dtype, tuple(spec.shape), offset, flag)
                leaves.append(leaf)
                offset = _aligned(offset + leaf.nbytes)
            laid[name] = tuple(leaves)
        n = len(bounds)
        size = _aligned(offset + n * max(flags, 1))
        return cls(
            n, tuple(batch_shape), tuple(tuple(b) for b in bounds), laid, offset, flags, size, side
        )


def _aligned(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def _check_shareable(key: Any, spec: Any) -> None:
    if isinstance(spec, NonTensor):
        raise HubError(
            f"ParallelEnv cannot carry the non-tensor input {key!r} (an action or a state) "
            "to its workers: their inputs live in shared memory. Use SerialEnv for this env, "
            "or encode the entry as a tensor in the env's specs."
        )
    if -1 in tuple(spec.shape):
        raise HubError(
            f"ParallelEnv preallocates its buffers from the specs, but {key!r} has a dynamic "
            f"shape {list(spec.shape)}. Use SerialEnv for envs with dynamic specs."
        )


class FdHandle:
    """A file descriptor that survives being passed to a worker started with any start method.

    With ``fork`` the descriptor is simply inherited; with ``spawn`` and ``forkserver`` it is
    duplicated into the child while the process starts (``multiprocessing.reduction.DupFd``).
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _handle_from_dup, (reduction.DupFd(self.fd),)


def _handle_from_dup(dup: Any) -> FdHandle:
    return FdHandle(dup.detach())


class SharedBuffers:
    """The shared file behind the buffers: created empty, sized and mapped once the layout is
    known (by the parent), or only mapped (by a worker)."""

    def __init__(self, fd: int, owner: bool) -> None:
        self.fd = fd
        self.owner = owner
        self._mmap: mmap.mmap | None = None

    @classmethod
    def create(cls) -> SharedBuffers:
        """A new, empty, anonymous shared file (nothing to clean up on disk)."""
        if hasattr(os, "memfd_create"):
            fd = os.memfd_create("hub-parallel-env", os.MFD_CLOEXEC)
        else:  # pragma: no cover - macOS and other systems without memfd
            handle = tempfile.TemporaryFile(prefix="hub-parallel-env-")
            fd = os.dup(handle.fileno())
            handle.close()
        return cls(fd, owner=True)

    @classmethod
    def attach(cls, handle: FdHandle) -> SharedBuffers:
        """The worker's side: the file the parent created."""
        return cls(handle.fd, owner=False)

    def handle(self) -> FdHandle:
        return FdHandle(self.fd)

    def map(self, layout: BufferLayout) -> SharedViews:
        """Size the file (parent) and map it; return the tensor views of ``layout``."""
        if self.owner and os.fstat(self.fd).st_size < layout.size:
            os.ftruncate(self.fd, layout.size)
        self._mmap = mmap.mmap(self.fd, layout.size)
        flat = torch.frombuffer(self._mmap, dtype=torch.uint8)
        return SharedViews(layout, flat, self._mmap)

    def close(self) -> None:
        """Close the descriptor and drop this object's mapping: the mapping (which holds a
        descriptor of its own) goes as soon as no view of it is left, and views still held stay
        valid until then."""
        self._mmap = None
        if self.fd >= 0:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = -1


class SharedViews:
    """Typed tensor views of the shared file, per group, batched and per worker.

    Attributes:
        present: the ``[num_workers, n_flags]`` boolean presence table.
    """

    def __init__(self, layout: BufferLayout, flat: torch.Tensor, keep: Any) -> None:
        self.layout = layout
        self._keep = keep  # the mapping must outlive the views
        self._tensors: dict[str, list[tuple[Leaf, torch.Tensor]]] = {}
        for name, leaves in layout.groups.items():
            self._tensors[name] = [(leaf, _view(flat, leaf)) for leaf in leaves]
        n = layout.num_workers
        width = max(layout.n_flags, 1)
        raw = flat[layout.present_offset : layout.present_offset + n * width]
        self.present = raw.view(torch.bool).view(n, width)
        self._width = width
        self._present_bytes = memoryview(keep)[
            layout.present_offset : layout.present_offset + n * width
        ]

    def present_row(self, index: int) -> bytes:
        """Worker ``index``'s row of the presence table (one byte per flag), read without torch."""
        start = index * self._width
        return self._present_bytes[start : start + self._width].tobytes()

    def leaves(self, group: str) -> list[tuple[Leaf, torch.Tensor]]:
        """``(leaf, batched view)`` pairs of a group, in layout order."""
        return self._tensors.get(group, [])

    def numpy_leaves(self, group: str) -> list[tuple[Leaf, Any]]:
        """``(leaf, batched numpy view)`` pairs of a group, in layout order."""
        return [(leaf, view.numpy()) for leaf, view in self.leaves(group)]

    def slice_leaves(self, group: str, index: int) -> list[tuple[Leaf, Any]]:
        """``(leaf, numpy view of worker index's slice)`` pairs of a group."""
        start, stop = self.layout.bounds[index]
        return [(leaf, view.numpy()[start:stop]) for leaf, view in self.leaves(group)]

    def group(self, group: str) -> TensorDictBase:
        """The batched views of a group as one TensorDict (writes go to shared memory)."""
        batch = self.layout.batch_shape
        return TensorDict({leaf.key: view for leaf, view in self.leaves(group)}, batch_size=batch)


def _view(flat: torch.Tensor, leaf: Leaf) -> torch.Tensor:
    raw = flat[leaf.offset : leaf.offset + leaf.nbytes]
    return raw.view(leaf.dtype).view(leaf.shape)
