"""Frames over an asyncio transport: the byte side of one PolicyServer connection.

:class:`FrameConnection` is an ``asyncio.Protocol`` that keeps the bytes received in one buffer,
hands out whole frames (:meth:`~FrameConnection.read_frame`) and stops reading from the socket
while more than ``cap`` bytes wait (so that a peer cannot make the server buffer more than the
frame it is allowed to send). Answers are corked: :meth:`~FrameConnection.send` queues them and
they leave in one write when the peer's coroutine would wait for input (:meth:`~FrameConnection.flush`),
so that pipelined requests get their answers in one packet.

Example:
    >>> FrameConnection.header_size
    4
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from hub.external.protocol import HEADER, check_size

__all__ = ["FrameConnection"]

#: bytes buffered beyond the frame being read before reading from the socket pauses
SLACK = 64 * 1024


class FrameConnection(asyncio.Protocol):
    """One connection's bytes; ``on_open(connection)`` is called once it is made (``paused``:
    reading starts paused, for a TLS handshake that takes the transport over)."""

    header_size = HEADER.size

    def __init__(self, on_open: Callable[[FrameConnection], None], paused: bool = False) -> None:
        self._on_open = on_open
        self._start_paused = paused  # TLS comes first: no byte is read in clear
        self.transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._waiter: asyncio.Future | None = None
        self._closed: BaseException | None = None
        self._paused = False
        self._can_write = True
        self._write_waiter: asyncio.Future | None = None
        self._out: list[bytes] = []
        self.cap = SLACK

    # ------------------------------------------------------------------ asyncio.Protocol
    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        if self._start_paused:
            transport.pause_reading()
        self._on_open(self)

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        if not self._paused and len(self._buffer) > self.cap:
            self._paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self._closed = self._closed or ConnectionResetError("the peer closed the connection")
        self._wake()
        return False

    def connection_lost(self, exc: BaseException | None) -> None:
        self._closed = self._closed or exc or ConnectionResetError("the connection closed")
        self._wake()
        if self._write_waiter is not None and not self._write_waiter.done():
            self._write_waiter.set_exception(ConnectionResetError("the connection closed"))

    def pause_writing(self) -> None:
        self._can_write = False

    def resume_writing(self) -> None:
        self._can_write = True
        if self._write_waiter is not None and not self._write_waiter.done():
            self._write_waiter.set_result(None)

    # ------------------------------------------------------------------ reading
    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def _wait_for_bytes(self, size: int) -> None:
        """Wait until ``size`` bytes are buffered (reading resumes if paused below that)."""
        while len(self._buffer) < size:
            if self._closed is not None:
                raise ConnectionResetError(
                    f"the peer closed the connection after {len(self._buffer)} of {size} bytes"
                )
            self.cap = max(self.cap, size)
            if self._paused:
                self._paused = False
                self.transport.resume_reading()
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    def frame_ready(self) -> bool:
        """Whether a whole frame is buffered (reading it will not wait)."""
        if len(self._buffer) < HEADER.size:
            return False
        (size,) = HEADER.unpack_from(self._buffer)
        return len(self._buffer) >= HEADER.size + size

    async def read_header(self, max_bytes: int) -> int:
        """The next frame's size (refused over ``max_bytes`` before its body is read)."""
        await self._wait_for_bytes(HEADER.size)
        (size,) = HEADER.unpack_from(self._buffer)
        check_size(size, max_bytes)
        return size

    async def read_body(self, size: int) -> bytes:
        """The body of the frame whose header :meth:`read_header` returned (both leave the
        buffer)."""
        await self._wait_for_bytes(HEADER.size + size)
        body = bytes(self._buffer[HEADER.size : HEADER.size + size])
        del self._buffer[: HEADER.size + size]
        self.cap = SLACK + HEADER.size
        if self._paused and len(self._buffer) <= self.cap:
            self._paused = False
            self.transport.resume_reading()
        return body

    def limit(self, cap: int) -> None:
        """Buffer at most ``cap`` bytes before pausing (before authentication: a hello)."""
        self.cap = cap

    # ------------------------------------------------------------------ writing
    def send(self, frame: bytes) -> None:
        """Queue a frame; it leaves at the next :meth:`flush`."""
        self._out.append(frame)

    async def flush(self) -> None:
        """Write the queued frames in one go; wait while the peer does not read (flow
        control)."""
        if self._out and self.transport is not None and not self.transport.is_closing():
            data = b"".join(self._out) if len(self._out) > 1 else self._out[0]
            self._out.clear()
            self.transport.write(data)
        self._out.clear()
        if not self._can_write and self._closed is None:
            self._write_waiter = asyncio.get_running_loop().create_future()
            try:
                await self._write_waiter
            finally:
                self._write_waiter = None

    def send_now(self, frame: bytes) -> None:
        """Write the queued frames and ``frame`` at once, without waiting (best effort)."""
        self._out.append(frame)
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(b"".join(self._out))
        self._out.clear()

    def abort(self) -> None:
        """Close at once, dropping what was not written."""
        if self.transport is not None:
            self.transport.abort()

    def close(self, linger: float) -> None:
        """Close once the written bytes left, or after ``linger`` seconds if the peer does not
        read them."""
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()
            asyncio.get_running_loop().call_later(linger, self.transport.abort)

    @property
    def buffered(self) -> bool:
        """Whether received bytes wait in the buffer."""
        return bool(self._buffer)

    @property
    def closed(self) -> bool:
        return self._closed is not None
