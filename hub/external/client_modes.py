"""How a :class:`~hub.external.PolicyClient` carries its five calls: one strategy per mode,
picked when the client connects.

- :class:`RemoteMode` (``inference="remote"``): every ``get_action`` is a round trip; the
  rewards of ``log_returns`` go with the next request, in the same write.
- :class:`StepBatchMode` (``inference="local"``, a server whose ``welcome`` says
  ``bulk_rows`` 0): actions come from the local copy of the policy; the calls are gathered and
  sent as ``log_batch`` messages, which the learner steps like any episode.
- :class:`BulkMode` (``inference="local"``, a server that announced ``bulk_rows``): the
  complete transitions are sent as columns (``log_transitions``) for the learner's bulk view.

A strategy calls back into its client for requests (:meth:`PolicyClient._request`), for the
local policy and for the checks of values; it holds what it gathered until it is sent.

Example:
    >>> pick_mode("remote", 0) is RemoteMode, pick_mode("local", 4096) is BulkMode
    (True, True)
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import numpy as np

from hub.external.protocol import ProtocolError, decode_array, encode_array
from hub.external.segments import SegmentBuffer
from hub.external.wire_specs import check_value

if TYPE_CHECKING:
    from hub.external.client import PolicyClient

__all__ = ["RemoteMode", "StepBatchMode", "BulkMode", "pick_mode"]


class _MessageMode:
    """What the modes that send each call as a message share: ``log_action`` and
    ``end_episode`` encode the observation and action the same way, and ``_send`` (a request,
    or a message gathered into the next batch) carries them."""

    client: PolicyClient

    def _send(self, kind: str, **fields: Any) -> Any:
        raise NotImplementedError

    def log_action(self, episode_id: str, observation: Any, action: Any) -> None:
        self._send(
            "log_action",
            episode_id=episode_id,
            observation=self.client.observation_message(observation),
            action=self.client.action_array(action),
        )

    def end_episode(self, episode_id: str, observation: Any, truncated: bool) -> None:
        self._send(
            "end_episode",
            episode_id=episode_id,
            observation=self.client.observation_message(observation),
            truncated=bool(truncated),
        )


class RemoteMode(_MessageMode):
    """Remote inference: the learner's policy acts in the learner's step."""

    def __init__(self, client: PolicyClient) -> None:
        self.client = client
        self.rewards: list[dict[str, Any]] = []  # log_returns not sent yet

    def start_episode(self, episode_id: str | None, training_enabled: bool) -> str:
        reply = self.request(
            "start_episode", episode_id=episode_id, training_enabled=bool(training_enabled)
        )
        started = reply["episode_id"]
        if episode_id is not None and started != episode_id:
            raise ProtocolError(
                "bad_message", f"the PolicyServer started {started!r:.80}, not {episode_id!r}"
            )
        return started

    def get_action(self, episode_id: str, observation: Any) -> np.ndarray:
        obs = self.client.observation_message(observation)
        reply = self.request("get_action", episode_id=episode_id, observation=obs)
        try:
            action = decode_array(reply["action"])
        except ProtocolError as err:
            self.client._drop()
            raise ProtocolError("bad_message", f"the PolicyServer's action: {err}") from None
        try:
            check_value(action, self.client.specs["action"], "action")
        except ProtocolError:
            self.client._drop()
            raise
        return action

    def log_returns(self, episode_id: str, reward: float, info: dict | None) -> None:
        event = {"type": "log_returns", "episode_id": episode_id, "reward": float(reward)}
        self.rewards.append(dict(event, info=info))

    def _send(self, kind: str, **fields: Any) -> Any:
        return self.request(kind, **fields)

    def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        """One request, after the rewards not sent yet (one write, one round trip)."""
        before, self.rewards = self.rewards, []
        batch = [("log_batch", {"events": before})] if before else []
        return self.client._request(kind, fields, before=batch)

    def flush(self) -> None:
        if self.rewards:
            events, self.rewards = self.rewards, []
            self.client._request("log_batch", {"events": events})

    @property
    def held(self) -> bool:
        return bool(self.rewards)


class StepBatchMode(_MessageMode):
    """Local inference whose calls the learner steps (``log_batch``)."""

    def __init__(self, client: PolicyClient) -> None:
        self.client = client
        self.events: list[dict[str, Any]] = []

    def start_episode(self, episode_id: str | None, training_enabled: bool) -> str:
        episode_id = episode_id or uuid.uuid4().hex
        self._gather("start_episode", episode_id=episode_id, training_enabled=training_enabled)
        return episode_id

    def get_action(self, episode_id: str, observation: Any) -> np.ndarray:
        arrays = self.client.observation_arrays(observation)
        action = self.client.local_policy()(arrays)
        obs = {key: encode_array(value) for key, value in arrays.items()}
        self._gather("log_action", episode_id=episode_id, observation=obs, action=action)
        return action

    def log_returns(self, episode_id: str, reward: float, info: dict | None) -> None:
        self._gather("log_returns", episode_id=episode_id, reward=float(reward), info=info)

    def _send(self, kind: str, **fields: Any) -> Any:
        self._gather(kind, **fields)

    def _gather(self, kind: str, **fields: Any) -> None:
        self.events.append({"type": kind, **fields})
        if len(self.events) >= self.client.batch_events:
            self.flush()

    def flush(self) -> None:
        """Send the gathered calls; a batch refused with ``backlog`` is kept (it was not taken)
        and sent again with the next flush."""
        while self.events:
            batch = self.events[: self.client.batch_events]
            self.client._request("log_batch", {"events": batch})
            del self.events[: len(batch)]

    @property
    def held(self) -> bool:
        return bool(self.events)


class BulkMode:
    """Local inference whose complete transitions the learner reads in bulk
    (``log_transitions``)."""

    def __init__(self, client: PolicyClient) -> None:
        self.client = client
        self.buffer = SegmentBuffer(list(client.specs["observation"]))
        self.rows_per_message = min(client.batch_events, client.bulk_rows, self._rows_that_fit())

    def _rows_that_fit(self) -> int:
        """Transitions per log_transitions that stay under the server's size limit."""
        client = self.client
        limit = min(int(client.welcome["max_message_bytes"]), client.max_message_bytes)

        def size(spec: dict[str, Any]) -> int:
            return int(np.prod(spec["shape"])) * np.dtype(spec["dtype"]).itemsize

        obs = sum(size(spec) for spec in client.specs["observation"].values())
        row = 2 * obs + size(client.specs["action"]) + 8 + 64  # observations at most twice
        return max(1, (limit - 4096) // row)

    def start_episode(self, episode_id: str | None, training_enabled: bool) -> str:
        episode_id = episode_id or uuid.uuid4().hex
        self.buffer.start(episode_id, training_enabled)
        return episode_id

    def get_action(self, episode_id: str, observation: Any) -> np.ndarray:
        arrays = self.client.observation_arrays(observation)
        action = self.client.local_policy()(arrays)
        self._row(episode_id, arrays, action)
        return action

    def log_action(self, episode_id: str, observation: Any, action: Any) -> None:
        action = self.client.fit(action, self.client.specs["action"], "action")
        self._row(episode_id, self.client.observation_arrays(observation), action)

    def log_returns(self, episode_id: str, reward: float, info: dict | None) -> None:
        self.buffer.reward(episode_id, reward, info)

    def end_episode(self, episode_id: str, observation: Any, truncated: bool) -> None:
        self.buffer.end(episode_id, self.client.observation_arrays(observation), truncated)
        self.flush()

    def _row(self, episode_id: str, arrays: dict[str, np.ndarray], action: Any) -> None:
        self.buffer.act(episode_id, arrays, action)
        if self.buffer.complete >= self.rows_per_message:
            self.flush()

    def flush(self) -> None:
        while self.buffer.complete:
            self.client._request("log_transitions", self.buffer.take(self.rows_per_message))

    @property
    def held(self) -> bool:
        return bool(self.buffer.complete)


def pick_mode(inference: str, bulk_rows: int) -> type:
    """The strategy class for an inference mode and the server's ``bulk_rows``."""
    if inference == "remote":
        return RemoteMode
    return BulkMode if bulk_rows else StepBatchMode
