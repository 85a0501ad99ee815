"""``PolicyClient``: the simulator's side of a :class:`~hub.external.PolicyServer`.

Needs numpy and msgpack only (no torch), so a game engine's Python can use it; local inference
also needs ``safetensors`` (its numpy loader). The five methods are those of
:class:`~hub.external.ExternalEnv`.

- ``inference="remote"``: every ``get_action`` is a round trip; the learner's policy acts.
- ``inference="local"``: the client fetches the policy's weights (every ``update_interval``
  seconds), computes actions itself and sends what it logged in batches; the learner sees them
  as logged (off-policy) actions. To a server with ``local_view="bulk"`` (its ``welcome``
  announces ``bulk_rows``) the batches are columns of complete transitions
  (``log_transitions``, read by the learner's ``take_transitions``); otherwise they are lists
  of calls (``log_batch``, stepped by the learner like any episode).

A lost connection is reopened (for up to ``reconnect_s`` seconds) and the call tried once more;
a server that does not answer within ``timeout`` seconds, or cannot be reached, raises
:class:`~hub.external.protocol.ProtocolError` (code ``"connection"``): a call never hangs.

Example:
    >>> from hub.external.client import PolicyClient
    >>> PolicyClient("127.0.0.1:1", reconnect_s=0)  # nothing listens on port 1
    Traceback (most recent call last):
    ...
    hub.external.protocol.ProtocolError: cannot reach the PolicyServer at 127.0.0.1:1 ...
"""

from __future__ import annotations

import socket
import threading
import time
import uuid
from typing import Any

import numpy as np

from hub.external.protocol import (
    DEFAULT_MAX_MESSAGE_BYTES,
    ERROR_CODES,
    ProtocolError,
    decode_array,
    encode_array,
    encode_message,
    recv_message,
    send_message,
)
from hub.external.segments import SegmentBuffer

__all__ = ["PolicyClient"]


class PolicyClient:
    """Connect to a PolicyServer at ``address`` (``"host:port"`` or ``(host, port)``).

    Args:
        token: the server's shared secret, if it has one.
        inference: ``"remote"`` or ``"local"`` (see the module docstring).
        update_interval: with local inference, seconds between weight fetches.
        timeout: seconds to wait for any answer (``get_action`` waits for the learner's step).
        reconnect_s: seconds to keep trying to (re)connect before raising.
        max_message_bytes: the size limit of a message from the server.
        batch_events: with local inference, calls gathered per ``log_batch``, or transitions
            per ``log_transitions``.

    The calls of one client are serialized (one request at a time); use one client per thread.
    """

    def __init__(
        self,
        address: str | tuple[str, int],
        *,
        token: str | None = None,
        inference: str = "remote",
        update_interval: float = 10.0,
        timeout: float = 300.0,
        reconnect_s: float = 5.0,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        batch_events: int = 64,
    ) -> None:
        if inference not in ("remote", "local"):
            raise ValueError(f"inference must be 'remote' or 'local', got {inference!r}")
        if isinstance(address, str):
            host, _, port = address.rpartition(":")
            address = (host, int(port))
        self.address = (address[0], int(address[1]))
        self.token = token
        self.inference = inference
        self.update_interval = update_interval
        self.timeout = timeout
        self.reconnect_s = reconnect_s
        self.max_message_bytes = max_message_bytes
        self.batch_events = batch_events
        self._lock = threading.RLock()
        self._sock: socket.socket | None = None
        self._events: list[dict[str, Any]] = []
        self._rewards: list[dict[str, Any]] = []
        self._segments: SegmentBuffer | None = None
        self.bulk_rows = 0
        self._policy: Any = None
        self._fetched = 0.0
        self.weights_version: int | None = None
        self.specs: dict[str, Any] = {}
        with self._lock:
            self._connect()

    # ------------------------------------------------------------------ connection
    def _connect(self) -> None:
        where = f"{self.address[0]}:{self.address[1]}"
        deadline = time.monotonic() + self.reconnect_s
        while True:
            try:
                sock = socket.create_connection(self.address, timeout=min(self.timeout, 5.0))
                break
            except OSError as err:
                if time.monotonic() >= deadline:
                    raise ProtocolError(
                        "connection",
                        f"cannot reach the PolicyServer at {where} ({err}); is it running there?",
                    ) from None
                time.sleep(0.05)
        sock.settimeout(self.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock = sock
        welcome = self._exchange("hello", token=self.token, client="hub.external.PolicyClient")
        self.specs = {
            "observation": welcome["observation_spec"],
            "action": welcome["action_spec"],
            "reward": welcome["reward_spec"],
        }
        self.bulk_rows = int(welcome.get("bulk_rows") or 0)  # absent from older servers
        if self.inference == "local" and self.bulk_rows and self._segments is None:
            self._segments = SegmentBuffer(list(self.specs["observation"]))
            self._rows_per_message = min(
                self.batch_events, self.bulk_rows, self._rows_that_fit(welcome)
            )

    def _rows_that_fit(self, welcome: dict[str, Any]) -> int:
        """Transitions per log_transitions that stay under the server's size limit."""
        limit = min(int(welcome["max_message_bytes"]), self.max_message_bytes)

        def size(spec: dict[str, Any]) -> int:
            return int(np.prod(spec["shape"])) * np.dtype(spec["dtype"]).itemsize

        obs = sum(size(spec) for spec in self.specs["observation"].values())
        row = 2 * obs + size(self.specs["action"]) + 8 + 64  # observations at most twice
        return max(1, (limit - 4096) // row)

    def _drop(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def _exchange(self, kind: str, _before: bytes = b"", **fields: Any) -> dict[str, Any]:
        """Send one message (after the frame ``_before``, whose answer is read first) and read
        its answer on the open socket."""
        try:
            self._sock.sendall(_before + encode_message(kind, **fields))
            if _before:
                self._check_reply(recv_message(self._sock, self.max_message_bytes), "log_batch")
            reply = recv_message(self._sock, self.max_message_bytes)
        except TimeoutError:
            self._drop()
            raise ProtocolError(
                "connection", f"the PolicyServer sent no answer to {kind!r} in {self.timeout} s"
            ) from None
        except ProtocolError:
            self._drop()
            raise
        except OSError:
            self._drop()
            raise ConnectionError(
                f"the connection to the PolicyServer broke during {kind!r}"
            ) from None
        return self._check_reply(reply, kind)

    def _check_reply(self, reply: dict[str, Any], kind: str) -> dict[str, Any]:
        if reply["type"] == "error":
            code = str(reply.get("code"))
            if ERROR_CODES.get(code, True):
                self._drop()
            raise ProtocolError(code, f"the PolicyServer refused {kind!r}: {reply.get('message')}")
        return reply

    def _request(self, kind: str, **fields: Any) -> dict[str, Any]:
        """One request and its answer; reconnects and tries once more if the connection broke."""
        with self._lock:
            for _attempt in range(2):
                if self._sock is None:
                    self._connect()
                before = b""
                if self._rewards and kind != "log_batch":
                    before = encode_message("log_batch", events=self._rewards)
                    self._rewards = []
                try:
                    return self._exchange(kind, before, **fields)
                except ConnectionError as err:
                    if isinstance(err, ProtocolError):
                        raise
                    broken = err
            raise ProtocolError("connection", f"{broken}, again after reconnecting")

    def close(self) -> None:
        """Send the calls still gathered (local inference), say goodbye, close the socket."""
        with self._lock:
            held = self._segments is not None and self._segments.complete
            if self._sock is None and not self._events and not self._rewards and not held:
                return
            try:
                self.flush()
                if self._sock is not None:
                    send_message(self._sock, "bye")
            except (OSError, ConnectionError):
                pass
            finally:
                self._drop()

    def __enter__(self) -> PolicyClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ the five methods
    def start_episode(self, episode_id: str | None = None, training_enabled: bool = True) -> str:
        """Start an episode on the learner and return its id."""
        if self.inference == "local":
            episode_id = episode_id or uuid.uuid4().hex
            if self._segments is not None:
                with self._lock:
                    self._segments.start(episode_id, training_enabled)
                return episode_id
            self._gather("start_episode", episode_id=episode_id, training_enabled=training_enabled)
            return episode_id
        reply = self._request(
            "start_episode", episode_id=episode_id, training_enabled=bool(training_enabled)
        )
        return reply["episode_id"]

    def get_action(self, episode_id: str, observation: Any) -> np.ndarray:
        """Send an observation and return the action (the learner's, or the local policy's)."""
        if self.inference == "local":
            arrays = self.observation_arrays(observation)
            action = self._local_policy()(arrays)
            if self._segments is not None:
                self._log_row(episode_id, arrays, action)
                return action
            obs = {key: encode_array(value) for key, value in arrays.items()}
            self._gather("log_action", episode_id=episode_id, observation=obs, action=action)
            return action
        obs = self.observation_message(observation)
        reply = self._request("get_action", episode_id=episode_id, observation=obs)
        return decode_array(reply["action"])

    def log_action(self, episode_id: str, observation: Any, action: Any) -> None:
        """Record an observation and the action the simulator chose itself."""
        if self._segments is not None:
            action = self._fit(action, self.specs["action"], "action")
            self._log_row(episode_id, self.observation_arrays(observation), action)
            return
        fields = {
            "episode_id": episode_id,
            "observation": self.observation_message(observation),
            "action": self.action_array(action),
        }
        if self.inference == "local":
            self._gather("log_action", **fields)
        else:
            self._request("log_action", **fields)

    def log_returns(self, episode_id: str, reward: float, info: dict | None = None) -> None:
        """Add a reward to the episode's last action (rewards sum until the next action)."""
        if self._segments is not None:  # info goes nowhere: the bulk view has no infos
            with self._lock:
                self._segments.reward(episode_id, reward)
        elif self.inference == "local":
            self._gather("log_returns", episode_id=episode_id, reward=float(reward), info=info)
        else:  # sent with the next request, in the same write (one round trip for both)
            event = {"type": "log_returns", "episode_id": episode_id, "reward": float(reward)}
            with self._lock:
                self._rewards.append(dict(event, info=info))

    def end_episode(self, episode_id: str, observation: Any, truncated: bool = False) -> None:
        """Record the episode's last observation; it ended (``truncated``: cut short)."""
        if self._segments is not None:
            with self._lock:
                self._segments.end(episode_id, self.observation_arrays(observation), truncated)
                self.flush()
            return
        fields = {
            "episode_id": episode_id,
            "observation": self.observation_message(observation),
            "truncated": bool(truncated),
        }
        if self.inference == "local":
            self._gather("end_episode", **fields)
            self.flush()
        else:
            self._request("end_episode", **fields)

    # ------------------------------------------------------------------ values
    def observation_arrays(self, observation: Any) -> dict[str, np.ndarray]:
        """An observation (array, or dict of arrays) as arrays of the spec's dtypes and shapes."""
        specs = self.specs["observation"]
        if not isinstance(observation, dict):
            if len(specs) != 1:
                raise ValueError(f"the observation must be a dict with keys {sorted(specs)}")
            observation = {next(iter(specs)): observation}
        return {key: self._fit(observation[key], specs[key], key) for key in specs}

    def observation_message(self, observation: Any) -> dict[str, dict[str, Any]]:
        """An observation as the protocol's map of arrays."""
        arrays = self.observation_arrays(observation)
        return {key: encode_array(value) for key, value in arrays.items()}

    def action_array(self, action: Any) -> dict[str, Any]:
        return encode_array(self._fit(action, self.specs["action"], "action"))

    @staticmethod
    def _fit(value: Any, spec: dict[str, Any], key: str) -> np.ndarray:
        array = np.asarray(value, dtype=spec["dtype"])
        shape = tuple(spec["shape"])
        if array.shape != shape:
            if array.size != int(np.prod(shape, dtype=np.int64)):
                raise ValueError(f"{key!r} must have shape {list(shape)}, got {list(array.shape)}")
            array = array.reshape(shape)
        return array

    # ------------------------------------------------------------------ local inference
    def _log_row(self, episode_id: str, arrays: dict[str, np.ndarray], action: Any) -> None:
        with self._lock:
            self._segments.act(episode_id, arrays, action)
            if self._segments.complete >= self._rows_per_message:
                self.flush()

    def _gather(self, kind: str, **fields: Any) -> None:
        with self._lock:
            self._events.append({"type": kind, **fields})
            if len(self._events) >= self.batch_events:
                self.flush()

    def flush(self) -> None:
        """Send the gathered calls (local inference, and rewards not sent yet) now."""
        with self._lock:
            events, self._events = self._rewards + self._events, []
            self._rewards = []
            if events:
                self._request("log_batch", events=events)
            while self._segments is not None and self._segments.complete:
                self._request("log_transitions", **self._segments.take(self._rows_per_message))

    def _local_policy(self) -> Any:
        with self._lock:
            now = time.monotonic()
            if self._policy is None or now - self._fetched >= self.update_interval:
                self.update_weights()
            return self._policy

    def update_weights(self) -> None:
        """Fetch the learner's current policy weights now (local inference)."""
        from hub.external.local_policy import load_weights

        with self._lock:
            reply = self._request("get_weights")
            if reply["version"] != self.weights_version or self._policy is None:
                self._policy = load_weights(reply["layers"], reply["data"], self.specs["action"])
                self.weights_version = reply["version"]
            self._fetched = time.monotonic()
