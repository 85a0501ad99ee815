"""The wire format between :class:`PolicyClient` and :class:`PolicyServer` (numpy + msgpack).

A frame is a 4-byte big-endian length followed by that many bytes of one msgpack map. Every map
holds ``"v"`` (the protocol version) and ``"type"``; arrays travel as maps
``{"dtype": "float32", "shape": [3], "data": <raw little-endian C-order bytes>}``. Nothing is
ever unpickled. :data:`MESSAGES` lists every message and its fields; docs/external-protocol.md
shows the same table (a test checks that they agree).

Example:
    >>> import numpy as np
    >>> frame = encode_message("get_action", episode_id="e1", observation={"observation": np.zeros(2)})
    >>> message = decode_body(frame[4:])
    >>> message["type"], decode_array(message["observation"]["observation"]).tolist()
    ('get_action', [0.0, 0.0])
"""

from __future__ import annotations

import socket
import struct
from typing import Any

import msgpack
import numpy as np

from hub.errors import HubError

__all__ = [
    "PROTOCOL_VERSION",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "MESSAGES",
    "ERROR_CODES",
    "ProtocolError",
    "encode_array",
    "decode_array",
    "encode_message",
    "decode_body",
    "send_message",
    "recv_message",
]

PROTOCOL_VERSION = 1
DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024
HEADER = struct.Struct(">I")

#: every message: type -> (direction, {field: type}); "c->s" client to server, "s->c" back.
MESSAGES: dict[str, tuple[str, dict[str, str]]] = {
    "hello": ("c->s", {"token": "str?", "client": "str"}),
    "welcome": (
        "s->c",
        {
            "observation_spec": "map",
            "action_spec": "map",
            "reward_spec": "map",
            "max_message_bytes": "int",
            "weights": "bool",
            "bulk_rows": "int",
        },
    ),
    "start_episode": ("c->s", {"episode_id": "str?", "training_enabled": "bool"}),
    "episode_started": ("s->c", {"episode_id": "str"}),
    "get_action": ("c->s", {"episode_id": "str", "observation": "obs"}),
    "action": ("s->c", {"action": "array"}),
    "log_action": ("c->s", {"episode_id": "str", "observation": "obs", "action": "array"}),
    "log_returns": ("c->s", {"episode_id": "str", "reward": "float", "info": "map?"}),
    "end_episode": ("c->s", {"episode_id": "str", "observation": "obs", "truncated": "bool"}),
    "log_batch": ("c->s", {"events": "list"}),
    "log_transitions": (
        "c->s",
        {
            "episode_ids": "list",
            "lengths": "array",
            "terminated": "array",
            "truncated": "array",
            "training_enabled": "array",
            "observation": "obs",
            "action": "array",
            "reward": "array",
        },
    ),
    "get_weights": ("c->s", {}),
    "weights": ("s->c", {"version": "int", "layers": "list", "data": "bin"}),
    "ok": ("s->c", {}),
    "bye": ("c->s", {}),
    "error": ("s->c", {"code": "str", "message": "str"}),
}

#: error codes the server sends; those marked True close the connection.
ERROR_CODES: dict[str, bool] = {
    "bad_message": True,
    "too_large": True,
    "version": True,
    "unauthorized": True,
    "spec_mismatch": True,
    "unknown_episode": False,
    "episode": False,
    "full": False,
    "no_weights": False,
    "backlog": False,
    "closed": True,
    "internal": True,
}

DTYPES = {
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
}


class ProtocolError(HubError, ConnectionError):
    """A message broke the protocol, or the peer answered with an error.

    ``code`` is one of :data:`ERROR_CODES` (or ``"connection"`` when the peer is unreachable).
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def encode_array(value: Any, dtype: str | None = None) -> dict[str, Any]:
    """A numpy-convertible value as the protocol's array map (little-endian, C order)."""
    array = np.asarray(value, dtype=dtype)
    if array.dtype.name not in DTYPES:
        raise ProtocolError("bad_message", f"arrays of dtype {array.dtype} cannot be sent")
    array = array.astype(array.dtype.newbyteorder("<"), order="C", copy=False)
    return {"dtype": array.dtype.name, "shape": list(array.shape), "data": array.tobytes()}


def decode_array(value: Any) -> np.ndarray:
    """The protocol's array map as a numpy array (checked: dtype name, shape, byte count)."""
    if not isinstance(value, dict) or set(value) != {"dtype", "shape", "data"}:
        raise ProtocolError("bad_message", "an array must be a map with dtype, shape and data")
    dtype, shape, data = value["dtype"], value["shape"], value["data"]
    if dtype not in DTYPES:
        raise ProtocolError("bad_message", f"unknown dtype {dtype!r}; known: {sorted(DTYPES)}")
    if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise ProtocolError("bad_message", f"an array shape must be a list of sizes, got {shape!r}")
    if not isinstance(data, bytes):
        raise ProtocolError("bad_message", "array data must be msgpack bin")
    np_dtype = np.dtype(dtype).newbyteorder("<")
    expected = int(np.prod(shape, dtype=np.int64)) * np_dtype.itemsize
    if len(data) != expected:
        raise ProtocolError(
            "bad_message",
            f"array of shape {shape} and dtype {dtype} needs {expected} bytes, got {len(data)}",
        )
    return np.frombuffer(data, dtype=np_dtype).reshape(shape).astype(dtype, copy=True)


def encode_message(kind: str, **fields: Any) -> bytes:
    """One frame: header and msgpack body, with the version; numpy arrays are encoded."""
    body = {"v": PROTOCOL_VERSION, "type": kind}
    body.update({key: _encode_value(value) for key, value in fields.items()})
    packed = msgpack.packb(body, use_bin_type=True)
    return HEADER.pack(len(packed)) + packed


def _encode_value(value: Any) -> Any:
    if isinstance(value, np.ndarray | np.generic):
        return encode_array(value)
    if isinstance(value, dict):
        return {key: _encode_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_encode_value(item) for item in value]
    return value


def decode_body(body: bytes) -> dict[str, Any]:
    """A frame body as a message map: checked to be a msgpack map with the right version."""
    try:
        message = msgpack.unpackb(body, raw=False, strict_map_key=True)
    except (ValueError, msgpack.UnpackException) as err:  # ExtraData, FormatError, StackError...
        raise ProtocolError("bad_message", f"the message is not valid msgpack ({err})") from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise ProtocolError("bad_message", "a message must be a msgpack map with a 'type' string")
    version = message.get("v")
    if version != PROTOCOL_VERSION:
        raise ProtocolError(
            "version",
            f"protocol version {version!r} is not supported; this side speaks version "
            f"{PROTOCOL_VERSION}. Use a client and server of matching hub versions.",
        )
    if message["type"] not in MESSAGES:
        raise ProtocolError("bad_message", f"unknown message type {message['type']!r}")
    return message


def send_message(sock: socket.socket, kind: str, **fields: Any) -> None:
    """Encode and send one message."""
    sock.sendall(encode_message(kind, **fields))


def recv_exact(sock: socket.socket, size: int) -> bytes:
    """Exactly ``size`` bytes, or ``ConnectionError`` when the peer closed first."""
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(min(size - len(chunks), 1 << 20))
        if not chunk:
            raise ConnectionError("the peer closed the connection")
        chunks += chunk
    return bytes(chunks)


def recv_message(sock: socket.socket, max_bytes: int) -> dict[str, Any]:
    """Receive one message; a frame over ``max_bytes`` is refused before its body is read."""
    (size,) = HEADER.unpack(recv_exact(sock, HEADER.size))
    if size > max_bytes:
        raise ProtocolError(
            "too_large",
            f"a message of {size} bytes is over the limit of {max_bytes} bytes "
            "(max_message_bytes on both sides)",
        )
    return decode_body(recv_exact(sock, size))


_TYPES: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "int": (int,),
    "float": (int, float),
    "bool": (bool,),
    "bin": (bytes,),
    "map": (dict,),
    "obs": (dict,),
    "array": (dict,),
    "list": (list,),
}


def check_fields(message: dict[str, Any]) -> None:
    """Raise ``bad_message`` when a message lacks one of its fields or one has the wrong type
    (extra fields are allowed)."""
    kind = message["type"]
    for name, type_name in MESSAGES[kind][1].items():
        if name not in message:
            raise ProtocolError("bad_message", f"message {kind!r} lacks the field {name!r}")
        value = message[name]
        if value is None and type_name.endswith("?"):
            continue
        expected = _TYPES[type_name.rstrip("?")]
        if not isinstance(value, expected) or (isinstance(value, bool) and bool not in expected):
            raise ProtocolError(
                "bad_message",
                f"field {name!r} of {kind!r} must be {type_name}, got {type(value).__name__}",
            )
