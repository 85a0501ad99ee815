"""``PolicyServer``: an :class:`~hub.external.ExternalEnv` served over TCP to simulator processes.

One thread accepts connections and one thread serves each connection; a client's calls run the
env's simulator methods in that thread. Every message is checked (size, version, token, fields,
the arrays against the specs) before it touches the env; a message that breaks the protocol gets
an ``error`` message and the connection is closed, while the other connections go on. A client
that disconnects, or sends nothing for ``client_timeout`` seconds while one of its episodes waits
for it, has its episodes ended as truncated (``ExternalEnv.truncate_episode``).

Example:
    >>> from hub.external import ExternalEnv, PolicyServer
    >>> from hub.specs import Categorical, Unbounded
    >>> env = ExternalEnv(Unbounded((4,)), Categorical(2), max_concurrent=4)
    >>> server = PolicyServer(env, port=0)
    >>> server.address[0]
    '127.0.0.1'
    >>> server.close(); env.close()
"""

from __future__ import annotations

import hmac
import socket
import threading
from typing import Any

from hub.errors import ClosedEnvError, HubError, SpecMismatchError
from hub.external.env import ExternalEnv
from hub.external.episodes import EpisodeError, ExternalEnvFullError
from hub.external.protocol import (
    DEFAULT_MAX_MESSAGE_BYTES,
    ProtocolError,
    check_fields,
    encode_array,
    recv_message,
    send_message,
)
from hub.external.spec_wire import (
    check_array,
    check_transitions,
    describe_composite,
    describe_leaf,
)

__all__ = ["PolicyServer", "LOOPBACK"]

LOOPBACK = ("127.0.0.1", "::1", "localhost")
#: calls of one connection queued behind the learner before a log_batch is answered
QUEUE_LIMIT = 128
#: the most transitions one log_transitions message may carry (announced as bulk_rows)
BULK_ROWS = 4096


class PolicyServer:
    """Serve ``env`` (an ExternalEnv, or a TransformedEnv over one) to PolicyClients.

    Args:
        env: the env the learner steps.
        host: the address to bind (loopback unless told otherwise).
        port: the port (0: a free one; see :attr:`address`).
        token: the shared secret every client sends in its ``hello``; required when ``host`` is
            not loopback.
        policy: for clients with ``inference="local"``: a ``torch.nn.Sequential`` of ``Linear``,
            ``ReLU`` and ``Tanh`` layers whose weights they fetch (as safetensors).
        max_message_bytes: the size limit of every message, both ways.
        client_timeout: seconds of silence after which a client with a running episode counts
            as gone; also how long a ``log_transitions`` waits for room in the bulk queue.
        local_view: which learner view the local-inference clients feed: ``"step"`` (they send
            their calls as ``log_batch`` and the learner steps them like any episode) or
            ``"bulk"`` (they send columns of transitions, ``log_transitions``, which the learner
            reads with ``env.take_transitions()``; the step view never sees them).
    """

    def __init__(
        self,
        env: Any,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        token: str | None = None,
        policy: Any = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        client_timeout: float = 60.0,
        local_view: str = "step",
    ) -> None:
        if local_view not in ("step", "bulk"):
            raise HubError(f"local_view must be 'step' or 'bulk', got {local_view!r}")
        base = getattr(env, "base_env", env)
        if not isinstance(base, ExternalEnv):
            raise HubError(
                f"PolicyServer serves an ExternalEnv, got {type(env).__name__}. Build one with "
                "hub.external.ExternalEnv(observation_spec, action_spec)."
            )
        if token is None and host not in LOOPBACK:
            raise HubError(
                f"PolicyServer binds to {host!r}, beyond loopback: pass token=... (a shared "
                "secret the clients send), or bind to 127.0.0.1."
            )
        if policy is not None:  # refuse a policy the clients cannot run now, not at a fetch
            from hub.external.weights import export_policy

            export_policy(policy)
        self.env = base
        self.token = token
        self.policy = policy
        self.max_message_bytes = int(max_message_bytes)
        self.client_timeout = client_timeout
        self._welcome = {
            "observation_spec": describe_composite(base.episode_observation_spec),
            "action_spec": describe_leaf(base.episode_action_spec),
            "reward_spec": describe_leaf(base.episode_reward_spec),
            "max_message_bytes": self.max_message_bytes,
            "weights": policy is not None,
            "bulk_rows": BULK_ROWS if local_view == "bulk" else 0,
        }
        self._lock = threading.Lock()
        self._connections: set[_Connection] = set()
        self._stop = threading.Event()
        self._listener = socket.create_server((host, port))
        self._listener.settimeout(0.1)
        self.address: tuple[str, int] = self._listener.getsockname()[:2]
        self._acceptor = threading.Thread(
            target=self._accept_loop, name=f"hub-policy-server-{self.address[1]}", daemon=True
        )
        self._acceptor.start()

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                sock, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                break
            connection = _Connection(self, sock)
            with self._lock:
                if self._stop.is_set():
                    sock.close()
                    break
                self._connections.add(connection)
            connection.thread.start()

    def forget(self, connection: _Connection) -> None:
        with self._lock:
            self._connections.discard(connection)

    @property
    def connection_count(self) -> int:
        """The clients connected now."""
        with self._lock:
            return len(self._connections)

    def close(self) -> None:
        """Stop accepting, end every client's episodes as truncated, close every connection and
        wait for the server's threads. Calling it again does nothing."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._acceptor.join()
        self._listener.close()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            connection.stop()
        for connection in connections:
            connection.thread.join()

    def __enter__(self) -> PolicyServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class _Connection:
    """One client: its socket, its thread, the episodes it started."""

    def __init__(self, server: PolicyServer, sock: socket.socket) -> None:
        self.server = server
        self.sock = sock
        self.episodes: set[str] = set()
        self.bulk_episodes: set[str] = set()
        self.env = server.env
        self.thread = threading.Thread(target=self.run, name="hub-policy-connection", daemon=True)

    def stop(self) -> None:
        for episode_id in list(self.episodes):
            self.env.truncate_episode(episode_id)
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def run(self) -> None:
        try:
            self.sock.settimeout(self.server.client_timeout)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.handshake()
            while self.serve_one():
                pass
        except ProtocolError as err:
            self.send_error(err.code, str(err))
        except ClosedEnvError as err:
            self.send_error("closed", str(err))
        except (OSError, ConnectionError):
            pass  # the client went away
        except Exception as err:  # a bug: tell the client, keep the traceback in the log
            self.send_error("internal", f"the server failed on this message: {err!r}")
            raise
        finally:
            for episode_id in list(self.episodes):
                self.env.truncate_episode(episode_id)
            self.env.truncate_transition_episodes(self.bulk_episodes)
            self.sock.close()
            self.server.forget(self)

    def send_error(self, code: str, message: str) -> None:
        try:
            send_message(self.sock, "error", code=code, message=message)
        except OSError:
            pass

    def receive(self) -> dict[str, Any] | None:
        """The next message; ``None`` when the client is silent with no episode waiting on it."""
        while True:
            try:
                return recv_message(self.sock, self.server.max_message_bytes)
            except TimeoutError:
                if self.episodes:
                    raise ConnectionError("the client stopped answering") from None

    def handshake(self) -> None:
        message = self.receive()
        if message["type"] != "hello":
            raise ProtocolError("bad_message", "the first message must be 'hello'")
        expected = self.server.token
        token = message.get("token")
        if expected is not None and not (
            isinstance(token, str) and hmac.compare_digest(token.encode(), expected.encode())
        ):
            raise ProtocolError("unauthorized", "wrong or missing token; the server refused it")
        check_fields(message)
        send_message(self.sock, "welcome", **self.server._welcome)

    def serve_one(self) -> bool:
        message = self.receive()
        check_fields(message)
        kind = message["type"]
        if kind == "bye":
            return False
        if kind == "get_weights":
            self.send_weights()
            return True
        if kind == "log_transitions":
            self.log_transitions(message)
            return True
        if kind == "log_batch":
            started: set[str] = set()
            events = [self.check_event(event, started) for event in _event_list(message)]
            for event in events:
                self.apply(event, reply=False)
            # backpressure: answer once the learner has caught up with most of what is queued
            self.env.wait_queued(self.episodes, QUEUE_LIMIT, self.server.client_timeout)
            send_message(self.sock, "ok")
            return True
        self.apply(self.check_event(message), reply=True)
        return True

    def log_transitions(self, message: dict[str, Any]) -> None:
        """Check a batch of transition columns once and queue it for the bulk view."""
        welcome = self.server._welcome
        if not welcome["bulk_rows"]:
            raise ProtocolError(
                "bad_message",
                "this server takes no log_transitions (its welcome said bulk_rows 0): send "
                "log_batch, or serve with PolicyServer(..., local_view='bulk')",
            )
        columns = check_transitions(message, welcome)
        try:
            self.env.log_transitions(**columns, timeout=self.server.client_timeout, owner=self)
        except SpecMismatchError as err:
            raise ProtocolError("spec_mismatch", str(err)) from None
        except EpisodeError as err:
            send_message(self.sock, "error", code="episode", message=str(err))
            return
        except ExternalEnvFullError as err:
            send_message(self.sock, "error", code="full", message=str(err))
            return
        except TimeoutError as err:
            send_message(self.sock, "error", code="backlog", message=str(err))
            return
        ended = columns["terminated"] | columns["truncated"]
        for episode_id, end in zip(columns["episode_ids"], ended.tolist(), strict=True):
            if end:
                self.bulk_episodes.discard(episode_id)
            else:
                self.bulk_episodes.add(episode_id)
        send_message(self.sock, "ok")

    def check_event(self, message: Any, started: set[str] | None = None) -> dict[str, Any]:
        """Decode and check the arrays of one simulator call, and its episode's owner
        (``started``: the ids a batch starts before this event)."""
        if not isinstance(message, dict) or message.get("type") not in _CALLS:
            raise ProtocolError("bad_message", f"not a simulator call: {message!r:.80}")
        check_fields(message)
        kind = message["type"]
        known = self.episodes | (started or set())
        if kind == "start_episode" and started is not None:
            if not isinstance(message["episode_id"], str):
                raise ProtocolError("bad_message", "start_episode in log_batch needs an id")
            started.add(message["episode_id"])
        elif kind != "start_episode" and message["episode_id"] not in known:
            return dict(message, unknown=True)
        out = dict(message)
        if "observation" in message:
            out["observation"] = self.check_observation(message["observation"])
        if "action" in message:
            description = self.server._welcome["action_spec"]
            out["action"] = check_array(message["action"], description, "action")
        return out

    def check_observation(self, value: Any) -> dict[str, Any]:
        specs = self.server._welcome["observation_spec"]
        if not isinstance(value, dict) or sorted(value) != sorted(specs):
            raise ProtocolError(
                "spec_mismatch", f"the observation must be a map with the keys {sorted(specs)}"
            )
        return {key: check_array(value[key], specs[key], key) for key in specs}

    def apply(self, event: dict[str, Any], reply: bool) -> None:
        """Run one simulator call on the env; errors that leave the connection open are sent."""
        try:
            self.call(event, reply)
        except ExternalEnvFullError as err:
            self.reply_error(reply, "full", str(err))
        except SpecMismatchError as err:
            raise ProtocolError("spec_mismatch", str(err)) from None
        except EpisodeError as err:
            self.reply_error(reply, "episode", str(err))

    def reply_error(self, reply: bool, code: str, message: str) -> None:
        if not reply:
            raise ProtocolError(code, message)
        send_message(self.sock, "error", code=code, message=message)

    def call(self, event: dict[str, Any], reply: bool) -> None:
        kind, env = event["type"], self.env
        if event.get("unknown"):
            self.reply_error(
                reply,
                "unknown_episode",
                f"episode {event['episode_id']!r} was not started on this connection (the server "
                "may have restarted): start a new episode",
            )
            return
        if kind == "start_episode":
            episode_id = env.start_episode(event["episode_id"], bool(event["training_enabled"]))
            self.episodes.add(episode_id)
            if reply:
                send_message(self.sock, "episode_started", episode_id=episode_id)
            return
        episode_id = event["episode_id"]
        if kind == "get_action":
            action = env.get_action(episode_id, event["observation"])
            description = self.server._welcome["action_spec"]
            send_message(self.sock, "action", action=encode_array(action, description["dtype"]))
            return
        if kind == "log_action":
            env.log_action(episode_id, event["observation"], event["action"], wait=reply)
        elif kind == "log_returns":
            info = event["info"] if isinstance(event["info"], dict) else None
            env.log_returns(episode_id, float(event["reward"]), info)
        elif kind == "end_episode":
            self.episodes.discard(episode_id)
            env.end_episode(episode_id, event["observation"], bool(event["truncated"]))
        if reply:
            send_message(self.sock, "ok")

    def send_weights(self) -> None:
        policy = self.server.policy
        if policy is None:
            send_message(
                self.sock,
                "error",
                code="no_weights",
                message="this server has no policy for local inference (PolicyServer(policy=...))",
            )
            return
        from hub.external.weights import export_policy

        version, layers, data = export_policy(policy)
        send_message(self.sock, "weights", version=version, layers=layers, data=data)


_CALLS = ("start_episode", "get_action", "log_action", "log_returns", "end_episode")


def _event_list(message: dict[str, Any]) -> list[Any]:
    events = message["events"]
    if not isinstance(events, list):
        raise ProtocolError("bad_message", "log_batch's events must be a list")
    if any(isinstance(e, dict) and e.get("type") == "get_action" for e in events):
        raise ProtocolError("bad_message", "log_batch cannot hold get_action (it needs a reply)")
    return events
