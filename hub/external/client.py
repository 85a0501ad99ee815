"""``PolicyClient``: the simulator's side of a :class:`~hub.external.PolicyServer`.

Needs numpy and msgpack only (no torch), so a game engine's Python can use it; local inference
also needs ``safetensors`` (its numpy loader). The five methods are those of
:class:`~hub.external.ExternalEnv`; how they travel is picked when the client connects
(:mod:`hub.external.client_modes`):

- ``inference="remote"``: every ``get_action`` is a round trip; the learner's policy acts.
- ``inference="local"``: the client fetches the policy's weights (every ``update_interval``
  seconds), computes actions itself and sends what it logged in batches; the learner sees them
  as logged (off-policy) actions. To a server with ``local_view="bulk"`` (its ``welcome``
  announces ``bulk_rows``) the batches are columns of complete transitions
  (``log_transitions``, read by the learner's ``take_transitions``); otherwise they are lists
  of calls (``log_batch``, stepped by the learner like any episode).

Everything the server sends is checked (message types and fields, the specs of its
``welcome``, each action against the action spec, the weights): a broken or hostile server gives
a :class:`~hub.external.protocol.ProtocolError`, never a raw ``KeyError`` or an action out of
its spec. ``tls=`` connects over TLS and verifies the server's certificate.

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

import threading
import time
from typing import Any

import numpy as np

from hub.external.auth import client_tls_context
from hub.external.client_modes import pick_mode
from hub.external.link import Link
from hub.external.protocol import DEFAULT_MAX_MESSAGE_BYTES, ProtocolError, encode_array

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
        batch_events: with local inference, calls gathered per ``log_batch`` (at most 256), or
            transitions per ``log_transitions``.
        tls: ``None`` (plain TCP), ``True`` (TLS, verifying the server against the system's
            certificate authorities), a path to a PEM file of the authorities (or of the
            server's own self-signed certificate) to trust, or an ``ssl.SSLContext``.
        tls_server_name: the name the server's certificate must carry (default: the host of
            ``address``).

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
        tls: Any = None,
        tls_server_name: str | None = None,
    ) -> None:
        if inference not in ("remote", "local"):
            raise ValueError(f"inference must be 'remote' or 'local', got {inference!r}")
        if not 1 <= batch_events <= 256:
            raise ValueError(f"batch_events must be from 1 to 256, got {batch_events}")
        if isinstance(address, str):
            host, _, port = address.rpartition(":")
            address = (host.strip("[]"), int(port))
        self.address = (address[0], int(address[1]))
        self.token = token
        self.inference = inference
        self.update_interval = update_interval
        self.timeout = timeout
        self.reconnect_s = reconnect_s
        self.max_message_bytes = max_message_bytes
        self.batch_events = batch_events
        self._tls = client_tls_context(tls)
        self._tls_server_name = tls_server_name
        self._lock = threading.RLock()
        self._link: Link | None = None
        self._mode: Any = None
        self._policy: Any = None
        self._fetched = 0.0
        self.weights_version: int | None = None
        self.specs: dict[str, Any] = {}
        self.welcome: dict[str, Any] = {}
        self.bulk_rows = 0
        with self._lock:
            self._connect()

    # ------------------------------------------------------------------ connection
    def _connect(self) -> None:
        link = Link.open(
            self.address,
            self.token,
            self.timeout,
            self.max_message_bytes,
            self._tls,
            self._tls_server_name,
            self.reconnect_s,
        )
        self._link, self.welcome, self.specs = link, link.welcome, link.specs
        self.bulk_rows = max(0, int(link.welcome["bulk_rows"]))
        kind = pick_mode(self.inference, self.bulk_rows)
        if self._mode is None:
            self._mode = kind(self)
        elif not isinstance(self._mode, kind):
            self._drop()
            raise ProtocolError(
                "connection",
                f"the PolicyServer at {self.address[0]}:{self.address[1]} now serves another "
                f"learner view (bulk_rows {self.bulk_rows}) than when this client connected; "
                "start a new PolicyClient",
            )

    def _drop(self) -> None:
        if self._link is not None:
            self._link.close()
            self._link = None

    def _request(
        self,
        kind: str,
        fields: dict[str, Any],
        before: list[tuple[str, dict[str, Any]]] | None = None,
    ) -> dict[str, Any]:
        """One request (after the messages ``before``, in the same write) and its answer;
        reconnects and tries once more if the connection broke."""
        expect = _ANSWERS.get(kind, "ok")
        with self._lock:
            for _attempt in range(2):
                if self._link is None or self._link.closed:
                    self._connect()
                try:
                    return self._link.exchange([*(before or []), (kind, fields)], expect)
                except ProtocolError:
                    raise
                except ConnectionError as err:
                    broken = err
            raise ProtocolError("connection", f"{broken}, again after reconnecting")

    def close(self) -> None:
        """Send the calls still gathered (local inference), say goodbye, close the socket."""
        with self._lock:
            held = self._mode is not None and self._mode.held
            if self._link is None and not held:
                return
            try:
                self.flush()
                if self._link is not None:
                    self._link.send("bye")
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
        with self._lock:
            return self._mode.start_episode(episode_id, training_enabled)

    def get_action(self, episode_id: str, observation: Any) -> np.ndarray:
        """Send an observation and return the action (the learner's, or the local policy's)."""
        with self._lock:
            return self._mode.get_action(episode_id, observation)

    def log_action(self, episode_id: str, observation: Any, action: Any) -> None:
        """Record an observation and the action the simulator chose itself."""
        with self._lock:
            self._mode.log_action(episode_id, observation, action)

    def log_returns(self, episode_id: str, reward: float, info: dict | None = None) -> None:
        """Add a reward to the episode's last action (rewards sum until the next action); the
        ``info`` goes with that transition."""
        with self._lock:
            self._mode.log_returns(episode_id, reward, info)

    def end_episode(self, episode_id: str, observation: Any, truncated: bool = False) -> None:
        """Record the episode's last observation; it ended (``truncated``: cut short)."""
        with self._lock:
            self._mode.end_episode(episode_id, observation, truncated)

    def flush(self) -> None:
        """Send what was gathered (local inference, and rewards not sent yet) now."""
        with self._lock:
            if self._mode is not None:
                self._mode.flush()

    # ------------------------------------------------------------------ values
    def observation_arrays(self, observation: Any) -> dict[str, np.ndarray]:
        """An observation (array, or dict of arrays) as arrays of the spec's dtypes and shapes."""
        specs = self.specs["observation"]
        if not isinstance(observation, dict):
            if len(specs) != 1:
                raise ValueError(f"the observation must be a dict with keys {sorted(specs)}")
            observation = {next(iter(specs)): observation}
        return {key: self.fit(observation[key], specs[key], key) for key in specs}

    def observation_message(self, observation: Any) -> dict[str, dict[str, Any]]:
        """An observation as the protocol's map of arrays."""
        arrays = self.observation_arrays(observation)
        return {key: encode_array(value) for key, value in arrays.items()}

    def action_array(self, action: Any) -> dict[str, Any]:
        return encode_array(self.fit(action, self.specs["action"], "action"))

    @staticmethod
    def fit(value: Any, spec: dict[str, Any], key: str) -> np.ndarray:
        """``value`` as an array of the spec's dtype and shape (reshaped when the sizes match)."""
        array = np.asarray(value, dtype=spec["dtype"])
        shape = tuple(spec["shape"])
        if array.shape != shape:
            if array.size != int(np.prod(shape, dtype=np.int64)):
                raise ValueError(f"{key!r} must have shape {list(shape)}, got {list(array.shape)}")
            array = array.reshape(shape)
        return array

    # ------------------------------------------------------------------ local inference
    def local_policy(self) -> Any:
        """The local copy of the learner's policy, fetched again every ``update_interval``."""
        with self._lock:
            now = time.monotonic()
            if self._policy is None or now - self._fetched >= self.update_interval:
                self.update_weights()
            return self._policy

    def update_weights(self) -> None:
        """Fetch the learner's current policy weights now (local inference)."""
        from hub.external.local_policy import load_weights

        with self._lock:
            reply = self._request("get_weights", {})
            if reply["version"] != self.weights_version or self._policy is None:
                self._policy = load_weights(reply["layers"], reply["data"], self.specs)
                self.weights_version = reply["version"]
            self._fetched = time.monotonic()


#: the answer each request gets when it succeeds
_ANSWERS = {
    "start_episode": "episode_started",
    "get_action": "action",
    "get_weights": "weights",
}
