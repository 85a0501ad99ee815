"""The episodes of an :class:`~hub.external.ExternalEnv` and the slots the learner sees them in.

Simulator threads post items (an observation with the reward summed since the last one, maybe an
off-policy action, maybe the episode's end) and wait for actions; the learner binds new episodes
to free slots, delivers actions and consumes the results. One condition variable guards it all.

A slot's episode is in one stage at a time:

``pending``   first observation posted, no slot yet (bound by the learner's next reset)
``waiting``   its observation is the learner's; it waits for the learner's action
``acting``    the action was delivered; the simulator is computing the next observation
``responded`` the simulator posted its next item (or the end); the learner has not taken it

Example:
    >>> board = Board(2)
    >>> board.start("a", True)
    'a'
    >>> board.live_count()
    1
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from hub.errors import ClosedEnvError, HubError

__all__ = ["Board", "Episode", "Item", "ExternalEnvFullError", "EpisodeError"]

#: how many ended episode ids are remembered to refuse their reuse
FINISHED_KEPT = 100_000


class ExternalEnvFullError(HubError, RuntimeError):
    """More episodes were started than ``max_concurrent`` allows."""


class EpisodeError(HubError, ValueError):
    """An episode id is unknown, finished, or used out of order."""


@dataclass
class Item:
    """What a simulator posted: an observation and what happened since the last one."""

    obs: Any
    reward: float = 0.0
    info: dict = field(default_factory=dict)
    off_policy_action: Any = None
    terminated: bool = False
    truncated: bool = False
    reply: bool = False

    @property
    def is_end(self) -> bool:
        return self.terminated or self.truncated


@dataclass
class Episode:
    """One running episode: its stage, its slot, the reward summed since its last item."""

    id: str
    training_enabled: bool
    stage: str = "new"
    slot: int | None = None
    reward: float = 0.0
    info: dict = field(default_factory=dict)
    item: Item | None = None
    action: Any = None
    last_obs: Any = None
    open: bool = True
    cancelled: bool = False
    awaiting: bool = False
    backlog: deque = field(default_factory=deque)


class Board:
    """The thread-safe state shared by the simulator side and the learner side."""

    def __init__(self, max_concurrent: int, action_timeout: float = 300.0) -> None:
        if max_concurrent < 1:
            raise ValueError(f"max_concurrent must be at least 1, got {max_concurrent}.")
        self.size = max_concurrent
        self.action_timeout = action_timeout
        self.cond = threading.Condition()
        self.episodes: dict[str, Episode] = {}
        self.finished: dict[str, None] = {}  # the last FINISHED_KEPT ended ids, oldest first
        self.pending: deque[Episode] = deque()
        self.slots: list[Episode | None] = [None] * max_concurrent
        self.closed = False

    # ------------------------------------------------------------------ simulator side
    def live_count(self) -> int:
        """Episodes started and not ended."""
        return sum(1 for ep in self.episodes.values() if ep.open)

    def start(self, episode_id: str | None, training_enabled: bool) -> str:
        with self.cond:
            self._check_open()
            if episode_id is None:
                episode_id = uuid.uuid4().hex
            if episode_id in self.finished:
                raise EpisodeError(f"episode {episode_id!r} has already ended; use a new id.")
            if episode_id in self.episodes:
                raise EpisodeError(f"episode {episode_id!r} is already running; use a new id.")
            live = self.live_count()
            if live >= self.size:
                raise ExternalEnvFullError(
                    f"cannot start episode {episode_id!r}: {live} episodes are running and "
                    f"max_concurrent is {self.size}. End an episode first (end_episode), or build "
                    "the ExternalEnv with a larger max_concurrent."
                )
            self.episodes[episode_id] = Episode(episode_id, bool(training_enabled))
            return episode_id

    def get(self, episode_id: str) -> Episode:
        """A running episode (call with the lock held)."""
        self._check_open()
        episode = self.episodes.get(episode_id)
        if episode is None or not episode.open:
            state = "has already ended" if episode_id in self.finished else "was never started"
            raise EpisodeError(
                f"episode {episode_id!r} {state}; call start_episode() and use the id it returns."
            )
        return episode

    def add_reward(self, episode_id: str, reward: float, info: dict | None) -> None:
        with self.cond:
            episode = self.get(episode_id)
            episode.reward += float(reward)
            if info:
                episode.info = dict(info)

    def post(self, episode_id: str, item_fn: Any, wait: bool) -> Any:
        """Post the item ``item_fn()`` builds; with ``wait``, return the action delivered.

        The episode's summed reward and info move into the item. An item posted while an
        earlier one is still with the learner is queued behind it (calls that do not wait, as
        a local-inference client's); a call that waits must be the episode's last one."""
        with self.cond:
            episode = self.get(episode_id)
            if episode.awaiting:
                raise EpisodeError(
                    f"episode {episode_id!r} is waiting for an action already; an episode's "
                    "calls must come one after the other, each after the previous one returned."
                )
            item = item_fn()
            item.reward, item.info = episode.reward, episode.info
            item.reply = wait
            episode.reward, episode.info = 0.0, {}
            episode.last_obs = item.obs
            if item.is_end:
                self._finish(episode.id)
                episode.open = False
            if episode.stage in ("new", "acting") and not episode.backlog:
                self.route(episode, item)
            else:
                episode.backlog.append(item)
            self.cond.notify_all()
            if not wait:
                return None
            episode.awaiting = True
            try:
                return self._wait_action(episode)
            finally:
                episode.awaiting = False

    def route(self, episode: Episode, item: Item) -> None:
        """Hand ``item`` to the learner (lock held): a first one waits for a slot."""
        if item.is_end and episode.stage == "new":  # ended before its first action
            episode.stage = "ended"
            del self.episodes[episode.id]
            return
        if episode.stage == "new":
            episode.stage, episode.item = "pending", item
            self.pending.append(episode)
        else:
            episode.stage, episode.item = "responded", item

    def advance(self, episode: Episode) -> None:
        """After a delivery (lock held): the episode's next queued item, if any, follows."""
        if episode.backlog:
            self.route(episode, episode.backlog.popleft())

    def backlog_size(self, episode_ids: set[str]) -> int:
        """Items queued behind the learner for these episodes (lock held)."""
        return sum(len(ep.backlog) for i in episode_ids if (ep := self.episodes.get(i)) is not None)

    def _wait_action(self, episode: Episode) -> Any:
        deadline = time.monotonic() + self.action_timeout
        while episode.action is None:
            self._check_open()
            if episode.cancelled:
                raise EpisodeError(
                    f"episode {episode.id!r} was ended as truncated by the learner's side "
                    "(truncate_episode: its client disconnected or its server stopped)."
                )
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(
                    f"episode {episode.id!r} waited {self.action_timeout:.0f} s for an action and "
                    "got none: is the learner stepping this env? (raise action_timeout if the "
                    "learner pauses longer)"
                )
            self.cond.wait(left)
        action, episode.action = episode.action, None
        return action

    def truncate(self, episode_id: str) -> None:
        """End a running episode as truncated, from the learner's side, with its last
        observation; a simulator waiting in it gets an :class:`EpisodeError`."""
        with self.cond:
            episode = self.episodes.get(episode_id)
            if episode is None or not episode.open:
                return
            episode.open, episode.cancelled = False, True
            episode.backlog.clear()  # queued calls never reach the learner
            self._finish(episode_id)
            if episode.stage in ("new", "pending"):  # never shown to the learner
                if episode.stage == "pending":
                    self.pending.remove(episode)
                episode.stage = "ended"
                del self.episodes[episode_id]
            elif episode.stage == "acting":
                episode.stage = "responded"
                episode.item = self.truncated_item(episode)
            # waiting / responded: the learner's next delivery ends it (env._deliver)
            self.cond.notify_all()

    @staticmethod
    def truncated_item(episode: Episode) -> Item:
        item = Item(episode.last_obs, reward=episode.reward, info=episode.info, truncated=True)
        episode.reward, episode.info = 0.0, {}
        return item

    def _finish(self, episode_id: str) -> None:
        """Remember an ended id (so that it is not reused), forgetting the oldest ones."""
        self.finished[episode_id] = None
        if len(self.finished) > FINISHED_KEPT:
            del self.finished[next(iter(self.finished))]

    def _check_open(self) -> None:
        if self.closed:
            raise ClosedEnvError("this ExternalEnv was closed; the learner no longer serves it.")

    # ------------------------------------------------------------------ learner side
    def bind(self, allowed: list[int]) -> list[int]:
        """Put pending episodes into the free slots among ``allowed`` (lock held); their slots."""
        bound = []
        for index in allowed:
            if not self.pending:
                break
            if self.slots[index] is None:
                episode = self.pending.popleft()
                episode.slot, episode.stage = index, "waiting"
                self.slots[index] = episode
                bound.append(index)
        return bound

    def wait_for(self, predicate: Any, wait_s: float | None) -> bool:
        """Wait (lock held) until ``predicate()`` or ``wait_s`` seconds passed."""
        return self.cond.wait_for(lambda: self.closed or predicate(), wait_s)

    def close(self) -> None:
        with self.cond:
            self.closed = True
            self.cond.notify_all()
