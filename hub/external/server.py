"""``PolicyServer``: an :class:`~hub.external.ExternalEnv` served over TCP (or TLS) to simulators.

One thread runs an asyncio event loop that serves every connection (:mod:`hub.external.peer`):
no thread per connection, so idle or hostile peers cost a few kilobytes each, never a thread.
Everything is bounded: the number of connections, the time to authenticate and to send each
frame, the size of any message (and a much smaller one before authentication), the calls a
connection may queue for the learner, the memory of ended episode ids. The accept loop never
ends on an error (it logs it and backs off), and every refused peer gets a log line on the
``hub.external.server`` logger.

A client's calls run the env's simulator methods without blocking the loop: a ``get_action``
posts the observation and awaits a future that the learner's thread resolves when its step
hands out the action.

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

import asyncio
import concurrent.futures
import logging
import socket
import threading
import time
from typing import Any

from hub.errors import HubError
from hub.external.auth import AuthGate, check_serving, server_tls_context
from hub.external.env import ExternalEnv
from hub.external.framing import FrameConnection
from hub.external.peer import Mailbox, Peer
from hub.external.protocol import DEFAULT_MAX_MESSAGE_BYTES
from hub.external.spec_wire import describe_composite, describe_leaf

__all__ = ["PolicyServer", "log"]

log = logging.getLogger("hub.external.server")

#: the most transitions one log_transitions message may carry (announced as bulk_rows)
BULK_ROWS = 4096
#: file descriptors kept free for everything else when max_connections is derived
FD_RESERVE = 64
ACCEPT_BACKLOG = 1024
#: how often deadlines are checked (seconds) at most: a fifth of the shortest deadline
REAP_S = 0.5


class PolicyServer:
    """Serve ``env`` (an ExternalEnv, or a TransformedEnv over one) to PolicyClients.

    Args:
        env: the env the learner steps.
        host: the address to bind (loopback unless told otherwise).
        port: the port (0: a free one; see :attr:`address`).
        token: the shared secret every client sends in its ``hello`` (not empty); required
            beyond loopback.
        policy: for clients with ``inference="local"``: a ``torch.nn.Sequential`` of ``Linear``,
            ``ReLU`` and ``Tanh`` layers whose weights they fetch (as safetensors).
        max_message_bytes: the size limit of every message after the ``hello``, both ways.
        client_timeout: seconds a frame may take to arrive once begun; seconds of silence
            after which a client with a running episode counts as gone; how long a message
            waits for room behind the learner (``log_batch``, ``log_transitions``).
        local_view: which learner view the local-inference clients feed: ``"step"`` (they send
            their calls as ``log_batch`` and the learner steps them like any episode) or
            ``"bulk"`` (they send columns of transitions, ``log_transitions``, which the learner
            reads with ``env.take_transitions()``; the step view never sees them).
        tls_cert, tls_key: PEM files: serve TLS (required beyond loopback unless
            ``plaintext_ok``).
        plaintext_ok: serve beyond loopback without TLS (behind a TLS tunnel, or on a network
            you trust).
        max_connections: connections at once (default: what the process's file-descriptor
            limit allows, less 64); one more is refused with a ``busy`` error.
        handshake_timeout: seconds a new connection has to authenticate (TLS handshake and
            ``hello``).
        idle_timeout: seconds an authenticated client without a running episode may stay
            silent (``None``: no bound).
        action_timeout: seconds a ``get_action`` waits for the learner (default: the env's).
        auth_gate: the pacing of token checks after failures (default
            :class:`~hub.external.auth.AuthGate`: after 5 failures from one address, one check
            every 0.5 s).
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
        tls_cert: str | None = None,
        tls_key: str | None = None,
        plaintext_ok: bool = False,
        max_connections: int | None = None,
        handshake_timeout: float = 10.0,
        idle_timeout: float | None = 600.0,
        action_timeout: float | None = None,
        auth_gate: AuthGate | None = None,
    ) -> None:
        if local_view not in ("step", "bulk"):
            raise HubError(f"local_view must be 'step' or 'bulk', got {local_view!r}")
        base = getattr(env, "base_env", env)
        if not isinstance(base, ExternalEnv):
            raise HubError(
                f"PolicyServer serves an ExternalEnv, got {type(env).__name__}. Build one with "
                "hub.external.ExternalEnv(observation_spec, action_spec)."
            )
        if (tls_cert is None) != (tls_key is None):
            raise HubError("TLS needs both tls_cert and tls_key (PEM files).")
        check_serving(host, token, tls_cert is not None, plaintext_ok)
        if not isinstance(port, int) or not 0 <= port <= 65535:
            raise HubError(f"port must be an integer from 0 to 65535, got {port!r}")
        if policy is not None:  # refuse a policy the clients cannot run now, not at a fetch
            from hub.external.weights import export_policy

            export_policy(policy)
        self.env = base
        self.token = token
        self.policy = policy
        self.max_message_bytes = int(max_message_bytes)
        self.client_timeout = client_timeout
        self.handshake_timeout = handshake_timeout
        self.idle_timeout = idle_timeout
        self.action_timeout = base.action_timeout if action_timeout is None else action_timeout
        self.max_connections = (
            _default_max_connections() if max_connections is None else max_connections
        )
        self.tls = None if tls_cert is None else server_tls_context(tls_cert, tls_key)
        self.auth_gate = AuthGate() if auth_gate is None else auth_gate
        self.welcome = {
            "observation_spec": describe_composite(base.episode_observation_spec),
            "action_spec": describe_leaf(base.episode_action_spec),
            "reward_spec": describe_leaf(base.episode_reward_spec),
            "max_message_bytes": self.max_message_bytes,
            "weights": policy is not None,
            "bulk_rows": BULK_ROWS if local_view == "bulk" else 0,
        }
        self.peers: set[Peer] = set()
        self._tasks: set[asyncio.Task] = set()
        self._listener = _listen(host, port)
        self.address: tuple[str, int] = self._listener.getsockname()[:2]
        self._closed = False
        self._loop = asyncio.new_event_loop()
        self._loop.set_exception_handler(_loop_error)
        started: concurrent.futures.Future = concurrent.futures.Future()
        self._thread = threading.Thread(
            target=self._run,
            args=(started,),
            name=f"hub-policy-server-{self.address[1]}",
            daemon=True,
        )
        self._thread.start()
        started.result()  # re-raises a failure to start serving

    # ------------------------------------------------------------------ the loop's thread
    def _run(self, started: concurrent.futures.Future) -> None:
        loop = self._loop
        asyncio.set_event_loop(loop)
        try:
            self._server = loop.run_until_complete(self._start())
        except BaseException as err:
            started.set_exception(err)
            loop.close()
            return
        started.set_result(None)
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _start(self) -> asyncio.AbstractServer:
        self.mailbox = Mailbox(asyncio.get_running_loop())
        self._reaper = asyncio.get_running_loop().create_task(self._reap())
        return await asyncio.get_running_loop().create_server(
            lambda: FrameConnection(self._opened, paused=self.tls is not None),
            sock=self._listener,
            backlog=ACCEPT_BACKLOG,
        )

    def _opened(self, conn: FrameConnection) -> None:
        """A connection was accepted: refuse it (over ``max_connections``) or serve it."""
        peer = Peer(self, conn)
        if len(self.peers) >= self.max_connections:
            peer.refuse_busy()
            return
        self.peers.add(peer)
        task = asyncio.get_running_loop().create_task(peer.run())
        self._tasks.add(task)
        task.add_done_callback(lambda done: self._ended(peer, done))

    async def _reap(self) -> None:
        """Close the connections whose deadline passed, a few times a second."""
        timeouts = [self.handshake_timeout, self.client_timeout, self.idle_timeout or REAP_S * 5]
        pause = max(0.01, min(REAP_S, min(timeouts) / 5))
        while True:
            await asyncio.sleep(pause)
            now = time.monotonic()
            for peer in list(self.peers):
                peer.check_deadlines(now)

    def _ended(self, peer: Peer, task: asyncio.Task) -> None:
        self.peers.discard(peer)
        self._tasks.discard(task)

    # ------------------------------------------------------------------ any thread
    @property
    def connection_count(self) -> int:
        """The clients connected now (authenticated or not)."""
        return len(self.peers)

    def close(self) -> None:
        """Stop accepting, end every client's episodes as truncated, close every connection and
        wait for the server's thread. Calling it again does nothing."""
        if self._closed:
            return
        self._closed = True
        if self._loop.is_running():
            future = asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop)
            future.result()
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._listener.close()

    async def _shutdown(self) -> None:
        self._server.close()
        self._reaper.cancel()
        peers = list(self.peers)
        for peer in peers:
            peer.stop()
        tasks = list(self._tasks)
        if tasks:
            await asyncio.wait(tasks, timeout=5.0)
        for task in tasks:
            task.cancel()

    def __enter__(self) -> PolicyServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (IPv4 or IPv6), or a HubError that says why not."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        return socket.create_server((host, port), family=family, backlog=ACCEPT_BACKLOG)
    except (OSError, OverflowError) as err:
        raise HubError(f"cannot listen on {host}:{port} ({err}).") from None


def _default_max_connections() -> int:
    try:
        import resource
    except ImportError:  # not a Unix: no descriptor limit to read
        return 1024
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = 1 << 20
    return max(16, min(soft - FD_RESERVE, 1 << 20))


_last_accept_error = [0.0]


def _loop_error(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The event loop's errors in the server's log; ``accept()`` out of descriptors is retried
    by the loop after a second (it never stops accepting), and logged at most once a second."""
    error = context.get("exception")
    message = context.get("message", "")
    if "accept" in message:
        now = time.monotonic()
        if now - _last_accept_error[0] < 1.0:
            return
        _last_accept_error[0] = now
        log.warning(
            "cannot accept a connection (%s: %s); accepting again in 1 s. Raise the process's "
            "file-descriptor limit (ulimit -n) or lower max_connections.",
            message,
            error,
        )
    else:
        log.error("PolicyServer's event loop: %s", message, exc_info=error)
