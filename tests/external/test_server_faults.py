"""PolicyServer and PolicyClient over real sockets on 127.0.0.1, and each fault of the protocol."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import threading
from collections import Counter

import msgpack
import numpy as np
import pytest
import torch

from hub.errors import HubError
from hub.external import ExternalEnv, PolicyClient, PolicyServer, ProtocolError
from hub.external.protocol import encode_array, encode_message, recv_message
from hub.specs import Categorical, Unbounded

from .conftest import Learner
from .test_external_env import _learner_transitions, _simulator


def _address(server):
    return f"{server.address[0]}:{server.address[1]}"


def _wait_for(predicate, learner):
    """Wait until ``predicate(transitions)`` holds (the learner keeps stepping meanwhile)."""
    event = threading.Event()
    while not predicate(learner.transitions()):
        event.wait(0.01)


def _episode(client, first=0.0, steps=3):
    eid = client.start_episode()
    obs = np.array([first, 0.0], np.float32)
    for t in range(steps):
        client.get_action(eid, obs)
        client.log_returns(eid, 1.0)
        obs = np.array([first, t + 1.0], np.float32)
    client.end_episode(eid, obs)
    return eid


def _raw(server, *messages):
    """A raw socket that sent ``messages`` (bytes frames); returns (socket, first reply)."""
    sock = socket.create_connection(server.address, timeout=10)
    for frame in messages:
        sock.sendall(frame)
    return sock


def _reply_then_closed(sock):
    reply = recv_message(sock, 1 << 20)
    try:
        assert sock.recv(1) == b""  # the server closed the connection...
    except ConnectionResetError:
        pass  # ... with bytes of ours unread, which makes the close a reset
    sock.close()
    return reply


def _frame(body):
    return struct.pack(">I", len(body)) + body


def _hello(token=None):
    return encode_message("hello", token=token, client="raw")


def _others_still_served(server, learner, first=50.0):
    with PolicyClient(_address(server), timeout=10) as client:
        _episode(client, first=first)
    _wait_for(
        lambda rows: any(r["next", "observation"][0] == first and r["next", "done"] for r in rows),
        learner,
    )


def test_remote_inference_round_trip(served):
    env, server, learner = served
    with PolicyClient(_address(server), timeout=10) as client:
        action = None
        eid = client.start_episode(training_enabled=False)
        action = client.get_action(eid, [1.0, 2.0])
        client.log_returns(eid, 0.5)
        client.log_returns(eid, 0.25)
        client.end_episode(eid, [3.0, 4.0])
    assert action.dtype == np.int64 and action.shape == ()
    _wait_for(lambda rows: len(rows) == 1, learner)
    row = learner.transitions()[0]
    assert row["observation"].tolist() == [1.0, 2.0] and int(row["action"]) == int(action)
    assert row["next", "observation"].tolist() == [3.0, 4.0]
    assert float(row["next", "reward"]) == 0.75 and bool(row["next", "terminated"])
    assert not bool(row["next", "training_enabled"])


def test_killed_client_ends_its_episode_truncated_and_the_learner_goes_on(served):
    env, server, learner = served
    script = (
        "import sys, time\n"
        "from hub.external.client import PolicyClient\n"
        f"c = PolicyClient('{_address(server)}', timeout=30)\n"
        "eid = c.start_episode()\n"
        "c.get_action(eid, [7.0, 0.0])\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, env=dict(os.environ), text=True
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        proc.kill()
    finally:
        proc.wait()
        proc.stdout.close()
    _wait_for(lambda rows: any(bool(r["next", "truncated"]) for r in rows), learner)
    row = next(r for r in learner.transitions() if bool(r["next", "truncated"]))
    assert row["observation"].tolist() == [7.0, 0.0]
    assert row["next", "observation"].tolist() == [7.0, 0.0]  # the last observation it logged
    _others_still_served(server, learner)


def test_silent_client_is_gone_after_client_timeout(no_leaks):
    env = ExternalEnv(Unbounded((2,)), Categorical(3), max_concurrent=2, wait_s=0.05)
    server = PolicyServer(env, client_timeout=0.3)
    learner = Learner(env)
    sock = _raw(
        server,
        _hello(),
        encode_message("start_episode", episode_id="quiet", training_enabled=True),
    )
    try:
        recv_message(sock, 1 << 20)  # welcome
        recv_message(sock, 1 << 20)  # episode_started
        obs = {"observation": encode_array(np.array([5.0, 0.0], np.float32))}
        sock.sendall(encode_message("get_action", episode_id="quiet", observation=obs))
        assert recv_message(sock, 1 << 20)["type"] == "action"
        # ... and then nothing: the server counts the client as gone after client_timeout
        _wait_for(lambda rows: any(bool(r["next", "truncated"]) for r in rows), learner)
    finally:
        sock.close()
        learner.stop()
        server.close()
        env.close()


@pytest.mark.parametrize(
    "frame, code",
    [
        (struct.pack(">I", 5) + b"\xc1\xc1\xc1\xc1\xc1", "bad_message"),  # msgpack's unused byte
        (struct.pack(">I", 3) + b"abc", "bad_message"),
        (struct.pack(">I", 1 << 30), "too_large"),
        (_frame(msgpack.packb({"v": 1, "type": "hello", "token": None}) + b"\xc0"), "bad_message"),
    ],
    ids=["garbage", "not-a-map", "oversized", "trailing-bytes"],
)
def test_broken_frames_get_an_error_and_a_closed_connection(served, frame, code):
    env, server, learner = served
    sock = _raw(server, frame)
    reply = _reply_then_closed(sock)
    assert reply["type"] == "error"
    assert reply["code"] == code
    _others_still_served(server, learner)


def test_wrong_protocol_version_is_refused(served):
    env, server, learner = served
    body = msgpack.packb({"v": 2, "type": "hello", "token": None, "client": "future"})
    sock = _raw(server, struct.pack(">I", len(body)) + body)
    reply = _reply_then_closed(sock)
    assert reply["code"] == "version" and "version 1" in reply["message"]
    _others_still_served(server, learner)


@pytest.mark.parametrize(
    "observation",
    [
        {"observation": encode_array(np.zeros(2, np.float64))},  # wrong dtype
        {"observation": encode_array(np.zeros(3, np.float32))},  # wrong shape
        {"pixels": encode_array(np.zeros(2, np.float32))},  # wrong key
    ],
    ids=["dtype", "shape", "key"],
)
def test_wrong_dtype_or_shape_is_refused(served, observation):
    env, server, learner = served
    sock = _raw(
        server,
        _hello(),
        encode_message("start_episode", episode_id="bad", training_enabled=True),
        encode_message("get_action", episode_id="bad", observation=observation),
    )
    assert recv_message(sock, 1 << 20)["type"] == "welcome"
    assert recv_message(sock, 1 << 20)["type"] == "episode_started"
    reply = _reply_then_closed(sock)
    assert reply["code"] == "spec_mismatch"
    _others_still_served(server, learner)


def test_out_of_range_action_is_refused(served):
    env, server, learner = served
    with PolicyClient(_address(server), timeout=10) as client:
        eid = client.start_episode()
        with pytest.raises(ProtocolError, match="does not match its spec") as info:
            client.log_action(eid, [0.0, 0.0], 7)  # Categorical(3)
        assert info.value.code == "spec_mismatch"
    _others_still_served(server, learner)


def test_token(no_leaks):
    env = ExternalEnv(Unbounded((2,)), Categorical(3), max_concurrent=2, wait_s=0.05)
    with pytest.raises(HubError, match="token"):
        PolicyServer(env, host="0.0.0.0")  # refused before binding anything
    server = PolicyServer(env, token="s3cret")
    learner = Learner(env)
    try:
        for token in (None, "wrong"):
            with pytest.raises(ProtocolError, match="token") as info:
                PolicyClient(_address(server), token=token, timeout=10)
            assert info.value.code == "unauthorized"
        with PolicyClient(_address(server), token="s3cret", timeout=10) as client:
            _episode(client)
    finally:
        learner.stop()
        server.close()
        env.close()


def test_server_restart(no_leaks):
    env = ExternalEnv(Unbounded((2,)), Categorical(3), max_concurrent=4, wait_s=0.05)
    server = PolicyServer(env)
    port = server.address[1]
    learner = Learner(env)
    client = PolicyClient(_address(server), timeout=10, reconnect_s=10)
    try:
        old = client.start_episode()
        client.get_action(old, [0.0, 0.0])
        server.close()
        server = PolicyServer(env, port=port)  # the same port, a new server
        with pytest.raises(ProtocolError, match="start a new episode") as info:
            client.get_action(old, [1.0, 0.0])  # reconnects, but the episode is gone
        assert info.value.code == "unknown_episode"
        _episode(client)  # new episodes work on the new connection
        server.close()
        with pytest.raises(ProtocolError, match="cannot reach") as info:
            PolicyClient(_address(server), reconnect_s=0.2)
        assert info.value.code == "connection"
    finally:
        client.close()
        learner.stop()
        server.close()
        env.close()


def test_64_concurrent_clients(no_leaks):
    env = ExternalEnv(Unbounded((2,)), Categorical(3), max_concurrent=64, wait_s=0.5)
    server = PolicyServer(env)
    learner = Learner(env)
    errors = []

    def simulator(number):
        try:
            with PolicyClient(_address(server), timeout=30) as client:
                for episode in range(2):
                    _episode(client, first=number * 10 + episode, steps=4)
        except Exception as err:
            errors.append(err)

    threads = [threading.Thread(target=simulator, args=(i,)) for i in range(64)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert not errors, errors[:3]
        _wait_for(lambda rows: len(rows) == 64 * 2 * 4, learner)
        rows = learner.transitions()
        assert sum(bool(r["next", "done"]) for r in rows) == 128
    finally:
        learner.stop()
        server.close()
        env.close()


def test_local_inference_runs_the_learner_policy_on_the_client(no_leaks):
    torch.manual_seed(0)
    policy = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    env = ExternalEnv(Unbounded((2,)), Categorical(3), max_concurrent=2, wait_s=0.05)
    server = PolicyServer(env, policy=policy)
    learner = Learner(env)
    try:
        with PolicyClient(_address(server), inference="local", timeout=10) as client:
            eid = client.start_episode()
            observations = [np.array([i * 0.3, -i * 0.7], np.float32) for i in range(5)]
            actions = []
            for obs in observations:
                actions.append(int(client.get_action(eid, obs)))
                client.log_returns(eid, 1.0)
            client.end_episode(eid, np.zeros(2, np.float32))
        expected = [int(policy(torch.as_tensor(o)).argmax()) for o in observations]
        assert actions == expected
        _wait_for(lambda rows: len(rows) == 5, learner)
        rows = learner.transitions()
        assert all(bool(r["next", "off_policy"]) for r in rows)
        assert sorted(int(r["action"]) for r in rows) == sorted(actions)
    finally:
        learner.stop()
        server.close()
        env.close()


def test_client_module_needs_no_torch():
    code = (
        "import sys\n"
        "import hub.external.client, hub.external.local_policy\n"
        "bad = [m for m in ('torch', 'tensordict') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ))


@pytest.mark.parametrize(
    "message",
    [
        encode_message("log_returns", episode_id="x", reward="lots", info=None),
        encode_message("start_episode", episode_id=3, training_enabled=True),
        encode_message("get_action", episode_id="x"),  # a field missing
        encode_message("ok"),  # a server message from a client
    ],
    ids=["reward-type", "id-type", "missing-field", "wrong-direction"],
)
def test_mistyped_messages_are_refused(served, message):
    env, server, learner = served
    sock = _raw(server, _hello(), message)
    assert recv_message(sock, 1 << 20)["type"] == "welcome"
    reply = _reply_then_closed(sock)
    assert reply["code"] == "bad_message"
    _others_still_served(server, learner)


@pytest.mark.parametrize("inference", ["remote", "local"])
def test_learner_data_equals_what_remote_simulators_logged(no_leaks, inference):
    """The in-process test's simulators, each through its own PolicyClient."""
    torch.manual_seed(0)
    policy = torch.nn.Sequential(torch.nn.Linear(2, 3))
    env = ExternalEnv(Unbounded((2,)), Categorical(3), max_concurrent=8, wait_s=0.05)
    server = PolicyServer(env, policy=policy)
    learner = Learner(env)
    log, errors = [], []

    def simulate(worker):
        with PolicyClient(_address(server), inference=inference, timeout=30) as client:
            _simulator(client, worker, 4, log, errors)

    threads = [threading.Thread(target=simulate, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert not errors, errors
        _wait_for(lambda rows: len(rows) >= len(log), learner)
        got = _learner_transitions(torch.stack(learner.transitions()))
        if inference == "local":  # the client's own actions reach the learner as logged ones
            log = [t[:6] + (True,) + t[7:] for t in log]
        assert Counter(got) == Counter(log)
    finally:
        learner.stop()
        server.close()
        env.close()
