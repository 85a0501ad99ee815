"""The serving core's bounds, each against a real misbehaving client on 127.0.0.1: no thread per
connection, a maximum of connections, deadlines for the handshake and every frame, the cap on
a hello, queues whose limits hold, episode ids of bounded size, an accept loop that survives
running out of descriptors, and a log line for every refused peer."""

from __future__ import annotations

import logging
import os
import socket
import struct
import subprocess
import sys
import threading

import msgpack
import numpy as np
import pytest

from hub.external import EpisodeError, ExternalEnv, PolicyClient, PolicyServer
from hub.external.protocol import encode_array, encode_message, recv_message
from hub.specs import Categorical, Unbounded

from .conftest import Learner
from .test_server_faults import _address, _episode, _hello, _others_still_served, _raw


def _closed_with(sock, code):
    """The error the server sent before closing ``sock`` (read until the close)."""
    reply = recv_message(sock, 1 << 20)
    assert reply["type"] == "error" and reply["code"] == code, reply
    try:
        assert sock.recv(1) == b""
    except ConnectionResetError:
        pass
    sock.close()
    return reply


@pytest.fixture
def quick(no_leaks):
    """A server with short deadlines and a learner stepping its env."""
    env = ExternalEnv(Unbounded((2,)), Categorical(3), max_concurrent=4, wait_s=0.05)
    server = PolicyServer(
        env, client_timeout=0.5, handshake_timeout=0.5, idle_timeout=0.5, max_connections=8
    )
    learner = Learner(env)
    yield env, server, learner
    learner.stop()
    server.close()
    env.close()


def test_idle_connections_cost_no_thread(served):
    env, server, learner = served
    _others_still_served(server, learner)  # every thread of the server and learner is up
    before = threading.active_count()
    socks = [socket.create_connection(server.address) for _ in range(200)]
    try:
        _wait(lambda: server.connection_count == 200)
        assert threading.active_count() == before
        _others_still_served(server, learner, first=51.0)
    finally:
        for sock in socks:
            sock.close()


def test_one_more_than_max_connections_is_refused_with_busy(quick, caplog):
    env, server, learner = quick
    caplog.set_level(logging.WARNING, "hub.external.server")
    held = [_raw(server, _hello()) for _ in range(8)]
    try:
        for sock in held:
            assert recv_message(sock, 1 << 20)["type"] == "welcome"
        extra = socket.create_connection(server.address, timeout=10)
        reply = _closed_with(extra, "busy")
        assert "maximum of 8" in reply["message"]
        assert any(
            "refused" in r.message and "max_connections" in r.message for r in caplog.records
        )
    finally:
        for sock in held:
            sock.close()
    _wait(lambda: server.connection_count == 0)
    _others_still_served(server, learner)


def test_a_silent_connection_is_closed_at_the_handshake_deadline(quick, caplog):
    env, server, learner = quick
    caplog.set_level(logging.WARNING, "hub.external.server")
    sock = socket.create_connection(server.address, timeout=10)
    reply = _closed_with(sock, "timeout")  # sent nothing at all
    assert "hello" in reply["message"]
    _wait(lambda: any("closed" in r.message and "hello" in r.message for r in caplog.records))
    _others_still_served(server, learner)


@pytest.mark.parametrize(
    "frame",
    [
        struct.pack(">I", 15 << 20),  # announces a 15 MiB hello
        struct.pack(">I", 5000) + b"\x90" * 5000,  # a hello just over the cap
    ],
    ids=["announced", "sent"],
)
def test_a_hello_over_the_cap_is_refused_before_it_is_read(quick, frame):
    env, server, learner = quick
    sock = _raw(server, frame)
    reply = _closed_with(sock, "too_large")
    assert "4096" in reply["message"]
    _others_still_served(server, learner)


def test_a_hello_that_would_expand_is_refused(quick):
    env, server, learner = quick
    nested = msgpack.packb({"v": 1, "type": "hello", "client": "x", "token": [[[]] * 8] * 8})
    sock = _raw(server, struct.pack(">I", len(nested)) + nested)
    _closed_with(sock, "bad_message")
    _others_still_served(server, learner)


def test_a_frame_split_by_a_long_pause_closes_the_connection_and_never_misframes(quick):
    env, server, learner = quick
    sock = _raw(server, _hello())
    assert recv_message(sock, 1 << 20)["type"] == "welcome"
    frame = encode_message("start_episode", episode_id="split", training_enabled=True)
    sock.sendall(frame[:7])  # the header and 3 bytes; then a pause over client_timeout
    reply = _closed_with(sock, "timeout")
    assert "part of a frame" in reply["message"]
    _others_still_served(server, learner)


def test_an_authenticated_idle_client_is_closed_after_idle_timeout(quick):
    env, server, learner = quick
    sock = _raw(server, _hello())
    assert recv_message(sock, 1 << 20)["type"] == "welcome"
    reply = _closed_with(sock, "timeout")
    assert "idle" in reply["message"]


def test_log_batch_waits_for_room_and_its_limit_holds(no_leaks):
    env = ExternalEnv(Unbounded((2,)), Categorical(3), max_concurrent=2)  # no learner steps
    server = PolicyServer(env, client_timeout=0.3)
    obs = {"observation": encode_array(np.zeros(2, np.float32))}

    def batch(start, count):
        events = [{"type": "start_episode", "episode_id": "b", "training_enabled": True}]
        events = events if start else []
        events += [
            {"type": "log_action", "episode_id": "b", "observation": obs, "action": np.int64(1)}
        ] * count
        return encode_message("log_batch", events=events)

    sock = _raw(server, _hello(), batch(True, 200))
    try:
        assert recv_message(sock, 1 << 20)["type"] == "welcome"
        assert recv_message(sock, 1 << 20)["type"] == "ok"
        for _ in range(3):  # the learner takes nothing: each further batch is refused whole
            sock.sendall(batch(False, 100))
            reply = recv_message(sock, 1 << 20)
            assert reply["code"] == "backlog" and "not taken" in reply["message"]
            assert env.queued(["b"]) <= 256
        sock.sendall(batch(False, 300))  # over the size of a batch
        assert recv_message(sock, 1 << 20)["code"] == "too_large"
    finally:
        sock.close()
        server.close()
        env.close()


def test_episode_ids_are_bounded(served):
    env, server, learner = served
    with pytest.raises(EpisodeError, match="at most 256"):
        env.start_episode("x" * 257)
    sock = _raw(
        server,
        _hello(),
        encode_message("start_episode", episode_id="x" * 257, training_enabled=True),
    )
    assert recv_message(sock, 1 << 20)["type"] == "welcome"
    assert "at most 256" in _closed_with(sock, "bad_message")["message"]
    _others_still_served(server, learner)


def test_ended_ids_are_remembered_as_digests_within_a_bound():
    from hub.external.episodes import FINISHED_KEPT, Board

    board = Board(1)
    for number in range(300):
        board.start(f"{number:0>256}", True)
        board.truncate(f"{number:0>256}")
    assert len(board._finished) == 300 and all(len(k) == 16 for k in board._finished)
    assert FINISHED_KEPT <= 1 << 16
    with pytest.raises(EpisodeError, match="already ended"):
        board.start(f"{7:0>256}", True)


def test_a_silent_bulk_client_loses_its_episodes_and_frees_their_places(no_leaks):
    import torch

    torch.manual_seed(0)
    env = ExternalEnv(Unbounded((2,)), Categorical(3), max_concurrent=1)
    server = PolicyServer(
        env,
        policy=torch.nn.Sequential(torch.nn.Linear(2, 3)),
        local_view="bulk",
        client_timeout=0.3,
    )
    running = encode_message(
        "log_transitions",
        episode_ids=["quiet"],
        lengths=np.array([1], np.int64),
        terminated=np.zeros(1, bool),
        truncated=np.zeros(1, bool),
        training_enabled=np.ones(1, bool),
        observation={"observation": np.zeros((2, 2), np.float32)},
        action=np.zeros(1, np.int64),
        reward=np.zeros(1),
    )
    sock = _raw(server, _hello(), running)
    try:
        assert recv_message(sock, 1 << 20)["type"] == "welcome"
        assert recv_message(sock, 1 << 20)["type"] == "ok"
        assert "while its episodes run" in _closed_with(sock, "timeout")["message"]
        data = env.take_transitions()
        while data.shape[0] < 2:  # its end row comes as the server closes the connection
            data = torch.cat([data, env.take_transitions(timeout=10)])
        assert data["next", "truncated"][:, 0].tolist() == [False, True]  # its end row
        with PolicyClient(_address(server), inference="local", timeout=10) as client:
            _episode(client)  # max_concurrent is 1: the silent client's place is free
        assert env.take_transitions(timeout=10).shape[0] == 3
    finally:
        server.close()
        env.close()


def test_the_accept_loop_survives_running_out_of_descriptors(tmp_path):
    """A server in a process with few descriptors: accept() fails, the server logs it and
    accepts again once descriptors are free."""
    script = (
        "import logging, resource, sys, threading\n"
        "logging.basicConfig(level=logging.WARNING, stream=sys.stderr)\n"
        "from hub.external import ExternalEnv, PolicyServer\n"
        "from hub.specs import Categorical, Unbounded\n"
        "import os\n"
        "env = ExternalEnv(Unbounded((2,)), Categorical(3), max_concurrent=2, wait_s=0.05)\n"
        "server = PolicyServer(env, max_connections=1000)\n"
        "used = len(os.listdir('/proc/self/fd'))\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (used + 5, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))\n"
        "print(server.address[1], flush=True)\n"
        "def learn():\n"
        "    td = env.reset()\n"
        "    while True:\n"
        "        data, td = env.step_and_maybe_reset(env.rand_action(td))\n"
        "threading.Thread(target=learn, daemon=True).start()\n"
        "sys.stdin.read()\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    logged = threading.Event()

    def read_log():  # drains the log (a full pipe would block the server)
        for line in proc.stderr:
            if "cannot accept" in line:
                logged.set()

    reader = threading.Thread(target=read_log)
    reader.start()
    try:
        port = int(proc.stdout.readline())
        flood = [socket.create_connection(("127.0.0.1", port)) for _ in range(20)]
        assert logged.wait(60), "the server never logged the failed accept"
        for sock in flood:
            sock.close()
        with PolicyClient(f"127.0.0.1:{port}", timeout=30, reconnect_s=30) as client:
            _episode(client)
    finally:
        proc.kill()
        proc.wait()
        reader.join()
        proc.stdin.close()
        proc.stdout.close()


def _wait(predicate, timeout=30.0):
    event = threading.Event()
    for _ in range(int(timeout / 0.01)):
        if predicate():
            return
        event.wait(0.01)
    raise AssertionError("the condition never held")
