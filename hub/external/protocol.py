"""The wire format between :class:`PolicyClient` and :class:`PolicyServer` (numpy + msgpack).

A frame is a 4-byte big-endian length followed by that many bytes of one msgpack map. Every map
holds ``"v"`` (the protocol version) and ``"type"``; arrays travel as maps
``{"dtype": "float32", "shape": [3], "data": <raw little-endian C-order bytes>}``. Nothing is
ever unpickled. :data:`MESSAGES` lists every message and its fields; docs/external-protocol.md
shows the same table (a test checks that they agree).

Decoding is bounded: a body is decoded with msgpack's length limits and a budget of
:data:`MAX_OBJECTS` containers and their items, so that a small message cannot expand into a
large heap (an empty msgpack array is one byte on the wire and about 60 in Python); before
authentication the budget is :data:`HELLO_LIMITS` on a frame of at most
:data:`HELLO_MAX_BYTES`.

Example:
    >>> import numpy as np
    >>> frame = encode_message("get_action", episode_id="e1", observation={"observation": np.zeros(2)})
    >>> message = decode_body(frame[4:])
    >>> message["type"], decode_array(message["observation"]["observation"]).tolist()
    ('get_action', [0.0, 0.0])
"""

from __future__ import annotations

import math
import socket
import struct
from dataclasses import dataclass
from typing import Any

import msgpack
import numpy as np

from hub.errors import HubError
from hub.external.episodes import MAX_EPISODE_ID_CHARS

__all__ = [
    "PROTOCOL_VERSION",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "HELLO_MAX_BYTES",
    "MAX_EPISODE_ID_CHARS",
    "MESSAGES",
    "ERROR_CODES",
    "ProtocolError",
    "DecodeLimits",
    "encode_array",
    "decode_array",
    "encode_message",
    "decode_body",
    "send_message",
    "recv_message",
    "check_fields",
]

PROTOCOL_VERSION = 1
DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024
#: the largest frame a server reads before the client authenticated (its hello)
HELLO_MAX_BYTES = 4096
#: the most dims of an array, and the largest size of one dim
MAX_DIMS = 32
MAX_DIM = 2**31 - 1
#: the most containers plus container items one message may decode into
MAX_OBJECTS = 1_000_000
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
    "start_episode": ("c->s", {"episode_id": "id?", "training_enabled": "bool"}),
    "episode_started": ("s->c", {"episode_id": "id"}),
    "get_action": ("c->s", {"episode_id": "id", "observation": "obs"}),
    "action": ("s->c", {"action": "array"}),
    "log_action": ("c->s", {"episode_id": "id", "observation": "obs", "action": "array"}),
    "log_returns": ("c->s", {"episode_id": "id", "reward": "float", "info": "map?"}),
    "end_episode": ("c->s", {"episode_id": "id", "observation": "obs", "truncated": "bool"}),
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
            "infos": "list?",
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
    "timeout": True,
    "busy": True,
    "spec_mismatch": True,
    "unknown_episode": False,
    "episode": False,
    "full": False,
    "no_weights": False,
    "backlog": False,
    "no_learner": False,
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


@dataclass(frozen=True)
class DecodeLimits:
    """How large a decoded message may be: msgpack's per-container limits and a budget of
    containers plus their items for the whole message."""

    max_objects: int = MAX_OBJECTS
    max_array_len: int = 1 << 16
    max_map_len: int = 1 << 12
    max_str_len: int = 1 << 20
    max_bin_len: int = DEFAULT_MAX_MESSAGE_BYTES


#: the limits of a hello, the one message read before authentication
HELLO_LIMITS = DecodeLimits(
    max_objects=64, max_array_len=8, max_map_len=16, max_str_len=1024, max_bin_len=0
)
DEFAULT_LIMITS = DecodeLimits()


#: each dtype of :data:`DTYPES`, in any byte order -> its name
_NAMES = {np.dtype(name).newbyteorder(order): name for name in DTYPES for order in "=<>"}
#: each dtype name -> the little-endian dtype its data is read as
_WIRE = {name: np.dtype(name).newbyteorder("<") for name in DTYPES}


def encode_array(value: Any, dtype: str | None = None) -> dict[str, Any]:
    """A numpy-convertible value as the protocol's array map (little-endian, C order)."""
    array = np.asarray(value, dtype=dtype)
    name = _NAMES.get(array.dtype)
    if name is None:
        raise ProtocolError("bad_message", f"arrays of dtype {array.dtype} cannot be sent")
    if array.dtype.byteorder == ">" or not array.flags.c_contiguous:
        array = np.ascontiguousarray(array, dtype=_WIRE[name])
    return {"dtype": name, "shape": list(array.shape), "data": array.tobytes()}


def check_shape(shape: Any) -> tuple[int, ...]:
    """``shape`` as a tuple of sizes, or ``bad_message``: a list of at most :data:`MAX_DIMS`
    ints, each in ``[0, MAX_DIM]``."""
    if (
        not isinstance(shape, list)
        or len(shape) > MAX_DIMS
        or not all(type(d) is int and 0 <= d <= MAX_DIM for d in shape)
    ):
        raise ProtocolError(
            "bad_message",
            f"an array shape must be a list of at most {MAX_DIMS} sizes in [0, {MAX_DIM}], "
            f"got {shape!r:.100}",
        )
    return tuple(shape)


def decode_array(value: Any) -> np.ndarray:
    """The protocol's array map as a numpy array (checked: dtype name, shape, byte count, all
    before any memory is allocated for it)."""
    if not isinstance(value, dict) or set(value) != {"dtype", "shape", "data"}:
        raise ProtocolError("bad_message", "an array must be a map with dtype, shape and data")
    dtype, data = value["dtype"], value["data"]
    if not isinstance(dtype, str) or dtype not in DTYPES:
        raise ProtocolError("bad_message", f"unknown dtype {dtype!r:.40}; known: {sorted(DTYPES)}")
    shape = check_shape(value["shape"])
    if not isinstance(data, bytes):
        raise ProtocolError("bad_message", "array data must be msgpack bin")
    np_dtype = _WIRE[dtype]
    expected = math.prod(shape) * np_dtype.itemsize  # Python ints: no overflow
    if len(data) != expected:
        raise ProtocolError(
            "bad_message",
            f"array of shape {list(shape)} and dtype {dtype} needs {expected} bytes, got "
            f"{len(data)}",
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


class _OverBudget(Exception):
    pass


def decode_body(body: bytes, limits: DecodeLimits = DEFAULT_LIMITS) -> dict[str, Any]:
    """A frame body as a message map: checked to be a msgpack map with the right version and
    a known type, decoded within ``limits``."""
    left = limits.max_objects

    def count(container: Any) -> Any:
        nonlocal left
        left -= len(container) + 1
        if left < 0:
            raise _OverBudget
        return container

    try:
        message = msgpack.unpackb(
            body,
            raw=False,
            strict_map_key=True,
            list_hook=count,
            object_hook=count,
            max_str_len=limits.max_str_len,
            max_bin_len=limits.max_bin_len,
            max_array_len=limits.max_array_len,
            max_map_len=limits.max_map_len,
            max_ext_len=0,
        )
    except _OverBudget:
        raise ProtocolError(
            "bad_message",
            f"the message holds more than {limits.max_objects} msgpack containers and items",
        ) from None
    except (ValueError, TypeError, msgpack.UnpackException) as err:  # ExtraData, StackError...
        raise ProtocolError(
            "bad_message", f"the message is not valid msgpack within the limits ({err})"
        ) from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise ProtocolError("bad_message", "a message must be a msgpack map with a 'type' string")
    version = message.get("v")
    if version != PROTOCOL_VERSION:
        raise ProtocolError(
            "version",
            f"protocol version {version!r:.20} is not supported; this side speaks version "
            f"{PROTOCOL_VERSION}. Use a client and server of matching hub versions.",
        )
    if message["type"] not in MESSAGES:
        raise ProtocolError("bad_message", f"unknown message type {message['type']!r:.40}")
    return message


def check_size(size: int, max_bytes: int) -> None:
    """Refuse a frame length over ``max_bytes`` (before its body is read)."""
    if size > max_bytes:
        raise ProtocolError(
            "too_large",
            f"a message of {size} bytes is over the limit of {max_bytes} bytes "
            "(max_message_bytes on both sides; a hello may hold at most "
            f"{HELLO_MAX_BYTES} bytes)",
        )


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


def recv_message(
    sock: socket.socket, max_bytes: int, limits: DecodeLimits = DEFAULT_LIMITS
) -> dict[str, Any]:
    """Receive one message; a frame over ``max_bytes`` is refused before its body is read."""
    (size,) = HEADER.unpack(recv_exact(sock, HEADER.size))
    check_size(size, max_bytes)
    return decode_body(recv_exact(sock, size), limits)


_TYPES: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "id": (str,),
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
    (extra fields are allowed; a field whose type ends with ``?`` may be nil or left out; an
    ``id`` is a str of at most :data:`MAX_EPISODE_ID_CHARS` characters)."""
    kind = message["type"]
    for name, type_name in MESSAGES[kind][1].items():
        optional = type_name.endswith("?")
        value = message.get(name)
        if value is None:
            if optional:
                continue
            raise ProtocolError("bad_message", f"message {kind!r} lacks the field {name!r}")
        base = type_name.rstrip("?")
        expected = _TYPES[base]
        if not isinstance(value, expected) or (isinstance(value, bool) and bool not in expected):
            raise ProtocolError(
                "bad_message",
                f"field {name!r} of {kind!r} must be {type_name}, got {type(value).__name__}",
            )
        if base == "id" and len(value) > MAX_EPISODE_ID_CHARS:
            raise ProtocolError(
                "bad_message",
                f"field {name!r} of {kind!r} holds {len(value)} characters; at most "
                f"{MAX_EPISODE_ID_CHARS}",
            )
