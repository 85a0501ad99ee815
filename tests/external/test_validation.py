"""Validation both ways over real sockets on 127.0.0.1: malformed sizes and shapes are
``bad_message`` (never ``internal``), non-finite floats are refused unless allowed, and the
client checks every reply of a misbehaving server."""

from __future__ import annotations

import logging
import socket
import struct
import threading

import msgpack
import numpy as np
import pytest
import torch

from hub.errors import SpecMismatchError
from hub.external import ExternalEnv, PolicyClient, PolicyServer, ProtocolError
from hub.external.protocol import encode_array, encode_message, recv_message
from hub.specs import Categorical, Unbounded

from .conftest import Learner
from .test_server_faults import _address, _episode, _hello, _others_still_served, _raw
from .test_serving_limits import _closed_with


def _observation(shape, dtype="float32", data=b""):
    return {"observation": {"dtype": dtype, "shape": shape, "data": data}}


@pytest.mark.parametrize(
    "observation",
    [
        _observation([2**32, 2**32]),
        _observation([1] * 65),
        _observation([-8]),
        _observation([True, 2]),
        _observation([2], data=b"\x00" * 7),
        _observation([2], dtype="object"),
        _observation("2"),
    ],
    ids=["huge", "65-dims", "negative", "bool-dim", "byte-count", "dtype", "not-a-list"],
)
def test_malformed_shapes_are_bad_message_with_no_traceback(served, caplog, observation):
    env, server, learner = served
    caplog.set_level(logging.WARNING, "hub.external.server")
    sock = _raw(
        server,
        _hello(),
        encode_message("start_episode", episode_id="m", training_enabled=True),
        encode_message("get_action", episode_id="m", observation=observation),
    )
    assert recv_message(sock, 1 << 20)["type"] == "welcome"
    assert recv_message(sock, 1 << 20)["type"] == "episode_started"
    _closed_with(sock, "bad_message")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    _others_still_served(server, learner)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_observations_and_rewards_are_refused(served, value):
    env, server, learner = served
    with PolicyClient(_address(server), timeout=10) as client:
        eid = client.start_episode()
        with pytest.raises(ProtocolError, match="finite") as info:
            client.get_action(eid, np.array([value, 0.0], np.float32))
        assert info.value.code == "spec_mismatch"
    sock = _raw(
        server,
        _hello(),
        encode_message("start_episode", episode_id="r", training_enabled=True),
        encode_message("log_returns", episode_id="r", reward=float(value), info=None),
    )
    assert recv_message(sock, 1 << 20)["type"] == "welcome"
    assert recv_message(sock, 1 << 20)["type"] == "episode_started"
    assert "finite" in _closed_with(sock, "spec_mismatch")["message"]
    with pytest.raises(SpecMismatchError, match="finite"):  # in-process too
        env.log_returns(env.start_episode(), value)
    _others_still_served(server, learner)


def test_allow_nonfinite_keeps_them(no_leaks):
    env = ExternalEnv(Unbounded((2,)), Categorical(3), max_concurrent=2, allow_nonfinite=True)
    server = PolicyServer(env)
    learner = Learner(env)
    try:
        with PolicyClient(_address(server), timeout=10) as client:
            eid = client.start_episode()
            client.get_action(eid, np.array([np.nan, 1.0], np.float32))
            client.log_returns(eid, np.inf)
            client.end_episode(eid, np.array([np.inf, 2.0], np.float32))
        while not learner.transitions():
            threading.Event().wait(0.01)
        row = learner.transitions()[0]
        assert torch.isnan(row["observation"][0]) and torch.isinf(row["next", "reward"]).all()
    finally:
        learner.stop()
        server.close()
        env.close()


class FakeServer:
    """A misbehaving PolicyServer on 127.0.0.1: a valid welcome, then the scripted replies."""

    WELCOME = {
        "observation_spec": {
            "observation": {"kind": "unbounded", "dtype": "float32", "shape": [2]}
        },
        "action_spec": {"kind": "categorical", "dtype": "int64", "shape": [], "n": 2},
        "reward_spec": {"kind": "unbounded", "dtype": "float32", "shape": [1]},
        "max_message_bytes": 1 << 20,
        "weights": True,
        "bulk_rows": 0,
    }

    def __init__(self, replies, welcome=None):
        self.replies = list(replies)
        self.welcome = welcome or self.WELCOME
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = self.listener.getsockname()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        conn, _ = self.listener.accept()
        with conn:
            recv_message(conn, 1 << 20)  # hello
            conn.sendall(encode_message("welcome", **self.welcome))
            for reply in self.replies:
                try:
                    recv_message(conn, 1 << 20)
                except (ConnectionError, OSError):
                    return
                conn.sendall(reply)
            conn.recv(1)

    def close(self):
        self.listener.close()
        self.thread.join()


def _frame(body):
    return struct.pack(">I", len(body)) + body


def _action(value, dtype="int64"):
    return encode_message("action", action=encode_array(np.asarray(value, dtype=dtype)))


@pytest.mark.parametrize(
    "reply, says",
    [
        (_action(7), "out of its spec"),
        (_action([0, 1]), "shape"),
        (_action(1, "float32"), "dtype"),
        (encode_message("action"), "lacks the field"),
        (encode_message("ok"), "answered 'get_action' with 'ok'"),
        (
            encode_message("action", action={"dtype": "int64", "shape": [2**40], "data": b""}),
            "sizes in",
        ),
        (_frame(b"\xc1\xc1"), "not valid msgpack"),
        (_frame(msgpack.packb({"v": 1, "type": "action", "action": [[[]] * 9] * 9})), "array"),
    ],
    ids=["category", "shape", "dtype", "missing", "type", "size", "garbage", "nesting"],
)
def test_the_client_checks_replies(reply, says):
    server = FakeServer([encode_message("episode_started", episode_id="e"), reply])
    try:
        client = PolicyClient(server.address, timeout=10, reconnect_s=0)
        eid = client.start_episode("e")
        with pytest.raises(ProtocolError, match=says) as info:
            client.get_action(eid, np.zeros(2, np.float32))
        assert info.value.code == "bad_message"
        client.close()
    finally:
        server.close()


@pytest.mark.parametrize(
    "welcome, says",
    [
        (
            dict(FakeServer.WELCOME, action_spec={"kind": "warp", "dtype": "int64", "shape": []}),
            "unknown kind",
        ),
        (dict(FakeServer.WELCOME, observation_spec={}), "no keys"),
        (dict(FakeServer.WELCOME, bulk_rows="many"), "bulk_rows"),
    ],
    ids=["kind", "no-observation", "field-type"],
)
def test_the_client_checks_the_welcome(welcome, says):
    server = FakeServer([], welcome=welcome)
    try:
        with pytest.raises(ProtocolError, match=says) as info:
            PolicyClient(server.address, timeout=10, reconnect_s=0)
        assert info.value.code == "bad_message"
    finally:
        server.close()


def _safetensors(rows=3, columns=2):
    from safetensors.numpy import save

    return save({"w": np.zeros((rows, columns), np.float32)})


@pytest.mark.parametrize(
    "layers, data, says",
    [
        ([{"type": "linear", "weight": "w", "bias": None}], b"junk", "unreadable"),
        ([{"type": "conv"}], None, "unknown layer"),
        ([{"type": "linear", "weight": "w", "bias": None}], None, "3 outputs"),
        ([{"type": "linear", "weight": "zz", "bias": None}], None, "lack"),
    ],
    ids=["data", "layer", "outputs", "tensor"],
)
def test_the_client_checks_weights(layers, data, says):
    weights = encode_message("weights", version=1, layers=layers, data=data or _safetensors())
    server = FakeServer([weights])
    try:
        client = PolicyClient(server.address, inference="local", timeout=10, reconnect_s=0)
        eid = client.start_episode()
        with pytest.raises(ProtocolError, match=says) as info:
            client.get_action(eid, np.zeros(2, np.float32))
        assert info.value.code == "bad_message"
        client._drop()
    finally:
        server.close()


def test_a_well_formed_client_is_served_after_the_bad_ones(served):
    env, server, learner = served
    with PolicyClient(_address(server), timeout=10) as client:
        _episode(client, first=9.0)
