"""Protocol fuzzing over real sockets on 127.0.0.1: random bytes, random msgpack hellos and
random messages after a valid hello. No input makes the server fail (``internal``, or an error
in its log), and it serves a well-behaved client at the end. Bounded: a fixed number of examples,
each with a short cap on the time it waits for answers."""

from __future__ import annotations

import logging
import socket
import struct

import msgpack
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hub.external import ExternalEnv, PolicyClient, PolicyServer
from hub.external.protocol import MESSAGES, encode_array, encode_message, recv_message
from hub.specs import Categorical, Unbounded

from .conftest import Learner
from .test_server_faults import _address, _episode

EXAMPLES = settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=True)
    | st.text(max_size=12)
    | st.binary(max_size=24)
)
values = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=24,
)
arrays = st.fixed_dictionaries(
    {
        "dtype": st.sampled_from(["float32", "float64", "int64", "bool", "object", "uint8"]),
        "shape": st.lists(st.integers(min_value=-3, max_value=2**33), max_size=4),
        "data": st.binary(max_size=32),
    }
)
kinds = st.sampled_from(sorted(MESSAGES))
field_values = values | arrays | st.dictionaries(st.just("observation"), arrays, max_size=1)


@st.composite
def messages(draw):
    """A map with a known type, its fields (some right, some random) and random extras."""
    kind = draw(kinds)
    body = {"v": 1, "type": kind}
    for name in MESSAGES[kind][1]:
        if draw(st.booleans()):
            body[name] = draw(field_values)
    body.update(draw(st.dictionaries(st.text(max_size=6), values, max_size=2)))
    return body


class _Failures(logging.Handler):
    """Keeps the server's log records of level ERROR and above (its failures)."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.records = []

    def emit(self, record):
        self.records.append(record)


@pytest.fixture(scope="module")
def fuzzed():
    failures = _Failures()
    logger = logging.getLogger("hub.external.server")
    logger.addHandler(failures)
    env = ExternalEnv(Unbounded((2,)), Categorical(3), max_concurrent=4, wait_s=0.02)
    server = PolicyServer(env, client_timeout=0.5, handshake_timeout=0.5, idle_timeout=0.5)
    learner = Learner(env)
    yield env, server, failures
    learner.stop()
    server.close()
    env.close()
    logger.removeHandler(failures)


def _exchange(server, *frames):
    """Send the frames; the codes of the errors the server answered (until it closes or says
    nothing for 0.3 s)."""
    sock = socket.create_connection(server.address, timeout=5)
    codes = []
    try:
        sock.sendall(b"".join(frames))
        sock.settimeout(0.3)
        while True:
            reply = recv_message(sock, 64 << 20)
            if reply["type"] == "error":
                codes.append(reply["code"])
    except (TimeoutError, ConnectionError, OSError):
        pass
    finally:
        sock.close()
    return codes


def _frame(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


def _hello():
    return encode_message("hello", token=None, client="fuzz")


@EXAMPLES
@given(data=st.binary(max_size=64))
def test_random_bytes(fuzzed, data):
    assert "internal" not in _exchange(fuzzed[1], data)


@EXAMPLES
@given(body=values)
def test_random_msgpack_as_hello(fuzzed, body):
    assert "internal" not in _exchange(fuzzed[1], _frame(msgpack.packb(body, use_bin_type=True)))


@EXAMPLES
@given(body=messages(), count=st.integers(min_value=1, max_value=3))
def test_random_messages_after_hello(fuzzed, body, count):
    frame = _frame(msgpack.packb(body, use_bin_type=True))
    assert "internal" not in _exchange(fuzzed[1], _hello(), *[frame] * count)


@EXAMPLES
@given(episode=st.text(max_size=300), shape=st.lists(st.integers(0, 4), max_size=3))
def test_calls_of_odd_episodes_and_shapes(fuzzed, episode, shape):
    obs = {"observation": encode_array(np.zeros(shape, np.float32))}
    frames = [
        _hello(),
        encode_message("start_episode", episode_id=episode, training_enabled=True),
        encode_message("get_action", episode_id=episode, observation=obs),
        encode_message("end_episode", episode_id=episode, observation=obs, truncated=False),
    ]
    assert "internal" not in _exchange(fuzzed[1], *frames)


def test_the_fuzzed_server_still_serves_and_logged_no_failure(fuzzed):
    env, server, failures = fuzzed
    with PolicyClient(_address(server), timeout=10) as client:
        _episode(client, first=4.0)
    assert not failures.records, [r.getMessage() for r in failures.records[:3]]
