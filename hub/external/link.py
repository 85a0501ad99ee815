"""One authenticated connection from a client to a :class:`~hub.external.PolicyServer`.

:class:`Link` opens the TCP (or TLS) connection, says ``hello``, checks the ``welcome`` and then
exchanges messages: several requests may go out in one write, and each answer is read and
checked in turn (its type, its fields, an ``error``'s code). numpy and msgpack only.

Example:
    >>> Link.open(("127.0.0.1", 1), None, 1.0, 1 << 20, None, None, reconnect_s=0)
    Traceback (most recent call last):
    ...
    hub.external.protocol.ProtocolError: cannot reach the PolicyServer at 127.0.0.1:1 ...
"""

from __future__ import annotations

import socket
import ssl
import time
from typing import Any

from hub.external.protocol import (
    ERROR_CODES,
    MESSAGES,
    ProtocolError,
    check_fields,
    encode_message,
    recv_message,
)
from hub.external.wire_specs import check_welcome

__all__ = ["Link"]


class Link:
    """A connection that said ``hello`` and got a checked ``welcome`` (:attr:`welcome`,
    :attr:`specs`)."""

    def __init__(self, sock: socket.socket, max_message_bytes: int, timeout: float) -> None:
        self.sock: socket.socket | None = sock
        self.max_message_bytes = max_message_bytes
        self.timeout = timeout
        self.welcome: dict[str, Any] = {}
        self.specs: dict[str, Any] = {}

    @classmethod
    def open(
        cls,
        address: tuple[str, int],
        token: str | None,
        timeout: float,
        max_message_bytes: int,
        tls: ssl.SSLContext | None,
        server_name: str | None,
        reconnect_s: float = 5.0,
    ) -> Link:
        """Connect (trying again for up to ``reconnect_s`` seconds), authenticate and read the
        server's specs."""
        where = f"{address[0]}:{address[1]}"
        deadline = time.monotonic() + reconnect_s
        while True:
            try:
                sock = socket.create_connection(address, timeout=min(timeout, 5.0))
                break
            except OSError as err:
                if time.monotonic() >= deadline:
                    raise ProtocolError(
                        "connection",
                        f"cannot reach the PolicyServer at {where} ({err}); is it running there?",
                    ) from None
                time.sleep(0.05)
        if tls is not None:
            try:
                sock = tls.wrap_socket(sock, server_hostname=server_name or address[0])
            except (ssl.SSLError, OSError) as err:
                sock.close()
                raise ProtocolError(
                    "connection",
                    f"the TLS handshake with the PolicyServer at {where} failed ({err}); does it "
                    "serve TLS, and does the certificate you trust (tls=...) sign it for the name "
                    f"{server_name or address[0]!r}?",
                ) from None
        sock.settimeout(timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        link = cls(sock, max_message_bytes, timeout)
        hello = {"token": token, "client": "hub.external.PolicyClient"}
        try:
            link.welcome = link.exchange([("hello", hello)], "welcome")
            link.specs = check_welcome(link.welcome)
        except BaseException:
            link.close()
            raise
        return link

    def exchange(self, messages: list[tuple[str, dict[str, Any]]], expect: str) -> dict[str, Any]:
        """Send ``messages`` in one write and read one answer to each; every answer but the
        last must be ``ok``; the last one's type is ``expect``. Raises ``ProtocolError`` for an
        ``error`` answer (after reading the answers still due, or dropping the link when the
        error closes the connection) or a reply that breaks the protocol, ``ConnectionError``
        when the connection broke."""
        if self.sock is None:
            raise ConnectionError("the connection to the PolicyServer is closed")
        kinds = [kind for kind, _ in messages]
        refused: ProtocolError | None = None
        try:
            self.sock.sendall(b"".join(encode_message(kind, **f) for kind, f in messages))
            for position, kind in enumerate(kinds):
                reply = self._receive(kind)
                last = position == len(kinds) - 1
                error = self._check(reply, kind, expect if last else "ok")
                if error is not None and refused is None:
                    refused = error
        except TimeoutError:
            self.close()
            raise ProtocolError(
                "connection",
                f"the PolicyServer sent no answer to {kinds[-1]!r} in {self.timeout} s",
            ) from None
        except ProtocolError:
            raise
        except OSError:
            self.close()
            raise ConnectionError(
                f"the connection to the PolicyServer broke during {kinds[-1]!r}"
            ) from None
        if refused is not None:
            raise refused
        return reply

    def _receive(self, kind: str) -> dict[str, Any]:
        try:
            return recv_message(self.sock, self.max_message_bytes)
        except ProtocolError as err:
            self.close()
            raise ProtocolError(
                "bad_message", f"the PolicyServer's answer to {kind!r}: {err}"
            ) from None

    def _check(self, reply: dict[str, Any], kind: str, expect: str) -> ProtocolError | None:
        """The error a reply carries (raised at once when it closes the connection), or
        ``None``; a reply that breaks the protocol raises ``bad_message``."""
        try:
            check_fields(reply)
        except ProtocolError as err:
            self.close()
            raise ProtocolError("bad_message", f"the PolicyServer's answer: {err}") from None
        got = reply["type"]
        if got == "error":
            code = reply["code"]
            error = ProtocolError(code, f"the PolicyServer refused {kind!r}: {reply['message']}")
            # a failed call of a log_batch closes the connection, as does any closing code
            if ERROR_CODES.get(code, True) or (kind == "log_batch" and code != "backlog"):
                self.close()
                raise error
            return error
        if got != expect or MESSAGES[got][0] != "s->c":
            self.close()
            raise ProtocolError(
                "bad_message", f"the PolicyServer answered {kind!r} with {got!r}, not {expect!r}"
            )
        return None

    def send(self, kind: str, **fields: Any) -> None:
        """Send one message that gets no answer (``bye``)."""
        if self.sock is not None:
            self.sock.sendall(encode_message(kind, **fields))

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    @property
    def closed(self) -> bool:
        return self.sock is None
