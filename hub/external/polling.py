"""The poll interface of an :class:`~hub.external.ExternalEnv`: one row per posted item.

``poll(timeout)`` waits for data and returns every item the simulators posted since the last
poll, one row each: ``"slot"``, ``"episode_id"``, the observation, ``"reward"``, the done
flags, ``"first"`` (a new episode's first observation), ``"off_policy"`` with the logged
``"action"``, ``"training_enabled"`` and ``"info"`` (the last info given to ``log_returns``
with that reward, ``{}`` when none). ``send_actions(td)`` takes that tensordict back with its
``"action"`` filled in: each row whose episode waits for an action gets its row's action, and
every other row (an episode's end, an episode that logged its own action, a row of an episode
that is gone) is ignored.

Example:
    >>> import threading
    >>> from hub.external import ExternalEnv
    >>> from hub.specs import Categorical, Unbounded
    >>> env = ExternalEnv(Unbounded((1,)), Categorical(3), max_concurrent=1)
    >>> got = []
    >>> def simulator():
    ...     eid = env.start_episode("p")
    ...     got.append(int(env.get_action(eid, [0.0])))
    ...     env.end_episode(eid, [1.0])
    >>> thread = threading.Thread(target=simulator); thread.start()
    >>> polled = env.polling.poll()
    >>> polled["action"][:] = 2
    >>> env.polling.send_actions(polled)
    >>> thread.join()
    >>> got, env.polling.poll()["done"].tolist()
    ([2], [[True]])
    >>> env.close()
"""

from __future__ import annotations

from typing import Any

import torch
from tensordict import NonTensorStack, TensorDict, TensorDictBase

from hub.external.episodes import Board, Episode, Item
from hub.external.values import EpisodeValues

__all__ = ["PollView"]


class PollView:
    """``poll`` / ``send_actions`` over a :class:`~hub.external.episodes.Board`.

    Use either this view or the env's ``reset`` / ``step`` on one ExternalEnv, not both.
    """

    def __init__(self, board: Board, values: EpisodeValues) -> None:
        self._board = board
        self._values = values

    def poll(self, timeout: float | None = None) -> TensorDictBase:
        """Wait up to ``timeout`` seconds (``None``: no bound) for a posted item; every item
        posted since the last poll, one row each (batch ``[k]``, ``k`` may be 0)."""
        board = self._board
        with board.cond:
            board.learner_call()
            board.wait_for(
                lambda: (
                    bool(board.pending) or any(ep and ep.stage == "responded" for ep in board.slots)
                ),
                timeout,
            )
            results = board.consume()
            consumed = len(results)
            for index in board.bind(range(board.size)):
                episode = board.slots[index]
                results.append((index, episode, episode.item))
        return self._rows(results, consumed)

    def _rows(self, results: list[tuple[int, Episode, Item]], consumed: int) -> TensorDict:
        """The rows of ``results``, of which those after the first ``consumed`` are first
        observations of new episodes."""
        k = len(results)
        obs_spec = self._values.observation_spec
        data: dict[str, Any] = {
            key: torch.stack([item.obs[key] for _, _, item in results])
            if k
            else obs_spec[key].zero((0,))
            for key in self._values.keys
        }
        action = self._values.action_spec.zero((k,))
        off = torch.zeros(k, dtype=torch.bool)
        for row, (_, _, item) in enumerate(results):
            if item.off_policy_action is not None:
                action[row], off[row] = item.off_policy_action, True
        term = torch.tensor([[item.terminated] for _, _, item in results], dtype=torch.bool)
        trunc = torch.tensor([[item.truncated] for _, _, item in results], dtype=torch.bool)
        data.update(
            slot=torch.tensor([index for index, _, _ in results], dtype=torch.long),
            reward=torch.tensor([[item.reward] for _, _, item in results], dtype=torch.float32),
            terminated=term.reshape(k, 1),
            truncated=trunc.reshape(k, 1),
            done=(term | trunc).reshape(k, 1),
            first=torch.arange(k) >= consumed,
            off_policy=off,
            action=action,
            training_enabled=torch.tensor(
                [ep.training_enabled for _, ep, _ in results], dtype=torch.bool
            ).reshape(k),
        )
        td = TensorDict(data, batch_size=(k,))
        if k:
            td.set("episode_id", NonTensorStack(*[ep.id for _, ep, _ in results]))
            td.set("info", NonTensorStack(*[dict(item.info) for _, _, item in results]))
        return td

    def send_actions(self, actions: TensorDictBase) -> None:
        """Give the polled episodes that wait for an action their row's ``"action"``.

        ``actions`` is what :meth:`poll` returned, with ``"action"`` filled in (it needs
        ``"slot"`` and ``"action"``; with ``"episode_id"`` a row reaches only that episode, and
        rows marked ``"done"`` are ends). Rows whose episode does not wait are ignored, so the
        whole polled tensordict can be passed back as it is. Episodes that logged their own
        action get it back, whatever ``"action"`` says."""
        k = actions.batch_size[0] if actions.batch_dims else 0
        if not k:
            return
        slots = actions.get("slot").reshape(k).tolist()
        values = actions.get("action")
        done = actions.get("done", None)
        ended = [False] * k if done is None else done.reshape(k, -1).any(-1).tolist()
        ids = _episode_ids(actions, k)
        board = self._board
        size = board.size
        with board.cond:
            board.learner_call()
            pairs = [
                (slot, values[row])
                for row, slot in enumerate(slots)
                if not ended[row] and 0 <= slot < size and board.waiting(slot, ids[row])
            ]
            board.deliver((slot, value.clone()) for slot, value in pairs)


def _episode_ids(actions: TensorDictBase, k: int) -> list[str | None]:
    """Each row's ``"episode_id"`` (``None`` for every row when there is none)."""
    if "episode_id" not in actions.keys():
        return [None] * k
    ids = actions.get("episode_id")
    values = ids.tolist() if hasattr(ids, "tolist") else list(ids)
    return [value if isinstance(value, str) else None for value in values]
