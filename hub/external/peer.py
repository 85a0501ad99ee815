"""One connection of a :class:`~hub.external.PolicyServer`: a coroutine on the server's loop.

A :class:`Peer` authenticates the client at the other end (TLS, then a ``hello`` of at most ``HELLO_MAX_BYTES`` within
``handshake_timeout``), then answers one message at a time over its
:class:`~hub.external.framing.FrameConnection` (answers to pipelined requests leave together). Every read has a deadline (a
:class:`Deadline`; the server closes the connection when it passes): the handshake's; ``client_timeout`` for
the rest of a frame once its header came, and for the silence of a client whose episode runs;
``idle_timeout`` for the silence of any other client. Messages are checked before they touch the
env (size, version, fields, arrays against the specs); a message that breaks the protocol gets
an ``error`` and the connection is closed, with a log line naming the peer.

Example:
    >>> Deadline.describe(5.0, "hello")
    'no complete hello within 5 s'
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import socket
import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Any

import numpy as np

from hub.errors import ClosedEnvError, SpecMismatchError
from hub.external.episodes import (
    EpisodeError,
    ExternalEnvFullError,
    LearnerGoneError,
)
from hub.external.protocol import (
    DEFAULT_LIMITS,
    HEADER,
    HELLO_LIMITS,
    HELLO_MAX_BYTES,
    ProtocolError,
    check_fields,
    decode_body,
    encode_array,
    encode_message,
)
from hub.external.spec_wire import check_array, check_transitions

if TYPE_CHECKING:
    from hub.external.framing import FrameConnection
    from hub.external.server import PolicyServer

__all__ = ["Peer", "Deadline"]

log = logging.getLogger("hub.external.server")

#: calls of one connection that may wait behind the learner (log_batch waits for room first)
QUEUE_LIMIT = 256
#: the most calls one log_batch may hold
MAX_BATCH_EVENTS = 256
_CALLS = ("start_episode", "get_action", "log_action", "log_returns", "end_episode")
_POSTS = ("log_action", "end_episode")  # calls that queue an item for the learner


class Deadline:
    """When a peer's current read (or write) must be over; the server's reaper
    (:meth:`PolicyServer._reap`) closes the connection of a deadline that passed. Arming costs two
    attribute writes: no timer per read."""

    __slots__ = ("at", "what", "reason")

    def __init__(self) -> None:
        self.at: float | None = None
        self.what = ""
        self.reason: str | None = None

    def arm(self, seconds: float | None, what: str) -> None:
        self.at = None if seconds is None else time.monotonic() + seconds
        self.what = what

    def disarm(self) -> None:
        self.at = None

    def passed(self, now: float) -> bool:
        return self.at is not None and now > self.at

    @staticmethod
    def describe(seconds: float | None, what: str) -> str:
        return f"no complete {what} within {seconds:g} s"


class Peer:
    """One client connection, from its first byte to its close."""

    def __init__(self, server: PolicyServer, conn: FrameConnection) -> None:
        self.server = server
        self.env = server.env
        self.conn = conn
        transport = conn.transport
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # answers leave at once
        peer = transport.get_extra_info("peername")
        self.peer_host = str(peer[0]) if peer else "?"
        self.peer = f"{peer[0]}:{peer[1]}" if peer else "?"
        self.episodes: set[str] = set()  # step-view episodes this connection started
        self.bulk_episodes: set[str] = set()  # bulk-view episodes running for it
        self.authenticated = False
        self.stopping = False
        self.deadline = Deadline()
        self.action: asyncio.Future | None = None  # the action awaited now
        self.action_at = 0.0  # when it is overdue

    # ------------------------------------------------------------------ life
    def refuse_busy(self) -> None:
        """Refuse the connection at once: the server holds ``max_connections`` already."""
        log.warning(
            "refused %s: %d connections are open, the maximum (max_connections)",
            self.peer,
            self.server.max_connections,
        )
        self._send_now(
            "error",
            code="busy",
            message=f"the PolicyServer holds its maximum of {self.server.max_connections} "
            "connections; try again later",
        )
        self.conn.close(linger=1.0)

    def stop(self) -> None:
        """End this client's episodes and close its connection (the server is closing)."""
        self.stopping = True
        for episode_id in list(self.episodes):
            self.env.truncate_episode(episode_id)
        self.conn.abort()

    def check_deadlines(self, now: float) -> None:
        """Close the connection if its deadline passed; fail an action awaited too long (the
        server's reaper calls this a few times a second)."""
        deadline = self.deadline
        if deadline.passed(now):
            deadline.at, deadline.reason = None, deadline.what
            self._send_now(
                "error", code="timeout", message=f"the PolicyServer closed: {deadline.what}"
            )
            self.conn.abort()
        action = self.action
        if action is not None and now > self.action_at and not action.done():
            action.set_exception(asyncio.TimeoutError())

    async def run(self) -> None:
        try:
            await self._handshake()
            while await self._serve_one():
                pass
        except ProtocolError as err:
            self._refused(err.code, str(err))
        except ClosedEnvError as err:
            self._refused("closed", str(err))
        except (ConnectionError, OSError) as err:
            if self.deadline.reason is not None:
                log.warning("closed %s: %s", self.peer, self.deadline.reason)
            elif not self.authenticated and not self.stopping:
                log.warning("closed %s before it authenticated (%s)", self.peer, _describe(err))
        except asyncio.CancelledError:
            raise
        except Exception as err:  # a bug: tell the client, keep the traceback in the log
            log.exception("PolicyServer failed on a message of %s", self.peer)
            self._send_now("error", code="internal", message=f"the server failed: {err!r:.200}")
        finally:
            self.deadline.disarm()
            for episode_id in list(self.episodes):
                self.env.truncate_episode(episode_id)
            self.env.truncate_transition_episodes(self.bulk_episodes)
            if self.deadline.reason is not None or self.stopping:
                self.conn.abort()
            else:
                self.conn.close(linger=self.server.client_timeout)

    def _refused(self, code: str, message: str) -> None:
        """Log why the peer is refused, send it the error (the connection then closes)."""
        who = self.peer if self.authenticated else f"{self.peer} (not authenticated)"
        log.warning("refused %s: %s: %s", who, code, message)
        self._send_now("error", code=code, message=message)

    def _send_now(self, kind: str, **fields: Any) -> None:
        """Write a message without waiting for the peer to read it (best effort)."""
        try:
            self.conn.send_now(encode_message(kind, **fields))
        except (OSError, RuntimeError):
            pass

    def _send(self, kind: str, **fields: Any) -> None:
        """Queue an answer: it leaves with the others when the peer's coroutine next waits for input."""
        self.conn.send(encode_message(kind, **fields))

    async def _flush(self) -> None:
        self.deadline.arm(self.server.client_timeout, "the client did not read its answers")
        await self.conn.flush()
        self.deadline.disarm()

    async def _read(self, max_bytes: int, limits: Any, wait_s: float | None, what: str):
        """The next message: its header within ``wait_s``, its body within ``client_timeout``
        (the queued answers leave first when no whole frame is buffered)."""
        conn = self.conn
        if not conn.frame_ready():
            await self._flush()
        self.deadline.arm(wait_s, what)
        size = await conn.read_header(max_bytes)
        if self.authenticated:
            timeout = self.server.client_timeout
            self.deadline.arm(timeout, f"the client sent part of a frame and stalled {timeout:g} s")
        body = await conn.read_body(size)
        self.deadline.disarm()
        return decode_body(body, limits)

    # ------------------------------------------------------------------ handshake
    async def _handshake(self) -> None:
        server = self.server
        timeout = server.handshake_timeout
        started = time.monotonic()
        self.conn.limit(HELLO_MAX_BYTES + HEADER.size)
        if server.tls is not None:
            await self._start_tls(timeout)
        left = timeout - (time.monotonic() - started)
        message = await self._read(
            HELLO_MAX_BYTES, HELLO_LIMITS, left, Deadline.describe(timeout, "hello")
        )
        if message["type"] != "hello":
            raise ProtocolError("bad_message", "the first message must be 'hello'")
        check_fields(message)
        if server.token is not None:
            await self._check_token(message.get("token"), started + timeout)
        self.authenticated = True
        self._send("welcome", **server.welcome)

    async def _start_tls(self, timeout: float) -> None:
        """The TLS handshake (the first thing a peer does: no byte was read in clear)."""
        conn, loop = self.conn, asyncio.get_running_loop()
        if conn.buffered:
            raise ProtocolError("unauthorized", "the client spoke before the TLS handshake")
        try:  # awaited directly: it takes over the transport before any byte is read
            conn.transport = await loop.start_tls(
                conn.transport, conn, self.server.tls, server_side=True,
                ssl_handshake_timeout=timeout,
            )  # fmt: skip
        except (OSError, ConnectionError, asyncio.TimeoutError) as err:
            raise ProtocolError(
                "unauthorized", f"TLS handshake failed ({_describe(err)})"
            ) from None

    async def _check_token(self, token: Any, deadline: float) -> None:
        """Compare the token (in constant time), after the pause the peer's failures earned."""
        gate, loop = self.server.auth_gate, asyncio.get_running_loop()
        now = loop.time()
        slot = gate.slot(self.peer_host, now)
        wait = slot - now
        if wait > 0:
            if time.monotonic() + wait > deadline:
                raise ProtocolError(
                    "unauthorized",
                    f"too many failed attempts from {self.peer_host}; the next token is checked "
                    f"in {wait:.1f} s",
                )
            self.deadline.disarm()
            await asyncio.sleep(wait)
        expected = self.server.token.encode()
        if not (isinstance(token, str) and hmac.compare_digest(token.encode(), expected)):
            gate.failed(self.peer_host, loop.time())
            raise ProtocolError(
                "unauthorized",
                f"wrong or missing token; the server refused it (failure "
                f"{gate.failures(self.peer_host)} from {self.peer_host})",
            )
        gate.succeeded(self.peer_host)

    # ------------------------------------------------------------------ messages
    async def _serve_one(self) -> bool:
        server = self.server
        running = self.episodes or self.bulk_episodes
        wait_s = server.client_timeout if running else server.idle_timeout
        what = (
            f"the client stopped answering for {wait_s:g} s while its episodes run"
            if running
            else f"the client stayed idle for {wait_s} s"
        )
        message = await self._read(server.max_message_bytes, DEFAULT_LIMITS, wait_s, what)
        check_fields(message)
        kind = message["type"]
        if kind == "bye":
            return False
        if kind == "get_weights":
            await self._send_weights()
        elif kind == "log_transitions":
            await self._log_transitions(message)
        elif kind == "log_batch":
            await self._log_batch(message)
        elif kind in _CALLS:
            await self._call(self._check_call(message), reply=True)
        else:
            raise ProtocolError("bad_message", f"a client does not send {kind!r}")
        return True

    def _check_call(self, message: Any, started: set[str] | None = None) -> dict[str, Any]:
        """Decode and check the arrays of one simulator call, and its episode's owner
        (``started``: the ids a batch starts before this call)."""
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
            out["observation"] = self._check_observation(message["observation"])
        if "action" in message:
            out["action"] = check_array(
                message["action"], self.server.welcome["action_spec"], "action"
            )
        return out

    def _check_observation(self, value: Any) -> dict[str, np.ndarray]:
        specs = self.server.welcome["observation_spec"]
        if not isinstance(value, dict) or sorted(value) != sorted(specs):
            raise ProtocolError(
                "spec_mismatch", f"the observation must be a map with the keys {sorted(specs)}"
            )
        return {key: check_array(value[key], specs[key], key) for key in specs}

    async def _call(self, call: dict[str, Any], reply: bool) -> None:
        """Run one simulator call on the env; errors that keep the connection open are sent
        (``reply``) or raised (in a batch, which then fails as a whole)."""
        try:
            await self._run_call(call, reply)
        except SpecMismatchError as err:
            raise ProtocolError("spec_mismatch", str(err)) from None
        except (ExternalEnvFullError, EpisodeError, LearnerGoneError) as err:
            code = {ExternalEnvFullError: "full", LearnerGoneError: "no_learner"}.get(
                type(err), "episode"
            )
            if not reply:
                raise ProtocolError(code, str(err)) from None
            self._send("error", code=code, message=str(err))

    async def _run_call(self, call: dict[str, Any], reply: bool) -> None:
        kind, env = call["type"], self.env
        if call.get("unknown"):
            message = (
                f"episode {call['episode_id']!r} was not started on this connection (the server "
                "may have restarted): start a new episode"
            )
            if not reply:
                raise ProtocolError("unknown_episode", message)
            self._send("error", code="unknown_episode", message=message)
            return
        if kind == "start_episode":
            episode_id = env.start_episode(call["episode_id"], bool(call["training_enabled"]))
            self.episodes.add(episode_id)
            if reply:
                self._send("episode_started", episode_id=episode_id)
            return
        episode_id = call["episode_id"]
        if kind in ("get_action", "log_action"):
            action = call.get("action")
            if not reply:  # a batch's log_action: queued, no wait
                env.post_observation(episode_id, call["observation"], action)
                return
            taken = await self._wait_action(episode_id, call["observation"], action)
            if kind == "get_action":
                dtype = self.server.welcome["action_spec"]["dtype"]
                self._send("action", action=encode_array(taken.cpu().numpy(), dtype))
                return
        elif kind == "log_returns":
            info = call["info"] if isinstance(call.get("info"), dict) else None
            env.log_returns(episode_id, call["reward"], info)
        elif kind == "end_episode":
            self.episodes.discard(episode_id)
            env.end_episode(episode_id, call["observation"], bool(call["truncated"]))
        if reply:
            self._send("ok")

    async def _wait_action(self, episode_id: str, observation: Any, action: Any) -> Any:
        """Post the observation and await the learner's action (resolved from its thread)."""
        waiter = _FutureWaiter(self.server.mailbox)
        self.env.post_observation(episode_id, observation, action, waiter)
        self.action, self.action_at = waiter.future, time.monotonic() + self.server.action_timeout
        try:
            return await waiter.future
        except asyncio.TimeoutError:
            self.env.forget_waiter(episode_id, waiter)
            raise LearnerGoneError(
                f"episode {episode_id!r} waited {self.server.action_timeout:g} s for an action "
                "and got none: is the learner stepping the env?"
            ) from None
        finally:
            self.action = None

    async def _log_batch(self, message: dict[str, Any]) -> None:
        """Check a whole batch of calls, wait for room behind the learner, then queue it."""
        events = message["events"]
        if len(events) > MAX_BATCH_EVENTS:
            raise ProtocolError(
                "too_large", f"log_batch holds {len(events)} calls; at most {MAX_BATCH_EVENTS}"
            )
        started: set[str] = set()
        calls = [self._check_call(event, started) for event in events]
        if any(call["type"] == "get_action" for call in calls):
            raise ProtocolError(
                "bad_message", "log_batch cannot hold get_action (it needs a reply)"
            )
        posts = sum(call["type"] in _POSTS for call in calls)
        room = await self._wait_until(lambda: self.env.queued(self.episodes) + posts <= QUEUE_LIMIT)
        if not room:
            self._send(
                "error",
                code="backlog",
                message=f"the learner has not taken this connection's queued calls in "
                f"{self.server.client_timeout:g} s (at most {QUEUE_LIMIT} may wait); the batch "
                "was not taken: send it again later",
            )
            return
        for call in calls:
            await self._call(call, reply=False)
        self._send("ok")

    async def _log_transitions(self, message: dict[str, Any]) -> None:
        """Check a batch of transition columns once and queue it for the bulk view."""
        welcome = self.server.welcome
        if not welcome["bulk_rows"]:
            raise ProtocolError(
                "bad_message",
                "this server takes no log_transitions (its welcome said bulk_rows 0): send "
                "log_batch, or serve with PolicyServer(..., local_view='bulk')",
            )
        columns = check_transitions(message, welcome)
        bulk = self.env.bulk
        try:
            batch = bulk.prepare(**columns)
        except SpecMismatchError as err:
            raise ProtocolError("spec_mismatch", str(err)) from None
        error = None

        def put() -> bool:
            nonlocal error
            try:
                bulk.put(batch, owner=self, timeout=0)
            except TimeoutError:
                return False
            except (EpisodeError, ExternalEnvFullError) as err:
                error = err
            return True

        if not await self._wait_until(put):
            self._send(
                "error",
                code="backlog",
                message=f"the learner has not taken the queued transitions in "
                f"{self.server.client_timeout:g} s: is it calling take_transitions()? The batch "
                "was dropped",
            )
            return
        if error is not None:
            code = "full" if isinstance(error, ExternalEnvFullError) else "episode"
            self._send("error", code=code, message=str(error))
            return
        ended = columns["terminated"] | columns["truncated"]
        for episode_id, end in zip(columns["episode_ids"], ended.tolist(), strict=True):
            if end:
                self.bulk_episodes.discard(episode_id)
            else:
                self.bulk_episodes.add(episode_id)
        self._send("ok")

    async def _wait_until(self, ready: Any) -> bool:
        """Call ``ready()`` until it is true, backing off from 1 to 20 ms, for at most
        ``client_timeout`` seconds; whether it became true."""
        deadline = time.monotonic() + self.server.client_timeout
        pause = 0.001
        while not ready():
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.02)
        return True

    async def _send_weights(self) -> None:
        policy = self.server.policy
        if policy is None:
            self._send(
                "error",
                code="no_weights",
                message="this server has no policy for local inference (PolicyServer(policy=...))",
            )
            return
        from hub.external.weights import export_policy

        version, layers, data = export_policy(policy)
        self._send("weights", version=version, layers=layers, data=data)


class Mailbox:
    """Settles futures of one event loop from the learner's thread, waking the loop once for
    all the actions one step hands out (not once per action)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._items: deque[tuple[asyncio.Future, Any, BaseException | None]] = deque()
        self._lock = threading.Lock()
        self._scheduled = False

    def post(self, future: asyncio.Future, action: Any, error: BaseException | None) -> None:
        with self._lock:
            self._items.append((future, action, error))
            if self._scheduled:
                return
            self._scheduled = True
        try:
            self.loop.call_soon_threadsafe(self._drain)
        except RuntimeError:  # the loop is closed: nobody waits any more
            pass

    def _drain(self) -> None:
        with self._lock:
            items = list(self._items)
            self._items.clear()
            self._scheduled = False
        for future, action, error in items:
            if future.done():
                continue
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(action)


class _FutureWaiter:
    """A board waiter whose action settles a future of the server's loop."""

    __slots__ = ("mailbox", "future")

    def __init__(self, mailbox: Mailbox) -> None:
        self.mailbox = mailbox
        self.future: asyncio.Future = mailbox.loop.create_future()

    def resolve(self, action: Any) -> None:
        self.mailbox.post(self.future, action, None)

    def fail(self, error: BaseException) -> None:
        self.mailbox.post(self.future, None, error)


def _describe(err: BaseException) -> str:
    return f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
