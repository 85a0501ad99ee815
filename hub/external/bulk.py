"""The bulk view of an :class:`~hub.external.ExternalEnv`: whole batches of transitions.

Producers that act themselves (local-inference clients, or any in-process producer) hand over
*segments*, runs of consecutive transitions of one episode, as columns (:meth:`BulkView.log`);
the learner takes every queued transition at once as one flat tensordict (:meth:`BulkView.take`).
These episodes belong to the bulk view only: the step view never sees them.

Example:
    >>> import numpy as np
    >>> from hub.external import ExternalEnv
    >>> from hub.specs import Categorical, Unbounded
    >>> env = ExternalEnv(Unbounded((1,)), Categorical(2), max_concurrent=2)
    >>> env.bulk.log(["e"], [2], np.zeros((3, 1), np.float32), np.array([0, 1]), [1.0, 0.5],
    ...              terminated=[True], infos=[None, {"score": 3}])
    >>> data = env.bulk.take(infos=True)
    >>> data["next", "done"][:, 0].tolist(), data["next", "info"][1]
    ([False, True], {'score': 3})
    >>> env.close()
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from tensordict import NonTensorStack, TensorDict, TensorDictBase

from hub.errors import ClosedEnvError, SpecMismatchError
from hub.external.episodes import check_episode_id
from hub.external.transitions import SegmentRows, TransitionQueue, segment_rows
from hub.external.values import EpisodeValues

__all__ = ["BulkView", "SegmentBatch"]


@dataclass
class SegmentBatch:
    """A checked batch of segments, ready to queue: its rows as tensors, and its episodes."""

    chunk: dict[Any, Any]
    rows: SegmentRows
    ids: list[str]
    ended: np.ndarray


class BulkView:
    """The bulk view's producers' and learner's methods, over a bounded queue of
    ``capacity`` transitions with at most ``max_episodes`` running episodes."""

    def __init__(
        self, values: EpisodeValues, capacity: int, max_episodes: int, device: Any = None
    ) -> None:
        self._values = values
        self._device = device
        # an end row (truncate) repeats a last row's next observation, action and training flag
        end_keys = (*(("next", key) for key in values.keys), "action", "training_enabled")
        self._queue = TransitionQueue(capacity, max_episodes, end_keys)

    def log(
        self,
        episode_ids: Sequence[str],
        lengths: Any,
        observation: Any,
        action: Any,
        reward: Any,
        terminated: Any = None,
        truncated: Any = None,
        training_enabled: Any = True,
        infos: Sequence[dict | None] | None = None,
        *,
        timeout: float | None = None,
        owner: Any = None,
    ) -> None:
        """Queue a batch of transitions for :meth:`take`.

        The batch is made of ``S`` segments: runs of consecutive transitions of one episode
        each, ``lengths[s]`` (at least 1) of them, ``N = sum(lengths)`` in all. Per segment:
        ``episode_ids[s]``, ``terminated[s]`` / ``truncated[s]`` (the segment ends its episode;
        default ``False``) and ``training_enabled[s]``. Per row: ``action`` ``[N, ...]``,
        ``reward`` ``[N]`` (summed from one action to the next) and ``infos`` (``None``, or
        ``N`` dicts or ``None``). ``observation`` (an array, or a dict of arrays for a
        Composite spec) holds ``N + S`` rows: each segment's observations in order, with one
        more at its end, the observation after its last action (the true last one when the
        segment ends its episode). Values are checked against the specs.

        At most ``max_concurrent`` episodes run at once in the bulk view (counted apart from the
        step view's); one more is an ``ExternalEnvFullError``. Waits while the queue is full,
        for at most ``timeout`` seconds (``None``: no bound), then raises ``TimeoutError``.
        ``owner`` (any value; a PolicyServer passes its connection) keeps one producer from
        writing into another's running episode.
        """
        batch = self.prepare(
            episode_ids,
            lengths,
            observation,
            action,
            reward,
            terminated,
            truncated,
            training_enabled,
            infos,
        )
        self.put(batch, owner, timeout)

    def prepare(
        self,
        episode_ids: Sequence[str],
        lengths: Any,
        observation: Any,
        action: Any,
        reward: Any,
        terminated: Any = None,
        truncated: Any = None,
        training_enabled: Any = True,
        infos: Sequence[dict | None] | None = None,
    ) -> SegmentBatch:
        """Check a batch of segments (the arguments of :meth:`log`) and lay out its rows."""
        ids = list(episode_ids)
        for episode_id in ids:
            check_episode_id(episode_id)
        s = len(ids)
        lengths = np.asarray(lengths, dtype=np.int64).reshape(-1)
        if lengths.size != s or (lengths < 1).any():
            raise SpecMismatchError(
                "lengths", f"{s} segment lengths of at least 1", lengths.tolist(), where="bulk"
            )
        n = int(lengths.sum())
        term = _segment_flags(terminated, s, "terminated")
        trunc = _segment_flags(truncated, s, "truncated")
        training = _segment_flags(training_enabled, s, "training_enabled")
        if (term & trunc).any():
            raise SpecMismatchError(
                "terminated", "segments that end terminated or truncated, not both", "both"
            )
        values = self._values
        observation = values.observation_dict(observation, where="ExternalEnv.log_transitions")
        rows = segment_rows(lengths)
        chunk: dict[Any, Any] = {}
        for key in values.keys:
            column = values.column(values.observation_spec[key], observation[key], n + s, key)
            chunk[key] = column[rows.observation]
            chunk["next", key] = column[rows.next_observation]
        chunk["action"] = values.column(values.action_spec, action, n, "action")
        reward_spec = values.reward_spec
        summed = values.rewards(reward, n)
        shape = (n,) + tuple(reward_spec.shape)
        chunk["next", "reward"] = (
            (summed.to(reward_spec.dtype).reshape((n,) + (1,) * len(reward_spec.shape)))
            .expand(shape)
            .clone()
        )
        for name, flags in (("terminated", term), ("truncated", trunc)):
            ended = np.zeros((n, 1), dtype=bool)
            ended[rows.last, 0] = flags
            chunk["next", name] = torch.from_numpy(ended)
        chunk["training_enabled"] = torch.from_numpy(training[rows.segment])
        chunk["info"] = _infos(infos, n)
        return SegmentBatch(chunk, rows, ids, term | trunc)

    def put(self, batch: SegmentBatch, owner: Any = None, timeout: float | None = None) -> None:
        """Queue a prepared batch (see :meth:`log` for ``owner``, ``timeout`` and the errors);
        ``timeout=0`` never waits."""
        self._queue.put_segments(batch.chunk, batch.rows, batch.ids, batch.ended, owner, timeout)

    def take(
        self, timeout: float | None = 0.0, max_rows: int | None = None, infos: bool = False
    ) -> TensorDictBase:
        """Every queued transition (at most ``max_rows``), as one flat tensordict of batch
        ``[N]``, after waiting up to ``timeout`` seconds for a first one (``None``: no bound);
        ``N`` is 0 when none came.

        The keys and dtypes are those of the step view's data (``"observation"``,
        ``"action"``, ``("next", "observation")``, ``("next", "reward")``, the done flags,
        ``"valid"``, ``"off_policy"``, ``"training_enabled"``, each under ``"next"`` too), with
        ``"episode"``: an int64 index per episode, unique over the env's life, and with
        ``infos=True`` ``("next", "info")``: each transition's info dict (``{}`` when none).
        An episode's rows come in order, and its last one has ``("next", "done")`` set.
        """
        chunks = self._queue.take(timeout, max_rows)
        if chunks:
            data = {
                key: torch.cat([chunk[key] for chunk in chunks])
                for key in chunks[0]
                if key != "info"
            }
            info = [entry for chunk in chunks for entry in chunk["info"]] if infos else []
        else:
            data, info = self._empty_chunk(), []
        n = data["action"].shape[0]
        data["next", "done"] = data["next", "terminated"] | data["next", "truncated"]
        true = torch.ones(n, dtype=torch.bool)
        for flag in ("done", "terminated", "truncated"):
            data[flag] = torch.zeros(n, 1, dtype=torch.bool)
        data["valid"], data["next", "valid"] = true, true.clone()
        data["off_policy"], data["next", "off_policy"] = true.clone(), true.clone()
        data["next", "training_enabled"] = data["training_enabled"].clone()
        out = TensorDict(batch_size=(n,))
        for key, value in data.items():
            out.set(key, value)
        if infos and n:
            out.set(("next", "info"), NonTensorStack(*[dict(i) if i else {} for i in info]))
        return out if self._device is None else out.to(self._device)

    @property
    def queued(self) -> int:
        """How many transitions wait for :meth:`take`."""
        with self._queue.cond:
            return self._queue.rows

    def truncate(self, episode_ids: Iterable[str]) -> None:
        """End running episodes as truncated, from the learner's side (their producer is gone:
        a PolicyServer calls it for the episodes of a client that disconnected or went silent).

        Each gets one more row, its end: ``("next", "truncated")`` and ``("next", "done")`` set,
        the observation after its last logged action as both ``"observation"`` and
        ``("next", "observation")``, its last action repeated and a reward of 0 (as
        ``ExternalEnv.truncate_episode`` does in the step view). Ids that are not running are
        ignored.
        """
        ended = self._queue.end(str(i) for i in episode_ids)
        if not ended:
            return
        m = len(ended)
        rows = [row for _, row in ended]
        chunk: dict[Any, Any] = {}
        for key in self._values.keys:
            chunk[key] = torch.stack([row["next", key] for row in rows])
            chunk["next", key] = chunk[key].clone()
        chunk["action"] = torch.stack([row["action"] for row in rows])
        chunk["next", "reward"] = self._values.reward_spec.zero((m,))
        chunk["next", "terminated"] = torch.zeros(m, 1, dtype=torch.bool)
        chunk["next", "truncated"] = torch.ones(m, 1, dtype=torch.bool)
        chunk["training_enabled"] = torch.stack([row["training_enabled"] for row in rows])
        chunk["episode"] = torch.tensor([index for index, _ in ended], dtype=torch.int64)
        chunk["info"] = [None] * m
        try:
            self._queue.put_now(chunk, m)
        except ClosedEnvError:
            pass  # closed: no learner reads them

    def close(self) -> None:
        self._queue.close()

    def _empty_chunk(self) -> dict[Any, torch.Tensor]:
        values = self._values
        data: dict[Any, torch.Tensor] = {}
        for key in values.keys:
            data[key] = values.observation_spec[key].zero((0,))
            data["next", key] = data[key].clone()
        data["action"] = values.action_spec.zero((0,))
        data["next", "reward"] = values.reward_spec.zero((0,))
        for flag in ("terminated", "truncated"):
            data["next", flag] = torch.zeros(0, 1, dtype=torch.bool)
        data["training_enabled"] = torch.zeros(0, dtype=torch.bool)
        data["episode"] = torch.zeros(0, dtype=torch.int64)
        return data


def _segment_flags(value: Any, size: int, key: str) -> np.ndarray:
    """A per-segment boolean column (``None``: all False; a bool: the same for all)."""
    if value is None or isinstance(value, bool):
        return np.full(size, bool(value))
    flags = np.asarray(value)
    if flags.dtype != np.bool_ or flags.shape != (size,):
        raise SpecMismatchError(
            key, f"{size} booleans (one per segment)", f"{flags.dtype} {list(flags.shape)}"
        )
    return flags


def _infos(infos: Sequence[dict | None] | None, n: int) -> list[dict | None]:
    """``n`` infos (dicts or ``None``), checked."""
    if infos is None:
        return [None] * n
    infos = list(infos)
    if len(infos) != n or not all(i is None or isinstance(i, dict) for i in infos):
        raise SpecMismatchError(
            "infos", f"{n} dicts or None (one per transition)", f"{len(infos)} values", where="bulk"
        )
    return infos
