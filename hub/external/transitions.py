"""The bulk view's queue: whole batches of logged transitions, waiting for the learner.

A local-inference client (or any producer with a batch of transitions) puts *segments*: runs of
consecutive transitions of one episode, with one observation more than transitions (the
observation after the last action). :func:`segment_rows` lays each batch out as flat rows
with numpy index arithmetic (no loop over rows); :class:`TransitionQueue` keeps them as one
chunk per batch (tensors, and a list of per-row infos under ``"info"``),
and hands the learner every queued row at once. It holds at most ``capacity`` rows: a producer
waits for room (its client's backpressure), up to a timeout.

Episodes get an integer index on their first row, unique for the queue's life; a segment that
ends its episode (``terminated`` or ``truncated``) frees the id. For each running episode the
queue keeps a copy of its last row, so that an episode whose producer is gone can still be
ended with a row of its own (:meth:`TransitionQueue.end`).

Example:
    >>> import numpy as np
    >>> rows = segment_rows(np.array([2, 1]))
    >>> rows.observation.tolist(), rows.next_observation.tolist(), rows.last.tolist()
    ([0, 1, 3], [1, 2, 4], [1, 2])
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from hub.errors import ClosedEnvError
from hub.external.episodes import EpisodeError, ExternalEnvFullError

__all__ = ["TransitionQueue", "SegmentRows", "segment_rows"]


@dataclass
class SegmentRows:
    """Where each flat row's data lies in a batch of segments (all int64 numpy arrays)."""

    segment: np.ndarray  # [N] the segment of each row
    observation: np.ndarray  # [N] the row's observation, in the [N + S] observation column
    next_observation: np.ndarray  # [N] the observation after its action
    last: np.ndarray  # [S] the row that ends each segment


def segment_rows(lengths: np.ndarray) -> SegmentRows:
    """The row indices of segments of ``lengths`` transitions (each at least 1)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    segment = np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)
    observation = np.arange(segment.size, dtype=np.int64) + segment
    return SegmentRows(segment, observation, observation + 1, np.cumsum(lengths) - 1)


class TransitionQueue:
    """A bounded, thread-safe queue of transition chunks (dicts of ``rows``-row tensors and
    lists), and the episodes running in them (at most ``max_episodes`` at once)."""

    def __init__(self, capacity: int, max_episodes: int, end_keys: tuple = ()) -> None:
        if capacity < 1:
            raise ValueError(f"the transition queue's capacity must be at least 1, got {capacity}")
        self.capacity = int(capacity)
        self.max_episodes = int(max_episodes)
        self.cond = threading.Condition()
        self.chunks: deque[dict[Any, torch.Tensor]] = deque()
        self.rows = 0
        self.closed = False
        self._open: dict[str, tuple[int, Any]] = {}  # episode id -> (index, owner)
        self._last: dict[str, dict[Any, torch.Tensor]] = {}  # episode id -> its last row
        self.end_keys = tuple(end_keys)  # the entries of a last row that an end row needs
        self._next_index = 0

    def put_segments(
        self,
        chunk: dict[Any, torch.Tensor],
        rows: SegmentRows,
        ids: list[str],
        ended: np.ndarray,
        owner: Any,
        timeout: float | None,
    ) -> None:
        """Queue a batch of segments once there is room, with its ``"episode"`` column: the
        index of each segment's episode (new ids get new ones; ended ids are freed). Waiting,
        checking the episodes and queueing are one step: a batch refused for any reason leaves
        no trace. The last row of each segment that does not end its episode is kept for
        :meth:`end`.

        Raises:
            EpisodeError: an id is running for another owner (another connection).
            ExternalEnvFullError: more than ``max_episodes`` episodes would be running.
            TimeoutError: no room within ``timeout`` seconds (the learner does not take rows).
            ClosedEnvError: the queue was closed.
        """
        n = rows.segment.size
        with self.cond:
            self._wait_for_room(n, timeout)
            index = self._episode_indices(ids, ended, owner)
            chunk["episode"] = torch.from_numpy(index[rows.segment])
            for position, episode_id in enumerate(ids):
                if not ended[position]:
                    row = int(rows.last[position])
                    self._last[episode_id] = {k: chunk[k][row].clone() for k in self.end_keys}
            self._append(chunk, n)

    def _episode_indices(self, ids: list[str], ended: np.ndarray, owner: Any) -> np.ndarray:
        """The index of each segment's episode (lock held); checks all before changing any."""
        out = np.empty(len(ids), dtype=np.int64)
        opened = 0
        for episode_id, end in zip(ids, ended.tolist(), strict=True):
            entry = self._open.get(episode_id)
            if entry is None:
                opened += not end
            elif entry[1] is not owner:
                raise EpisodeError(
                    f"episode {episode_id!r} is running for another producer (another "
                    "connection); use a new id."
                )
        if opened and len(self._open) + opened > self.max_episodes:
            raise ExternalEnvFullError(
                f"{len(self._open)} episodes of the bulk view are running and this batch "
                f"starts {opened} more; max_concurrent is {self.max_episodes}. End episodes "
                "first, or build the ExternalEnv with a larger max_concurrent."
            )
        for position, episode_id in enumerate(ids):
            entry = self._open.get(episode_id)
            if entry is None:
                entry = (self._next_index, owner)
                self._next_index += 1
                self._open[episode_id] = entry
            out[position] = entry[0]
            if ended[position]:
                del self._open[episode_id]
                self._last.pop(episode_id, None)
        return out

    def end(self, ids: Any) -> list[tuple[int, dict[Any, torch.Tensor]]]:
        """Free running episode ids whose producer is gone: ``(index, last row)`` of each
        (ids that are not running are ignored)."""
        out = []
        with self.cond:
            for episode_id in ids:
                entry = self._open.pop(episode_id, None)
                last = self._last.pop(episode_id, None)
                if entry is not None and last is not None:
                    out.append((entry[0], last))
        return out

    def put_now(self, chunk: dict[Any, torch.Tensor], rows: int) -> None:
        """Queue a chunk at once, beyond the capacity if need be (the few end rows of
        :meth:`end`). Raises ``ClosedEnvError`` when the queue was closed."""
        with self.cond:
            self._append(chunk, rows)

    def _wait_for_room(self, rows: int, timeout: float | None) -> None:
        """Wait (lock held) until ``rows`` more fit (a chunk always fits in an empty queue)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.closed and self.rows and self.rows + rows > self.capacity:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise TimeoutError(
                    f"the learner has not taken the {self.rows} queued transitions in "
                    f"{timeout:.1f} s (the queue holds {self.capacity}): is it calling "
                    "take_transitions()?"
                )
            self.cond.wait(left)
        self._check_open()

    def _append(self, chunk: dict[Any, torch.Tensor], rows: int) -> None:
        self._check_open()
        self.chunks.append(chunk)
        self.rows += rows
        self.cond.notify_all()

    def take(self, timeout: float | None, max_rows: int | None) -> list[dict[Any, torch.Tensor]]:
        """Every queued chunk (at most ``max_rows`` rows, splitting a chunk if needed), after
        waiting up to ``timeout`` seconds for a first row; ``[]`` when none came."""
        with self.cond:
            self.cond.wait_for(lambda: self.closed or self.rows > 0, timeout)
            if not self.rows:
                self._check_open()
            taken, left = [], self.rows if max_rows is None else min(max_rows, self.rows)
            while left > 0:
                chunk = self.chunks.popleft()
                size = _rows_of(chunk)
                if size > left:
                    self.chunks.appendleft({key: value[left:] for key, value in chunk.items()})
                    chunk, size = {key: value[:left] for key, value in chunk.items()}, left
                taken.append(chunk)
                self.rows -= size
                left -= size
            self.cond.notify_all()
            return taken

    def close(self) -> None:
        with self.cond:
            self.closed = True
            self.cond.notify_all()

    def _check_open(self) -> None:
        if self.closed:
            raise ClosedEnvError("this ExternalEnv was closed; the learner no longer serves it.")


def _rows_of(chunk: dict[Any, Any]) -> int:
    return chunk["action"].shape[0]
