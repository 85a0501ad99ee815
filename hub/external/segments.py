"""A local-inference client's transitions, gathered per episode and sent as columns.

:class:`SegmentBuffer` keeps, for each running episode, the observations it acted on, the
actions and the rewards summed between actions (numpy only: no torch). :meth:`~SegmentBuffer.take`
turns the complete transitions into the fields of one ``log_transitions`` message: one
*segment* per episode (its observations with one more at the end, its actions and rewards),
each column stacked once.

Example:
    >>> import numpy as np
    >>> buffer = SegmentBuffer(["observation"])
    >>> buffer.start("e", True)
    >>> buffer.act("e", {"observation": np.zeros(2, np.float32)}, np.int64(1))
    >>> buffer.reward("e", 1.0)
    >>> buffer.end("e", {"observation": np.ones(2, np.float32)}, truncated=False)
    >>> fields = buffer.take(64)
    >>> fields["episode_ids"], fields["lengths"].tolist(), fields["terminated"].tolist()
    (['e'], [1], [True])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hub.external.protocol import ProtocolError

__all__ = ["SegmentBuffer"]


@dataclass
class _Run:
    """One episode's rows not sent yet: ``observations[i]`` and ``actions[i]`` go together;
    ``rewards`` has one entry per complete transition."""

    training: bool
    observations: list = field(default_factory=list)
    actions: list = field(default_factory=list)
    rewards: list = field(default_factory=list)
    infos: list = field(default_factory=list)  # one per complete transition (None: none)
    reward: float = 0.0
    info: dict | None = None
    end: int = 0  # 0 running, 1 terminated, 2 truncated


class SegmentBuffer:
    """Transitions of a client's episodes, until sent (not thread-safe: the client locks)."""

    def __init__(self, observation_keys: list[str]) -> None:
        self.keys = list(observation_keys)
        self.runs: dict[str, _Run] = {}
        self.complete = 0  # complete transitions held

    def start(self, episode_id: str, training_enabled: bool) -> None:
        if episode_id in self.runs:
            raise ProtocolError("episode", f"episode {episode_id!r} is already running")
        self.runs[episode_id] = _Run(bool(training_enabled))

    def _run(self, episode_id: str) -> _Run:
        run = self.runs.get(episode_id)
        if run is None or run.end:
            raise ProtocolError(
                "episode",
                f"episode {episode_id!r} is not running on this client; call start_episode() "
                "and use the id it returns",
            )
        return run

    def act(self, episode_id: str, observation: dict[str, np.ndarray], action: Any) -> None:
        """The episode acted at ``observation``: the previous action's transition is complete."""
        run = self._run(episode_id)
        self._close_step(run)
        run.observations.append({key: np.array(observation[key]) for key in self.keys})
        run.actions.append(np.array(action))  # copies: the caller may reuse its arrays

    def reward(self, episode_id: str, reward: float, info: dict | None = None) -> None:
        """Add to the reward of the current transition; ``info`` (the last one given) goes with
        it."""
        run = self._run(episode_id)
        run.reward += float(reward)
        if info:
            run.info = dict(info)

    def end(self, episode_id: str, observation: dict[str, np.ndarray], truncated: bool) -> None:
        """The episode ended at ``observation`` (its true last one)."""
        run = self._run(episode_id)
        if not run.actions:  # ended before its first action: no transition
            del self.runs[episode_id]
            return
        self._close_step(run)
        run.observations.append({key: np.array(observation[key]) for key in self.keys})
        run.end = 2 if truncated else 1

    def _close_step(self, run: _Run) -> None:
        if run.actions:
            run.rewards.append(run.reward)
            run.infos.append(run.info)
            self.complete += 1
        run.reward, run.info = 0.0, None  # before the first action: belongs to no transition

    def take(self, limit: int) -> dict[str, Any] | None:
        """The fields of a ``log_transitions`` with up to ``limit`` complete transitions
        (``None`` when there is none); they leave the buffer."""
        ids, lengths, ends, training = [], [], [], []
        observations, actions, rewards, infos = [], [], [], []
        left = limit
        for episode_id, run in list(self.runs.items()):
            if left <= 0:
                break
            k = min(len(run.rewards), left)
            if not k:
                continue
            ids.append(episode_id)
            lengths.append(k)
            training.append(run.training)
            observations.extend(run.observations[: k + 1])
            actions.extend(run.actions[:k])
            infos.extend([len(rewards) + i, info] for i, info in enumerate(run.infos[:k]) if info)
            rewards.extend(run.rewards[:k])
            finished = bool(run.end) and k == len(run.rewards)
            ends.append(run.end if finished else 0)
            if finished:
                del self.runs[episode_id]
            else:
                del run.observations[:k], run.actions[:k], run.rewards[:k], run.infos[:k]
            left -= k
        if not ids:
            return None
        self.complete -= limit - left
        end_codes = np.asarray(ends)
        return {
            "episode_ids": ids,
            "lengths": np.asarray(lengths, dtype=np.int64),
            "terminated": end_codes == 1,
            "truncated": end_codes == 2,
            "training_enabled": np.asarray(training, dtype=bool),
            "observation": {k: np.stack([o[k] for o in observations]) for k in self.keys},
            "action": np.stack(actions),
            "reward": np.asarray(rewards, dtype=np.float64),
            "infos": infos or None,
        }
