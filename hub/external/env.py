"""``ExternalEnv``: inverted control, seen by the learner as an ``EnvBase``.

The simulator side (any thread): ``start_episode``, ``get_action``, ``log_action``,
``log_returns``, ``end_episode``. The learner side: an env of batch size ``[max_concurrent]``,
one slot per running episode, whose ``step`` hands the policy's actions to the episodes waiting
for one and returns what they logged next. ``("next", "valid")`` marks the slots that completed
a transition in this step; the others hold no data (see docs/external.md).

Two more learner interfaces are objects of their own, over the same episodes: ``env.polling``
(:class:`~hub.external.polling.PollView`: ``poll`` / ``send_actions``, one row per posted item)
and ``env.bulk`` (:class:`~hub.external.bulk.BulkView`: whole batches of transitions of the
episodes that local-inference clients send, which the step view never sees). Every change of
the episodes' state is made by :class:`~hub.external.episodes.Board`.

Example:
    >>> import threading
    >>> from hub.external import ExternalEnv
    >>> from hub.specs import Categorical, Unbounded
    >>> env = ExternalEnv(Unbounded((1,)), Categorical(2), max_concurrent=1)
    >>> def simulator():
    ...     eid = env.start_episode()
    ...     action = env.get_action(eid, [0.0])
    ...     env.log_returns(eid, 1.0)
    ...     env.end_episode(eid, [1.0])
    >>> thread = threading.Thread(target=simulator)
    >>> thread.start()
    >>> td = env.reset()
    >>> data = env.step(env.rand_action(td))
    >>> thread.join()
    >>> data["next", "valid"].tolist(), data["next", "reward"].tolist(), data["next", "done"].tolist()
    ([True], [[1.0]], [[True]])
    >>> env.close()
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import torch
from tensordict import TensorDict, TensorDictBase

from hub.envs import EnvBase
from hub.external.bulk import BulkView
from hub.external.episodes import Board, Episode, Item, ThreadWaiter, Waiter
from hub.external.polling import PollView
from hub.external.spec_input import as_hub_spec, episode_specs
from hub.external.values import EpisodeValues
from hub.specs import Categorical, Unbounded

__all__ = ["ExternalEnv"]

FLAGS = ("valid", "off_policy", "training_enabled")


class ExternalEnv(EnvBase):
    """An env whose simulators drive: they ask for actions, the learner collects what they log.

    Args:
        observation_spec: one episode's observation spec (no batch dims): a leaf spec (the
            observation goes under ``"observation"``) or a flat ``Composite``; a gym or
            gymnasium space is converted with ``hub.convert_spec``.
        action_spec: one episode's action spec (a leaf spec or space).
        reward_spec: one episode's reward spec (default ``Unbounded((1,))``).
        max_concurrent: the number of episodes that may run at once, and the env's batch size
            (the bulk view's episodes are counted apart, up to the same number).
        wait_s: how long ``step`` waits for the episodes it gave actions to (and for a first
            episode when none runs) before returning without the slow ones (``None``: no bound).
        action_timeout: how long a simulator waits in ``get_action``/``log_action`` before a
            ``TimeoutError`` (a simulator fails at once when the learner's thread has ended).
        transition_capacity: how many transitions of the bulk view may wait for the learner
            before producers wait.
        allow_nonfinite: accept NaN and infinite observations, actions and rewards (refused by
            default).
        device: where the learner's tensors live.

    The simulator methods are thread-safe; the calls of one episode must come one after the
    other (each after the previous one returned).
    """

    def __init__(
        self,
        observation_spec: Any,
        action_spec: Any,
        *,
        reward_spec: Any = None,
        max_concurrent: int = 100,
        wait_s: float | None = 1.0,
        action_timeout: float = 300.0,
        transition_capacity: int = 65536,
        allow_nonfinite: bool = False,
        device: Any = None,
    ) -> None:
        obs, act = episode_specs(observation_spec, action_spec)
        reward = Unbounded((1,)) if reward_spec is None else as_hub_spec(reward_spec, "reward")
        n = int(max_concurrent)
        super().__init__(batch_size=(n,), device=device)
        self.episode_observation_spec = obs
        self.episode_action_spec = act
        self.episode_reward_spec = reward
        self.values = EpisodeValues(obs, act, reward, allow_nonfinite)
        self.wait_s = wait_s
        self._board = Board(n, action_timeout)
        self.polling = PollView(self._board, self.values)
        self.bulk = BulkView(self.values, transition_capacity, n, device)
        full = obs.expand(n)
        for flag in FLAGS:
            full[flag] = Categorical(2, shape=(n,), dtype=torch.bool)
        self.observation_spec = full
        self.action_spec = act.expand(n, *act.shape)
        self.reward_spec = reward.expand(n, *reward.shape)
        self._obs_keys = list(obs.keys())
        self._current = obs.zero((n,))  # each slot's latest observation
        self._taken = act.zero((n,))  # each slot's last delivered action
        self._off = torch.zeros(n, dtype=torch.bool)
        self._training = torch.zeros(n, dtype=torch.bool)

    # ------------------------------------------------------------------ simulator side
    @property
    def max_concurrent(self) -> int:
        """How many episodes may run at once (the batch size)."""
        return self._board.size

    def start_episode(self, episode_id: str | None = None, training_enabled: bool = True) -> str:
        """Record the start of an episode and return its id (a new uuid when ``None``).

        ``training_enabled=False`` marks its data with ``"training_enabled"`` ``False``.

        Raises:
            ExternalEnvFullError: ``max_concurrent`` episodes are running already.
            EpisodeError: the id is running or has ended, or is not a str of at most 256
                characters.
        """
        return self._board.start(episode_id, training_enabled)

    def get_action(self, episode_id: str, observation: Any) -> np.ndarray:
        """Record an observation and wait for the learner's action (a numpy array)."""
        waiter = ThreadWaiter()
        self.post_observation(episode_id, observation, waiter=waiter)
        return self._board.wait_action(waiter, episode_id).cpu().numpy()

    def log_action(
        self, episode_id: str, observation: Any, action: Any, *, wait: bool = True
    ) -> None:
        """Record an observation and the action the simulator took itself (off-policy).

        Returns once the learner has taken the observation, as ``get_action`` does;
        ``wait=False`` queues it and returns at once (the learner takes queued calls in order,
        one per step)."""
        waiter = ThreadWaiter() if wait else None
        self.post_observation(episode_id, observation, action, waiter)
        if waiter is not None:
            self._board.wait_action(waiter, episode_id)

    def post_observation(
        self, episode_id: str, observation: Any, action: Any = None, waiter: Waiter | None = None
    ) -> None:
        """What ``get_action`` (``action`` ``None``) and ``log_action`` do, without waiting:
        ``waiter.resolve(action)`` is called from the learner's thread when the learner takes
        the observation (``waiter.fail(error)`` when the episode or the learner is gone). For
        servers that wait on an event loop rather than in a thread."""
        obs = self.values.observation(observation)
        logged = None if action is None else self.values.action(action, self.action_key)
        self._board.post(episode_id, lambda: Item(obs, off_policy_action=logged), waiter)

    def forget_waiter(self, episode_id: str, waiter: Waiter) -> None:
        """Stop delivering to ``waiter`` (it gave up waiting); the action, when the learner
        gives it, still goes into the episode's transition."""
        self._board.drop_waiter(episode_id, waiter)

    @property
    def action_timeout(self) -> float:
        """How long a simulator waits for an action before a ``TimeoutError``."""
        return self._board.action_timeout

    def queued(self, episode_ids: Iterable[str]) -> int:
        """How many calls of these episodes are queued behind the learner (``wait=False``)."""
        return self._board.backlog_size(episode_ids)

    def log_returns(self, episode_id: str, reward: float, info: dict | None = None) -> None:
        """Add ``reward`` to the episode's last action; rewards sum until the next action. The
        last ``info`` given before the next action goes with that transition (``poll()`` and
        the bulk view show it)."""
        self._board.add_reward(episode_id, self.values.reward(reward), info)

    def end_episode(self, episode_id: str, observation: Any, truncated: bool = False) -> None:
        """Record the episode's last observation; it ended (``truncated``: it was cut short)."""
        obs = self.values.observation(observation)
        item = Item(obs, terminated=not truncated, truncated=bool(truncated))
        self._board.post(episode_id, lambda: item, None)

    def truncate_episode(self, episode_id: str) -> None:
        """End a running episode as truncated from the learner's side (its simulator is gone).

        Its last transition repeats the last observation it logged as the next one, with the
        reward logged since; a simulator still waiting in it gets an ``EpisodeError``.
        A finished or unknown id is ignored."""
        self._board.truncate(episode_id)

    def encode_observation(self, observation: Any) -> dict[str, torch.Tensor]:
        """One episode's observation (an array, or a dict of arrays) as checked tensors."""
        return self.values.observation(observation)

    # ------------------------------------------------------------------ learner side
    def _set_seed(self, seed: int | None) -> None:
        """Nothing to seed: the simulators own their randomness."""

    def _close(self) -> None:
        self._board.close()
        self.bulk.close()

    def _reset(self, tensordict: TensorDictBase | None, **kwargs: Any) -> TensorDictBase:
        """Bind new episodes to the free slots among the ``"_reset"`` rows (all without one)
        and show every slot's latest observation; with no episode running, wait up to
        ``wait_s`` for a first one."""
        mask = None if tensordict is None else tensordict.get("_reset", None)
        board = self._board
        allowed = _indices(mask, board.size)
        with board.cond:
            board.learner_call()
            self._bind(allowed)
            if not board.active():
                board.wait_for(lambda: bool(board.pending), self.wait_s)
                self._bind(allowed)
            valid = torch.tensor([board.waiting(i) for i in range(board.size)])
            out: dict[str, Any] = {key: self._current[key].clone() for key in self._obs_keys}
            out["training_enabled"] = self._training.clone()
        out.update(valid=valid, off_policy=torch.zeros_like(valid))
        return TensorDict(out, batch_size=self.batch_size, device=self.device)

    def _bind(self, allowed: Iterable[int]) -> None:
        """Bind pending episodes to free slots among ``allowed``; show their first observation."""
        for index in self._board.bind(allowed):
            episode = self._board.slots[index]
            self._write_obs([index], [episode.item.obs])
            self._training[index] = episode.training_enabled

    def _write_obs(self, rows: list[int], observations: list[dict[str, torch.Tensor]]) -> None:
        index = torch.tensor(rows, dtype=torch.long)
        for key in self._obs_keys:
            self._current[key][index] = torch.stack([obs[key] for obs in observations])

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        """Give each waiting episode (among the ``"_step"`` rows) its action, wait up to
        ``wait_s`` for the simulators to answer, and return what they posted. The action
        actually taken (a simulator's own, for ``"off_policy"`` rows) replaces the policy's in
        ``tensordict``: the step's data holds the action each transition was taken with."""
        board = self._board
        actions = tensordict.get(self.action_key)
        slots = _indices(tensordict.get("_step", None), board.size)
        per_slot = actions.detach().clone().unbind(0)  # each simulator keeps its own action
        with board.cond:  # the state changes only: the tensors are built after
            board.learner_call()
            deliveries = board.deliver((index, per_slot[index]) for index in slots)
            board.wait_for(lambda: not board.acting(), self.wait_s)
            results = board.consume()
            if not results and not board.pending and not board.active():  # idle: no busy loop
                board.wait_for(lambda: bool(board.pending), self.wait_s)
            ended = {index for index, _, _ in results}
            claimable = (
                [i for i, ep in enumerate(board.slots) if ep is None and i not in ended]
                if board.pending
                else []
            )
        for delivery in deliveries:
            self._taken[delivery.slot] = delivery.action
            self._off[delivery.slot] = delivery.off_policy
        out = self._step_output(results, claimable)
        for index, _, item in results:
            if item.is_end:
                self._training[index] = False
        valid = out["valid"]
        shaped = valid.reshape(valid.shape + (1,) * (actions.ndim - 1))
        tensordict.set(self.action_key, torch.where(shaped, self._taken, actions))
        return TensorDict(out, batch_size=self.batch_size, device=self.device)

    def _step_output(
        self, results: list[tuple[int, Episode, Item]], claimable: list[int]
    ) -> dict[str, Any]:
        """The step's outputs: the consumed results in their slots; a free slot that a pending
        episode can take (``claimable``) reports ``truncated`` so that the next partial reset
        binds it (its ``valid`` is ``False``: no data)."""
        n = self._board.size
        if results:
            self._write_obs([r[0] for r in results], [r[2].obs for r in results])
        reward = self.episode_reward_spec.zero((n,))
        terminated = torch.zeros(n, 1, dtype=torch.bool)
        truncated = torch.zeros(n, 1, dtype=torch.bool)
        valid = torch.zeros(n, dtype=torch.bool)
        for index, _, item in results:
            reward[index] = item.reward
            terminated[index] = item.terminated
            truncated[index] = item.truncated
            valid[index] = True
        truncated[claimable] = True
        out: dict[str, Any] = {key: self._current[key].clone() for key in self._obs_keys}
        out.update(reward=reward, terminated=terminated, truncated=truncated, valid=valid)
        out["done"] = terminated | truncated
        out["off_policy"] = self._off & valid
        out["training_enabled"] = self._training.clone()
        return out

    # ------------------------------------------------------------------ other learner views
    def poll(self, timeout: float | None = None) -> TensorDictBase:
        """``env.polling.poll(timeout)`` (:class:`~hub.external.polling.PollView`)."""
        return self.polling.poll(timeout)

    def send_actions(self, actions: TensorDictBase) -> None:
        """``env.polling.send_actions(actions)`` (:class:`~hub.external.polling.PollView`)."""
        self.polling.send_actions(actions)

    def take_transitions(
        self, timeout: float | None = 0.0, max_rows: int | None = None, infos: bool = False
    ) -> TensorDictBase:
        """``env.bulk.take(timeout, max_rows, infos)`` (:class:`~hub.external.bulk.BulkView`)."""
        return self.bulk.take(timeout, max_rows, infos)

    def log_transitions(self, *args: Any, **kwargs: Any) -> None:
        """``env.bulk.log(...)`` (:class:`~hub.external.bulk.BulkView`)."""
        self.bulk.log(*args, **kwargs)

    def truncate_transition_episodes(self, episode_ids: Iterable[str]) -> None:
        """``env.bulk.truncate(episode_ids)`` (:class:`~hub.external.bulk.BulkView`)."""
        self.bulk.truncate(episode_ids)

    @property
    def queued_transitions(self) -> int:
        """How many transitions of the bulk view wait for the learner."""
        return self.bulk.queued

    def is_idle(self) -> bool:
        """Whether no episode is running or waiting for the learner (nothing left to collect)."""
        board = self._board
        with board.cond:
            return not board.pending and not board.active()

    def episode_id(self, slot: int) -> str | None:
        """The id of the episode in ``slot`` (``None`` for a free slot)."""
        with self._board.cond:
            episode = self._board.slots[slot]
            return None if episode is None else episode.id


def _indices(rows: torch.Tensor | None, size: int) -> list[int]:
    """The slots a mask of the batch shape marks (every slot for ``None``)."""
    if rows is None:
        return list(range(size))
    return rows.reshape(size).nonzero().flatten().tolist()
