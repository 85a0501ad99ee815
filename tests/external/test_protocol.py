"""The wire format: arrays, frames, and the agreement of docs/external-protocol.md with the code."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from hub.external.protocol import (
    ERROR_CODES,
    MESSAGES,
    ProtocolError,
    decode_array,
    decode_body,
    encode_array,
    encode_message,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "external-protocol.md"


def _doc_section(title: str) -> str:
    text = DOC.read_text()
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


def test_the_docs_message_table_is_the_code():
    table = {}
    for line in _doc_section("Messages").splitlines():
        match = re.match(r"\| `(\w+)` \| (c->s|s->c) \|(.*)\|$", line)
        if match:
            kind, direction, fields = match.groups()
            table[kind] = (direction, dict(re.findall(r"`(\w+)`: ([\w?]+)", fields)))
    assert table == MESSAGES


def test_the_docs_error_table_is_the_code():
    table = {}
    for line in _doc_section("Errors").splitlines():
        match = re.match(r"\| `(\w+)` \| (yes|no) \|", line)
        if match:
            table[match.group(1)] = match.group(2) == "yes"
    assert table == ERROR_CODES


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int64", "float16", "float32", "float64"])
def test_arrays_round_trip(dtype):
    array = (np.arange(6).reshape(2, 3) % 2).astype(dtype)
    back = decode_array(encode_array(array))
    assert back.dtype == array.dtype and back.shape == (2, 3) and (back == array).all()


def test_arrays_are_little_endian_raw_bytes():
    assert encode_array(np.array([1], dtype=">i4"))["data"] == b"\x01\x00\x00\x00"


@pytest.mark.parametrize(
    "value, match",
    [
        ({"dtype": "object", "shape": [1], "data": b"x"}, "unknown dtype"),
        ({"dtype": "int32", "shape": [2], "data": b"\x00" * 4}, "needs 8 bytes"),
        ({"dtype": "int32", "shape": [-1], "data": b""}, "list of at most 32 sizes"),
        ({"dtype": "int32", "shape": [1]}, "map with dtype"),
    ],
)
def test_malformed_arrays_are_refused(value, match):
    with pytest.raises(ProtocolError, match=match):
        decode_array(value)


def test_object_arrays_cannot_be_sent():
    with pytest.raises(ProtocolError):
        encode_array(np.array([object()]))


def test_every_message_carries_the_version():
    body = decode_body(encode_message("ok")[4:])
    assert body == {"v": 1, "type": "ok"}
