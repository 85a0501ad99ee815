"""The episodes of an :class:`~hub.external.ExternalEnv` and the slots the learner sees them in.

Simulators post items (an observation with the reward summed since the last one, maybe an
off-policy action, maybe the episode's end) and wait for actions; the learner binds new episodes
to free slots, delivers actions and consumes the results. :class:`Board` makes every one of
these changes itself, under one condition variable; the env, the poll interface and the server
only call its methods.

A slot's episode is in one stage at a time:

``pending``   first observation posted, no slot yet (bound by the learner's next reset)
``waiting``   its observation is the learner's; it waits for the learner's action
``acting``    the action was delivered; the simulator is computing the next observation
``responded`` the simulator posted its next item (or the end); the learner has not taken it

A simulator that waits for an action hands the board a *waiter* (:class:`Waiter`): a thread
waits on the board's condition (:meth:`Board.wait_action`), a server's event loop on a future
the waiter resolves from the learner's thread. Ended episode ids are remembered (to refuse their
reuse) as 16-byte digests, at most :data:`FINISHED_KEPT` of them.

Example:
    >>> board = Board(2)
    >>> board.start("a", True)
    'a'
    >>> board.live_count()
    1
"""

from __future__ import annotations

import hashlib
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from hub.errors import ClosedEnvError, HubError
from hub.external.learner_watch import LearnerWatch

__all__ = [
    "Board",
    "Episode",
    "Item",
    "Waiter",
    "ThreadWaiter",
    "ExternalEnvFullError",
    "EpisodeError",
    "LearnerGoneError",
    "MAX_EPISODE_ID_CHARS",
]

#: how many ended episode ids are remembered to refuse their reuse
FINISHED_KEPT = 65_536
#: the longest episode id, in characters
MAX_EPISODE_ID_CHARS = 256


class ExternalEnvFullError(HubError, RuntimeError):
    """More episodes were started than ``max_concurrent`` allows."""


class EpisodeError(HubError, ValueError):
    """An episode id is unknown, finished, or used out of order."""


class LearnerGoneError(HubError, RuntimeError):
    """The learner stopped serving the env (its thread ended): no action will come."""


class Waiter(Protocol):
    """Receives the action of one ``get_action`` / ``log_action`` (with the board's lock
    held: it must not block)."""

    def resolve(self, action: Any) -> None: ...

    def fail(self, error: BaseException) -> None: ...


class ThreadWaiter:
    """A waiter for a simulator thread: :meth:`Board.wait_action` waits until it is settled."""

    __slots__ = ("action", "error", "settled")

    def __init__(self) -> None:
        self.action: Any = None
        self.error: BaseException | None = None
        self.settled = False

    def resolve(self, action: Any) -> None:
        self.action, self.settled = action, True

    def fail(self, error: BaseException) -> None:
        self.error, self.settled = error, True


@dataclass
class Item:
    """What a simulator posted: an observation and what happened since the last one."""

    obs: Any
    reward: float = 0.0
    info: dict = field(default_factory=dict)
    off_policy_action: Any = None
    terminated: bool = False
    truncated: bool = False
    reply: bool = False  # the simulator waits for this item's action

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
    last_obs: Any = None
    open: bool = True
    cancelled: bool = False
    waiter: Waiter | None = None
    backlog: deque = field(default_factory=deque)


@dataclass
class Delivery:
    """What one delivery did to a slot: the action taken, and whether it was the simulator's."""

    slot: int
    action: Any
    off_policy: bool


class Board:
    """The thread-safe state shared by the simulator side and the learner side."""

    def __init__(self, max_concurrent: int, action_timeout: float = 300.0) -> None:
        if max_concurrent < 1:
            raise ValueError(f"max_concurrent must be at least 1, got {max_concurrent}.")
        self.size = max_concurrent
        self.action_timeout = action_timeout
        self.cond = threading.Condition()
        self.episodes: dict[str, Episode] = {}
        self._finished: dict[bytes, None] = {}  # digests of the last FINISHED_KEPT ended ids
        self.pending: deque[Episode] = deque()
        self.slots: list[Episode | None] = [None] * max_concurrent
        self.closed = False
        self.learner_error: LearnerGoneError | None = None
        self._learner_waits: Callable[[], bool] | None = None
        self.learner = LearnerWatch(self._learner_gone)

    # ------------------------------------------------------------------ simulator side
    def live_count(self) -> int:
        """Episodes started and not ended."""
        return sum(1 for ep in self.episodes.values() if ep.open)

    def start(self, episode_id: str | None, training_enabled: bool) -> str:
        with self.cond:
            self._check_open()
            if episode_id is None:
                episode_id = uuid.uuid4().hex
            check_episode_id(episode_id)
            if _digest(episode_id) in self._finished:
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
            ended = isinstance(episode_id, str) and _digest(episode_id) in self._finished
            state = "has already ended" if ended else "was never started"
            raise EpisodeError(
                f"episode {episode_id!r:.300} {state}; call start_episode() and use the id it "
                "returns."
            )
        return episode

    def add_reward(self, episode_id: str, reward: float, info: dict | None) -> None:
        with self.cond:
            episode = self.get(episode_id)
            episode.reward += float(reward)
            if info:
                episode.info = dict(info)

    def post(self, episode_id: str, item_fn: Callable[[], Item], waiter: Waiter | None) -> None:
        """Post the item ``item_fn()`` builds; ``waiter`` (if any) gets the action delivered.

        The episode's summed reward and info move into the item. An item posted while an
        earlier one is still with the learner is queued behind it (calls that do not wait, as
        a local-inference client's); a call that waits must be the episode's last one. A
        learner known to be gone fails the waiter at once."""
        with self.cond:
            episode = self.get(episode_id)
            if episode.waiter is not None:
                raise EpisodeError(
                    f"episode {episode_id!r} is waiting for an action already; an episode's "
                    "calls must come one after the other, each after the previous one returned."
                )
            item = item_fn()
            item.reward, item.info = episode.reward, episode.info
            item.reply = waiter is not None
            episode.reward, episode.info = 0.0, {}
            episode.last_obs = item.obs
            if item.is_end:
                self._finish(episode.id)
                episode.open = False
            if episode.stage in ("new", "acting") and not episode.backlog:
                self._route(episode, item)
            else:
                episode.backlog.append(item)
            if waiter is not None:
                episode.waiter = waiter
                if self.learner_error is not None:
                    self._settle(episode, error=self.learner_error)
                    self.cond.notify_all()
            self._wake_learner()

    def wait_action(self, waiter: ThreadWaiter, episode_id: str) -> Any:
        """Wait (a simulator thread) until ``waiter`` is settled; its action, or its error."""
        deadline = time.monotonic() + self.action_timeout
        with self.cond:
            while not waiter.settled:
                left = deadline - time.monotonic()
                if left <= 0:
                    self.drop_waiter(episode_id, waiter)
                    raise TimeoutError(
                        f"episode {episode_id!r} waited {self.action_timeout:.0f} s for an action "
                        "and got none: is the learner stepping this env? (raise action_timeout "
                        "if the learner pauses longer)"
                    )
                self.cond.wait(left)
        if waiter.error is not None:
            raise waiter.error
        return waiter.action

    def drop_waiter(self, episode_id: str, waiter: Waiter) -> None:
        """Forget a waiter that stopped waiting (its deadline passed); the action, when it
        comes, is the transition's still, but reaches no simulator."""
        with self.cond:
            episode = self.episodes.get(episode_id)
            if episode is not None and episode.waiter is waiter:
                episode.waiter = None

    def _route(self, episode: Episode, item: Item) -> None:
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

    def backlog_size(self, episode_ids: Iterable[str]) -> int:
        """Items of these episodes queued behind the learner."""
        with self.cond:
            episodes = self.episodes
            return sum(len(ep.backlog) for i in episode_ids if (ep := episodes.get(i)) is not None)

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
            self._settle(
                episode,
                error=EpisodeError(
                    f"episode {episode.id!r} was ended as truncated by the learner's side "
                    "(truncate_episode: its client disconnected or its server stopped)."
                ),
            )
            if episode.stage in ("new", "pending"):  # never shown to the learner
                if episode.stage == "pending":
                    self.pending.remove(episode)
                episode.stage = "ended"
                del self.episodes[episode_id]
            elif episode.stage == "acting":
                episode.stage = "responded"
                episode.item = self._truncated_item(episode)
            # waiting / responded: the learner's next delivery ends it (deliver)
            self.cond.notify_all()

    # ------------------------------------------------------------------ learner side
    def bind(self, allowed: Iterable[int]) -> list[int]:
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

    def waiting(self, index: int, episode_id: str | None = None) -> bool:
        """Whether slot ``index`` holds an episode (``episode_id``, if given) that waits for an
        action (lock held)."""
        episode = self.slots[index]
        return (
            episode is not None
            and episode.stage == "waiting"
            and (episode_id is None or episode.id == episode_id)
        )

    def deliver(self, actions: Iterable[tuple[int, Any]]) -> list[Delivery]:
        """Give each listed slot's waiting episode the action, or its own logged one (lock
        held); slots that do not wait are skipped. What was delivered, slot by slot."""
        out = []
        for index, action in actions:
            episode = self.slots[index]
            if episode is None or episode.stage != "waiting":
                continue
            if episode.cancelled:  # truncated by the learner's side: report the end now
                episode.stage, episode.item = "responded", self._truncated_item(episode)
                out.append(Delivery(index, action, False))
                continue
            logged = episode.item.off_policy_action
            taken = action if logged is None else logged
            out.append(Delivery(index, taken, logged is not None))
            if episode.item.reply:
                self._settle(episode, action=taken)
            episode.stage = "acting"
            if episode.backlog:  # its next queued call follows
                self._route(episode, episode.backlog.popleft())
        self.cond.notify_all()
        return out

    def consume(self) -> list[tuple[int, Episode, Item]]:
        """Take every posted result (lock held); ended episodes free their slot."""
        taken = []
        for index, episode in enumerate(self.slots):
            if episode is None or episode.stage != "responded":
                continue
            item = episode.item
            taken.append((index, episode, item))
            if item.is_end:
                episode.stage = "ended"
                self.slots[index] = None
                del self.episodes[episode.id]
            else:
                episode.stage = "waiting"
        return taken

    def active(self) -> bool:
        """Whether a slot holds an episode that is not over (lock held)."""
        return any(
            ep is not None and ep.stage in ("waiting", "acting", "responded") for ep in self.slots
        )

    def acting(self) -> bool:
        """Whether a simulator is computing its next item after an action (lock held)."""
        return any(ep is not None and ep.stage == "acting" for ep in self.slots)

    def wait_for(self, predicate: Callable[[], bool], wait_s: float | None) -> bool:
        """Wait (the learner, lock held) until ``predicate()`` or ``wait_s`` seconds passed.

        Simulators' posts wake the learner only when ``predicate()`` has become true (one
        wake-up per step, not one per post)."""
        self._learner_waits = predicate
        try:
            return self.cond.wait_for(lambda: self.closed or predicate(), wait_s)
        finally:
            self._learner_waits = None

    def _wake_learner(self) -> None:
        """After a post (lock held): wake the learner if what it waits for has come."""
        waits = self._learner_waits
        if waits is not None and waits():
            self.cond.notify_all()

    def learner_call(self) -> None:
        """Mark the calling thread as the learner's (each learner-side call does)."""
        if self.learner_error is not None:
            with self.cond:
                self.learner_error = None
        self.learner.touch()

    def close(self) -> None:
        with self.cond:
            self.closed = True
            error = ClosedEnvError("this ExternalEnv was closed; the learner no longer serves it.")
            for episode in self.episodes.values():
                self._settle(episode, error=error)
            self.cond.notify_all()
        self.learner.stop()

    # ------------------------------------------------------------------ internals
    def _learner_gone(self, thread: threading.Thread) -> None:
        """The learner's thread ended without closing the env: fail every waiting simulator."""
        with self.cond:
            if self.closed:
                return
            self.learner_error = LearnerGoneError(
                f"the learner's thread {thread.name!r} ended without closing the ExternalEnv "
                "(did it raise?): no action will come. Restart the learner, or close the env."
            )
            for episode in self.episodes.values():
                self._settle(episode, error=self.learner_error)
            self.cond.notify_all()

    def _settle(self, episode: Episode, action: Any = None, error: BaseException | None = None):
        """Hand the episode's waiting simulator its action or an error (lock held)."""
        waiter, episode.waiter = episode.waiter, None
        if waiter is None:
            return
        if error is not None:
            waiter.fail(error)
        else:
            waiter.resolve(action)

    def _truncated_item(self, episode: Episode) -> Item:
        item = Item(episode.last_obs, reward=episode.reward, info=episode.info, truncated=True)
        episode.reward, episode.info = 0.0, {}
        return item

    def _finish(self, episode_id: str) -> None:
        """Remember an ended id (so that it is not reused), forgetting the oldest ones."""
        self._finished[_digest(episode_id)] = None
        if len(self._finished) > FINISHED_KEPT:
            del self._finished[next(iter(self._finished))]

    def _check_open(self) -> None:
        if self.closed:
            raise ClosedEnvError("this ExternalEnv was closed; the learner no longer serves it.")


def check_episode_id(episode_id: Any) -> None:
    """Raise :class:`EpisodeError` unless ``episode_id`` is a str of at most
    :data:`MAX_EPISODE_ID_CHARS` characters."""
    if not isinstance(episode_id, str) or len(episode_id) > MAX_EPISODE_ID_CHARS:
        raise EpisodeError(
            f"an episode id is a str of at most {MAX_EPISODE_ID_CHARS} characters, got "
            f"{type(episode_id).__name__} {episode_id!r:.60}"
        )


def _digest(episode_id: str) -> bytes:
    return hashlib.blake2b(episode_id.encode(), digest_size=16).digest()
