"""Who may talk to a :class:`~hub.external.PolicyServer`: tokens, loopback, TLS, and the slowing
down of peers that guess tokens.

- :func:`check_serving` refuses a configuration that exposes the server: an empty token, no
  token beyond loopback, no TLS beyond loopback (unless plaintext is asked for by name).
- :class:`AuthGate` slows down token guessing per peer address: after ``free_failures`` failed
  attempts, the peer's next attempts are checked one at a time, ``delay`` seconds apart, until
  one succeeds or the peer stays quiet for ``forget_s`` seconds.
- :func:`server_tls_context` / :func:`client_tls_context` build the ``ssl`` contexts (TLS 1.2 or
  newer; the client verifies the server's certificate and name).

Example:
    >>> is_loopback("127.0.0.1"), is_loopback("0.0.0.0"), is_loopback("localhost")
    (True, False, True)
    >>> gate = AuthGate(free_failures=1, delay=0.5)
    >>> gate.slot("10.0.0.1", now=0.0)
    0.0
    >>> gate.failed("10.0.0.1", now=0.0)
    >>> gate.slot("10.0.0.1", now=0.0), gate.slot("10.0.0.1", now=0.0)
    (0.5, 1.0)
"""

from __future__ import annotations

import ipaddress
import ssl
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from hub.errors import HubError

__all__ = [
    "is_loopback",
    "check_serving",
    "AuthGate",
    "server_tls_context",
    "client_tls_context",
]


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (``localhost``, ``127.0.0.0/8``, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_serving(host: str, token: str | None, tls: bool, plaintext_ok: bool) -> None:
    """Raise :class:`~hub.errors.HubError` for a configuration that would serve unprotected."""
    if token is not None and not token.strip():
        raise HubError(
            "the token is empty: an empty token protects nothing. Give a long random secret "
            '(python -c "import secrets; print(secrets.token_urlsafe(32))"), or no token on '
            "loopback."
        )
    if is_loopback(host):
        return
    if token is None:
        raise HubError(
            f"PolicyServer binds to {host!r}, beyond loopback: pass token=... (a shared secret "
            "the clients send; hub serve --token), or bind to 127.0.0.1."
        )
    if not tls and not plaintext_ok:
        raise HubError(
            f"PolicyServer binds to {host!r}, beyond loopback, without TLS: the token and all "
            "data would travel in clear text. Pass tls_cert= and tls_key= (hub serve --tls-cert "
            "--tls-key), or plaintext_ok=True (--plaintext) behind a TLS tunnel or on a network "
            "you trust."
        )


@dataclass
class _Peer:
    failures: int = 0
    next_slot: float = 0.0
    last: float = 0.0


class AuthGate:
    """Per-peer pacing of token checks after failures (not thread-safe: one event loop)."""

    def __init__(
        self,
        free_failures: int = 5,
        delay: float = 0.5,
        forget_s: float = 600.0,
        max_peers: int = 65536,
    ) -> None:
        self.free_failures = free_failures
        self.delay = delay
        self.forget_s = forget_s
        self.max_peers = max_peers
        self._peers: OrderedDict[str, _Peer] = OrderedDict()

    def slot(self, peer: str, now: float) -> float:
        """When a token from ``peer`` may be checked (``now`` when it is not slowed down); each
        call takes the next slot of a slowed peer."""
        state = self._peers.get(peer)
        if state is None:
            return now
        if now - state.last > self.forget_s:
            del self._peers[peer]
            return now
        if state.failures < self.free_failures:
            return now
        when = max(now, state.next_slot)
        state.next_slot = when + self.delay
        return when

    def failed(self, peer: str, now: float) -> None:
        """Count a failed attempt of ``peer``."""
        state = self._peers.pop(peer, None) or _Peer()
        state.failures += 1
        state.last = now
        if state.failures >= self.free_failures:
            state.next_slot = max(state.next_slot, now + self.delay)
        self._peers[peer] = state  # most recent last
        while len(self._peers) > self.max_peers:
            self._peers.popitem(last=False)

    def succeeded(self, peer: str) -> None:
        """``peer`` gave the right token: its failures are forgotten."""
        self._peers.pop(peer, None)

    def failures(self, peer: str) -> int:
        state = self._peers.get(peer)
        return 0 if state is None else state.failures


def server_tls_context(cert: str, key: str) -> ssl.SSLContext:
    """A server context for ``cert`` (PEM, the chain) and ``key`` (PEM), TLS 1.2 or newer."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as err:
        raise HubError(
            f"cannot load the TLS certificate {cert!r} with the key {key!r} ({err}); give PEM "
            "files (e.g. openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
            "-nodes -keyout key.pem -out cert.pem -subj /CN=myhost)."
        ) from None
    return context


def client_tls_context(tls: Any) -> ssl.SSLContext | None:
    """The client's context for its ``tls`` option: ``None``/``False`` (plain TCP), ``True``
    (verify against the system's certificate authorities), a path (a PEM file of the
    authorities or the server's own certificate to trust), or an ``ssl.SSLContext``."""
    if tls is None or tls is False:
        return None
    if isinstance(tls, ssl.SSLContext):
        return tls
    try:
        context = ssl.create_default_context(cafile=None if tls is True else str(tls))
    except (OSError, ssl.SSLError) as err:
        raise HubError(f"cannot load the TLS authorities from {tls!r} ({err})") from None
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context
