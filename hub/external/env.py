"""``ExternalEnv``: inverted control (RLlib's ExternalEnv), seen by the learner as an ``EnvBase``.

The simulator side (any thread): ``start_episode``, ``get_action``, ``log_action``,
``log_returns``, ``end_episode``. The learner side: an env of batch size ``[max_concurrent]``,
one slot per running episode, whose ``step`` hands the policy's actions to the episodes waiting
for one and returns what they logged next. ``("next", "valid")`` marks the slots that completed
a transition in this step; the others hold no data (see docs/external.md). The bulk view
(``log_transitions`` in, ``take_transitions`` out) carries whole batches of transitions of
episodes the step view never sees, as local-inference clients send them.

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

from typing import Any

import numpy as np
import torch
from tensordict import NonTensorStack, TensorDict, TensorDictBase

from hub.envs import EnvBase
from hub.errors import ClosedEnvError, SpecMismatchError
from hub.external.episodes import Board, Episode, Item
from hub.external.spec_input import as_hub_spec, episode_specs
from hub.external.transitions import TransitionQueue, segment_rows
from hub.specs import Categorical, TensorSpec, Unbounded

__all__ = ["ExternalEnv"]

FLAGS = ("valid", "off_policy", "training_enabled")


class ExternalEnv(EnvBase):
    """An env whose simulators drive: they ask for actions, the learner collects what they log.

    Args:
        observation_spec: one episode's observation spec (no batch dims): a leaf spec (the
            observation goes under ``"observation"``) or a flat ``Composite``; a gymnasium space
            is converted with ``hub.convert_spec``.
        action_spec: one episode's action spec (a leaf spec or space).
        reward_spec: one episode's reward spec (default ``Unbounded((1,))``).
        max_concurrent: the number of episodes that may run at once, and the env's batch size
            (the bulk view's episodes are counted apart, up to the same number).
        wait_s: how long ``step`` waits for the episodes it gave actions to (and ``reset`` for a
            first episode) before returning without the slow ones (``None``: no bound).
        action_timeout: how long a simulator waits in ``get_action``/``log_action`` before a
            ``TimeoutError``.
        transition_capacity: how many transitions of the bulk view (:meth:`log_transitions`,
            :meth:`take_transitions`) may wait for the learner before producers wait.
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
        device: Any = None,
    ) -> None:
        obs, act = episode_specs(observation_spec, action_spec)
        reward = Unbounded((1,)) if reward_spec is None else as_hub_spec(reward_spec, "reward")
        n = int(max_concurrent)
        super().__init__(batch_size=(n,), device=device)
        self.episode_observation_spec = obs
        self.episode_action_spec = act
        self.episode_reward_spec = reward
        self.wait_s = wait_s
        self._board = Board(n, action_timeout)
        # an end row (truncate_transition_episodes) repeats a last row's next observation,
        # action and training flag
        end_keys = (*(("next", key) for key in obs.keys()), "action", "training_enabled")
        self._transitions = TransitionQueue(transition_capacity, n, end_keys)
        full = obs.expand(n)
        for flag in FLAGS:
            full[flag] = Categorical(2, shape=(n,), dtype=torch.bool)
        self.observation_spec = full
        self.action_spec = act.expand(n, *act.shape)
        self.reward_spec = reward.expand(n, *reward.shape)
        self._obs_keys = list(obs.keys())
        self._current = obs.zero((n,))
        self._taken = act.zero((n,))
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
            EpisodeError: the id is running or has ended.
        """
        return self._board.start(episode_id, training_enabled)

    def get_action(self, episode_id: str, observation: Any) -> np.ndarray:
        """Record an observation and wait for the learner's action (a numpy array)."""
        obs = self.encode_observation(observation)
        action = self._board.post(episode_id, lambda: Item(obs), wait=True)
        return action.cpu().numpy()

    def log_action(
        self, episode_id: str, observation: Any, action: Any, *, wait: bool = True
    ) -> None:
        """Record an observation and the action the simulator took itself (off-policy).

        Returns once the learner has taken the observation, as ``get_action`` does;
        ``wait=False`` queues it and returns at once (the learner takes queued calls in order,
        one per step)."""
        obs = self.encode_observation(observation)
        logged = self.encode_action(action)
        self._board.post(episode_id, lambda: Item(obs, off_policy_action=logged), wait=wait)

    def queued(self, episode_ids: Any) -> int:
        """How many calls of these episodes are queued behind the learner (``wait=False``)."""
        with self._board.cond:
            return self._board.backlog_size(set(episode_ids))

    def wait_queued(self, episode_ids: Any, limit: int, timeout: float | None = None) -> bool:
        """Wait until at most ``limit`` calls of these episodes are queued; ``False`` on timeout."""
        ids = set(episode_ids)
        board = self._board
        with board.cond:
            return board.wait_for(lambda: board.backlog_size(ids) <= limit, timeout)

    def log_returns(self, episode_id: str, reward: float, info: dict | None = None) -> None:
        """Add ``reward`` to the episode's last action; rewards sum until the next action."""
        self._board.add_reward(episode_id, reward, info)

    def end_episode(self, episode_id: str, observation: Any, truncated: bool = False) -> None:
        """Record the episode's last observation; it ended (``truncated``: it was cut short)."""
        obs = self.encode_observation(observation)
        item = Item(obs, terminated=not truncated, truncated=bool(truncated))
        self._board.post(episode_id, lambda: item, wait=False)

    def truncate_episode(self, episode_id: str) -> None:
        """End a running episode as truncated from the learner's side (its simulator is gone).

        Its last transition repeats the last observation it logged as the next one, with the
        reward logged since; a simulator still waiting in it gets an ``EpisodeError``.
        A finished or unknown id is ignored."""
        self._board.truncate(episode_id)

    def encode_observation(self, observation: Any) -> dict[str, torch.Tensor]:
        """One episode's observation (an array, or a dict of arrays) as checked tensors."""
        if not isinstance(observation, dict):
            if len(self._obs_keys) != 1:
                raise SpecMismatchError(
                    "<observation>", f"a dict with keys {self._obs_keys}", type(observation)
                )
            observation = {self._obs_keys[0]: observation}
        if sorted(observation) != sorted(self._obs_keys):
            raise SpecMismatchError(
                "<observation>", f"keys {self._obs_keys}", f"keys {sorted(observation)}"
            )
        out = {}
        for key in self._obs_keys:
            out[key] = _checked(self.episode_observation_spec[key], observation[key], key)
        return out

    def encode_action(self, action: Any) -> torch.Tensor:
        """One episode's action as a checked tensor."""
        return _checked(self.episode_action_spec, action, self.action_key)

    # ------------------------------------------------------------------ learner side
    def _set_seed(self, seed: int | None) -> None:
        """Nothing to seed: the simulators own their randomness."""

    def _close(self) -> None:
        self._board.close()
        self._transitions.close()

    def _reset(self, tensordict: TensorDictBase | None, **kwargs: Any) -> TensorDictBase:
        board = self._board
        mask = None if tensordict is None else tensordict.get("_reset", None)
        if mask is None:
            allowed = list(range(board.size))
        else:
            allowed = mask.reshape(board.size).nonzero().flatten().tolist()
        with board.cond:
            self._bind(allowed)
            if not any(self._active(ep) for ep in board.slots):
                board.wait_for(lambda: bool(board.pending), self.wait_s)
                self._bind(allowed)
            valid = torch.tensor([ep is not None and ep.stage == "waiting" for ep in board.slots])
            out = {key: self._current[key].clone() for key in self._obs_keys}
        out.update(valid=valid, off_policy=torch.zeros_like(valid))
        out["training_enabled"] = self._training.clone()
        return TensorDict(out, batch_size=self.batch_size, device=self.device)

    def _bind(self, allowed: list[int]) -> None:
        """Bind pending episodes to free slots among ``allowed``; show their first observation."""
        for index in self._board.bind(allowed):
            episode = self._board.slots[index]
            self._write_obs([index], [episode.item.obs])
            self._training[index] = episode.training_enabled

    @staticmethod
    def _active(episode: Episode | None) -> bool:
        return episode is not None and episode.stage in ("waiting", "acting", "responded")

    def _write_obs(self, rows: list[int], observations: list[dict[str, torch.Tensor]]) -> None:
        index = torch.tensor(rows, dtype=torch.long)
        for key in self._obs_keys:
            self._current[key][index] = torch.stack([obs[key] for obs in observations])

    def _deliver(self, actions: torch.Tensor) -> None:
        """Give each waiting episode the policy's action, or its own logged one (lock held)."""
        for index, episode in enumerate(self._board.slots):
            if episode is None or episode.stage != "waiting":
                continue
            if episode.cancelled:  # truncated by the learner's side: report the end now
                self._taken[index], self._off[index] = actions[index], False
                episode.stage, episode.item = "responded", Board.truncated_item(episode)
                continue
            logged = episode.item.off_policy_action
            taken = actions[index] if logged is None else logged
            self._taken[index] = taken
            self._off[index] = logged is not None
            if episode.item.reply:
                episode.action = taken.clone()
            episode.stage = "acting"
            self._board.advance(episode)
        self._board.cond.notify_all()

    def _consume(self) -> list[tuple[int, Episode, Item]]:
        """Take every posted result (lock held); ended episodes free their slot."""
        board = self._board
        taken = []
        for index, episode in enumerate(board.slots):
            if episode is None or episode.stage != "responded":
                continue
            item = episode.item
            taken.append((index, episode, item))
            if item.is_end:
                episode.stage = "ended"
                board.slots[index] = None
                del board.episodes[episode.id]
            else:
                episode.stage = "waiting"
        if taken:
            self._write_obs([t[0] for t in taken], [t[2].obs for t in taken])
        return taken

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        board = self._board
        actions = tensordict.get(self.action_key)
        with board.cond:
            self._deliver(actions)
            board.wait_for(
                lambda: not any(ep and ep.stage == "acting" for ep in board.slots), self.wait_s
            )
            results = self._consume()
            next_td = self._next_output(results)
            for index, _, item in results:
                if item.is_end:
                    self._training[index] = False
        valid = next_td.get("valid")
        tensordict.set(self.action_key, torch.where(_rows(valid, actions), self._taken, actions))
        return next_td

    def _next_output(self, results: list[tuple[int, Episode, Item]]) -> TensorDictBase:
        n = self._board.size
        reward = self.episode_reward_spec.zero((n,))
        flags = {name: torch.zeros(n, 1, dtype=torch.bool) for name in ("terminated", "truncated")}
        valid = torch.zeros(n, dtype=torch.bool)
        for index, _, item in results:
            reward[index] = item.reward
            flags["terminated"][index] = item.terminated
            flags["truncated"][index] = item.truncated
            valid[index] = True
        out: dict[str, Any] = {key: self._current[key].clone() for key in self._obs_keys}
        out.update(flags, reward=reward, valid=valid)
        out["done"] = flags["terminated"] | flags["truncated"]
        out["off_policy"] = self._off & valid
        out["training_enabled"] = self._training.clone()
        return TensorDict(out, batch_size=self.batch_size, device=self.device)

    def maybe_reset(self, next_input: TensorDictBase) -> TensorDictBase:
        """Reset the slots whose episode ended, and bind new episodes to free slots."""
        board = self._board
        with board.cond:
            free = [i for i, ep in enumerate(board.slots) if ep is None]
            idle = not any(self._active(ep) for ep in board.slots)
            if not free or not (board.pending or idle or bool(next_input.get("done").any())):
                return next_input
        mask = torch.zeros(board.size, 1, dtype=torch.bool)
        mask[free] = True
        next_input.set("_reset", mask)
        self.reset(next_input)
        return next_input

    # ------------------------------------------------------------------ the poll API (RLlib's)
    def poll(self, timeout: float | None = None) -> TensorDictBase:
        """Wait up to ``timeout`` seconds for data and return every item posted since the last
        poll, one row each: ``"slot"``, ``"episode_id"``, the observation, ``"reward"``, the
        done flags, ``"first"`` (a new episode's first observation), ``"off_policy"`` with the
        logged ``"action"``, and ``"training_enabled"``. Rows that are not ends wait for
        :meth:`send_actions`.

        Use either ``poll``/``send_actions`` or the env API on one ExternalEnv, not both.
        """
        board = self._board
        with board.cond:
            board.wait_for(
                lambda: (
                    bool(board.pending) or any(ep and ep.stage == "responded" for ep in board.slots)
                ),
                timeout,
            )
            results = self._consume()
            first = set(self._board.bind(list(range(board.size))))
            for index in first:
                results.append((index, board.slots[index], board.slots[index].item))
        return self._poll_output(results, first)

    def _poll_output(self, results: list[tuple[int, Episode, Item]], first: set) -> TensorDict:
        k = len(results)
        obs = {
            key: torch.stack([item.obs[key] for _, _, item in results])
            if k
            else self.episode_observation_spec[key].zero((0,))
            for key in self._obs_keys
        }
        action = self.episode_action_spec.zero((k,))
        off = torch.zeros(k, dtype=torch.bool)
        for row, (_, _, item) in enumerate(results):
            if item.off_policy_action is not None:
                action[row], off[row] = item.off_policy_action, True
        term = torch.tensor([[item.terminated] for _, _, item in results], dtype=torch.bool)
        trunc = torch.tensor([[item.truncated] for _, _, item in results], dtype=torch.bool)
        data = dict(obs)
        data.update(
            slot=torch.tensor([index for index, _, _ in results], dtype=torch.long),
            reward=torch.tensor([[item.reward] for _, _, item in results], dtype=torch.float32),
            terminated=term.reshape(k, 1),
            truncated=trunc.reshape(k, 1),
            done=(term | trunc).reshape(k, 1),
            first=torch.tensor([index in first for index, _, _ in results], dtype=torch.bool),
            off_policy=off,
            action=action,
            training_enabled=torch.tensor([ep.training_enabled for _, ep, _ in results]),
        )
        td = TensorDict(data, batch_size=(k,))
        if k:
            td.set("episode_id", NonTensorStack(*[ep.id for _, ep, _ in results]))
        return td

    def send_actions(self, actions: TensorDictBase) -> None:
        """Give actions to polled episodes: ``actions`` holds ``"slot"`` and ``"action"`` rows
        (a polled tensordict with its ``"action"`` replaced will do). Episodes that logged their
        own action get it back, whatever ``"action"`` says."""
        slots = actions.get("slot").tolist()
        values = actions.get("action")
        board = self._board
        with board.cond:
            for row, index in enumerate(slots):
                episode = board.slots[index]
                if episode is None or episode.stage != "waiting":
                    raise SpecMismatchError(
                        "slot", "a slot returned by poll() that waits for an action", index
                    )
                if episode.cancelled:
                    episode.stage, episode.item = "responded", Board.truncated_item(episode)
                    continue
                logged = episode.item.off_policy_action
                if episode.item.reply:
                    episode.action = values[row].clone() if logged is None else logged
                episode.stage = "acting"
                board.advance(episode)
            board.cond.notify_all()

    def is_idle(self) -> bool:
        """Whether no episode is running or waiting for the learner (nothing left to collect)."""
        board = self._board
        with board.cond:
            return not board.pending and not any(self._active(ep) for ep in board.slots)

    def episode_id(self, slot: int) -> str | None:
        """The id of the episode in ``slot`` (``None`` for a free slot)."""
        with self._board.cond:
            episode = self._board.slots[slot]
            return None if episode is None else episode.id

    # ------------------------------------------------------------------ the bulk view
    def log_transitions(
        self,
        episode_ids: Any,
        lengths: Any,
        observation: Any,
        action: Any,
        reward: Any,
        terminated: Any = None,
        truncated: Any = None,
        training_enabled: Any = True,
        *,
        timeout: float | None = None,
        owner: Any = None,
    ) -> None:
        """Queue a batch of transitions for :meth:`take_transitions` (the bulk view).

        The batch is made of ``S`` segments: runs of consecutive transitions of one episode
        each, ``lengths[s]`` (at least 1) of them, ``N = sum(lengths)`` in all. Per segment:
        ``episode_ids[s]``, ``terminated[s]`` / ``truncated[s]`` (the segment ends its episode;
        default ``False``) and ``training_enabled[s]``. Per row: ``action`` ``[N, ...]`` and
        ``reward`` ``[N]`` (summed from one action to the next). ``observation`` (an array, or a
        dict of arrays for a Composite spec) holds ``N + S`` rows: each segment's observations
        in order, with one more at its end, the observation after its last action (the true
        last one when the segment ends its episode). Values are checked against the specs.

        These episodes belong to the bulk view only: the step view never sees them; at most
        ``max_concurrent`` of them run at once (counted apart from the step view's), one more is
        an ``ExternalEnvFullError``. Waits while
        ``transition_capacity`` rows are queued, for at most ``timeout`` seconds (``None``: no
        bound), then raises ``TimeoutError``. ``owner`` (any value; a PolicyServer passes its
        connection) keeps one producer from writing into another's running episode.
        """
        ids = [str(i) for i in episode_ids]
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
        if not isinstance(observation, dict):
            observation = {self._obs_keys[0]: observation} if len(self._obs_keys) == 1 else {}
        if sorted(observation) != sorted(self._obs_keys):
            raise SpecMismatchError("<observation>", f"keys {self._obs_keys}", sorted(observation))
        rows = segment_rows(lengths)
        chunk: dict[Any, torch.Tensor] = {}
        for key in self._obs_keys:
            column = _column(self.episode_observation_spec[key], observation[key], n + s, key)
            chunk[key] = column[rows.observation]
            chunk["next", key] = column[rows.next_observation]
        chunk["action"] = _column(self.episode_action_spec, action, n, "action")
        reward_spec = self.episode_reward_spec
        summed = torch.as_tensor(np.asarray(reward, dtype=np.float64).reshape(-1))
        if summed.shape != (n,):
            raise SpecMismatchError("reward", f"{n} rewards", list(summed.shape), where="bulk")
        shape = (n,) + tuple(reward_spec.shape)
        chunk["next", "reward"] = (
            (summed.to(reward_spec.dtype).reshape((n,) + (1,) * len(reward_spec.shape)))
            .expand(shape)
            .clone()
        )
        ended = np.zeros((n, 1), dtype=bool)
        ended[rows.last, 0] = term
        chunk["next", "terminated"] = torch.from_numpy(ended)
        ended = np.zeros((n, 1), dtype=bool)
        ended[rows.last, 0] = trunc
        chunk["next", "truncated"] = torch.from_numpy(ended)
        chunk["training_enabled"] = torch.from_numpy(training[rows.segment])
        self._transitions.put_segments(chunk, rows, ids, term | trunc, owner, timeout)

    def take_transitions(
        self, timeout: float | None = 0.0, max_rows: int | None = None
    ) -> TensorDictBase:
        """Every transition queued by :meth:`log_transitions` (at most ``max_rows``), as one
        flat tensordict of batch ``[N]``, after waiting up to ``timeout`` seconds for a first
        one (``None``: no bound); ``N`` is 0 when none came.

        The keys and dtypes are those of the step view's data (``"observation"``,
        ``"action"``, ``("next", "observation")``, ``("next", "reward")``, the done flags,
        ``"valid"``, ``"off_policy"``, ``"training_enabled"``, each under ``"next"`` too), with
        ``"episode"``: an int64 index per episode, unique over the env's life. An episode's
        rows come in order, and its last one has ``("next", "done")`` set.
        """
        chunks = self._transitions.take(timeout, max_rows)
        if chunks:
            data = {key: torch.cat([chunk[key] for chunk in chunks]) for key in chunks[0]}
        else:
            data = self._empty_chunk()
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
        return out if self.device is None else out.to(self.device)

    @property
    def queued_transitions(self) -> int:
        """How many transitions of the bulk view wait for :meth:`take_transitions`."""
        with self._transitions.cond:
            return self._transitions.rows

    def truncate_transition_episodes(self, episode_ids: Any) -> None:
        """End running bulk-view episodes as truncated, from the learner's side (their producer
        is gone: a PolicyServer calls it for the episodes of a client that disconnected).

        Each gets one more row, its end: ``("next", "truncated")`` and ``("next", "done")`` set,
        the observation after its last logged action as both ``"observation"`` and
        ``("next", "observation")``, its last action repeated and a reward of 0 (as
        :meth:`truncate_episode` does in the step view). Ids that are not running are ignored.
        """
        ended = self._transitions.end(str(i) for i in episode_ids)
        if not ended:
            return
        m = len(ended)
        rows = [row for _, row in ended]
        chunk: dict[Any, torch.Tensor] = {}
        for key in self._obs_keys:
            chunk[key] = torch.stack([row["next", key] for row in rows])
            chunk["next", key] = chunk[key].clone()
        chunk["action"] = torch.stack([row["action"] for row in rows])
        chunk["next", "reward"] = self.episode_reward_spec.zero((m,))
        chunk["next", "terminated"] = torch.zeros(m, 1, dtype=torch.bool)
        chunk["next", "truncated"] = torch.ones(m, 1, dtype=torch.bool)
        chunk["training_enabled"] = torch.stack([row["training_enabled"] for row in rows])
        chunk["episode"] = torch.tensor([index for index, _ in ended], dtype=torch.int64)
        try:
            self._transitions.put_now(chunk, m)
        except ClosedEnvError:
            pass  # closed: no learner reads them

    def _empty_chunk(self) -> dict[Any, torch.Tensor]:
        data: dict[Any, torch.Tensor] = {}
        for key in self._obs_keys:
            data[key] = self.episode_observation_spec[key].zero((0,))
            data["next", key] = data[key].clone()
        data["action"] = self.episode_action_spec.zero((0,))
        data["next", "reward"] = self.episode_reward_spec.zero((0,))
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


def _column(spec: TensorSpec, value: Any, rows: int, key: Any) -> torch.Tensor:
    """``rows`` values of ``spec`` stacked, checked at once (dtype, shape, values)."""
    tensor = torch.as_tensor(value)
    shape = (rows,) + tuple(spec.shape)
    if tensor.dtype != spec.dtype or tuple(tensor.shape) != shape:
        raise SpecMismatchError(
            key,
            f"dtype {spec.dtype} and shape {list(shape)}",
            f"dtype {tensor.dtype} and shape {list(tensor.shape)}",
            where="ExternalEnv.log_transitions",
        )
    batch = _expanded(spec, shape)
    if not batch.is_in(tensor):
        raise SpecMismatchError(
            key, repr(spec), batch.explain(tensor), where="ExternalEnv.log_transitions"
        )
    return tensor


_EXPANDED: dict[tuple[int, tuple[int, ...]], tuple[TensorSpec, TensorSpec]] = {}


def _expanded(spec: TensorSpec, shape: tuple[int, ...]) -> TensorSpec:
    """``spec.expand(*shape)``, remembered for the last few specs and row counts (a batch
    size repeats from message to message)."""
    key = (id(spec), shape)
    hit = _EXPANDED.get(key)
    if hit is not None and hit[0] is spec:
        return hit[1]
    if len(_EXPANDED) >= 64:
        _EXPANDED.clear()
    batch = spec.expand(*shape)
    _EXPANDED[key] = (spec, batch)
    return batch


def _checked(spec: TensorSpec, value: Any, key: Any) -> torch.Tensor:
    try:
        tensor = spec.encode(value)
    except (TypeError, ValueError) as err:
        raise SpecMismatchError(key, repr(spec), str(err), where="ExternalEnv") from err
    if tensor.shape != spec.shape or not spec.is_in(tensor):
        raise SpecMismatchError(key, repr(spec), spec.explain(tensor), where="ExternalEnv")
    return tensor


def _rows(mask: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    return mask.reshape(mask.shape + (1,) * (like.ndim - mask.ndim))
