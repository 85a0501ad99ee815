"""The bulk view: ``log_transitions`` columns in, ``take_transitions`` batches out, in-process
and over real sockets on 127.0.0.1 (local-inference clients of a ``local_view="bulk"`` server)."""

from __future__ import annotations

import threading
import time
from collections import Counter

import numpy as np
import pytest
import torch

from hub.errors import HubError, SpecMismatchError
from hub.external import (
    ExternalEnv,
    ExternalEnvFullError,
    PolicyClient,
    PolicyServer,
    ProtocolError,
)
from hub.external.protocol import encode_message, recv_message
from hub.external.segments import SegmentBuffer
from hub.specs import Categorical, Unbounded

from .conftest import Learner
from .test_external_env import _learner_transitions, _simulator
from .test_server_faults import _address, _episode, _hello, _raw, _reply_then_closed


class BulkReader:
    """Takes the bulk view's transitions in a thread, as a learner would."""

    def __init__(self, env):
        self.env = env
        self.batches = []
        self.error = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, name="test-bulk-reader")
        self.thread.start()

    def _run(self):
        try:
            while not self._stop.is_set():
                data = self.env.take_transitions(timeout=0.05)
                if data.shape[0]:
                    with self._lock:
                        self.batches.append(data)
        except Exception as err:  # reported by stop()
            self.error = err

    def data(self):
        with self._lock:
            batches = list(self.batches)
        if batches:
            return torch.cat(batches)
        return self.env.take_transitions(timeout=0, max_rows=0)  # empty; takes nothing

    def wait_for(self, predicate, timeout=30.0):
        event, deadline = threading.Event(), time.monotonic() + timeout
        while not predicate(self.data()):
            assert time.monotonic() < deadline, f"the learner's data never matched ({timeout} s)"
            event.wait(0.01)

    def stop(self):
        self._stop.set()
        self.thread.join()
        assert self.error is None, self.error


@pytest.fixture
def bulk(no_leaks):
    """``(env, server, reader)``: a bulk-view server whose local clients run a linear policy."""
    torch.manual_seed(0)
    env = ExternalEnv(Unbounded((2,)), Categorical(3), max_concurrent=4, wait_s=0.05)
    policy = torch.nn.Sequential(torch.nn.Linear(2, 3))
    server = PolicyServer(env, policy=policy, client_timeout=5.0, local_view="bulk")
    reader = BulkReader(env)
    yield env, server, reader
    reader.stop()
    server.close()
    env.close()


def _transitions_message(
    rows=3, obs_dtype=np.float32, obs_shape=(2,), obs_rows=None, action=None, ids=("x",)
):
    """A valid one-segment log_transitions (or one with the given column wrong)."""
    s = len(ids)
    lengths = np.full(s, rows // s, dtype=np.int64)
    n = int(lengths.sum())
    obs = np.zeros(((n + s) if obs_rows is None else obs_rows, *obs_shape), dtype=obs_dtype)
    return encode_message(
        "log_transitions",
        episode_ids=list(ids),
        lengths=lengths,
        terminated=np.ones(s, dtype=bool),
        truncated=np.zeros(s, dtype=bool),
        training_enabled=np.ones(s, dtype=bool),
        observation={"observation": obs},
        action=np.zeros(n, dtype=np.int64) if action is None else action,
        reward=np.ones(n, dtype=np.float64),
    )


def _local_episode_reaches_the_learner(server, reader, first=50.0):
    with PolicyClient(_address(server), inference="local", timeout=10) as client:
        _episode(client, first=first)
    reader.wait_for(
        lambda d: bool(((d["next", "observation"][:, 0] == first) & d["next", "done"][:, 0]).any())
    )


# ---------------------------------------------------------------------- in-process
def test_bulk_rows_have_the_step_views_keys_and_dtypes():
    env = ExternalEnv(Unbounded((1,)), Categorical(2), max_concurrent=1, wait_s=None)

    def simulator():
        eid = env.start_episode()
        env.get_action(eid, [0.0])
        env.end_episode(eid, [1.0])

    thread = threading.Thread(target=simulator)
    thread.start()
    step = env.step(env.rand_action(env.reset()))
    thread.join()
    env.log_transitions(["b"], [1], np.zeros((2, 1), np.float32), np.array([1]), [0.5])
    data = env.take_transitions()
    env.close()
    assert set(data.keys(True, True)) == set(step.keys(True, True)) | {"episode"}
    for key in step.keys(True, True):
        assert data[key].dtype == step[key].dtype, key
        assert data[key].shape[1:] == step[key].shape[1:], key
    assert data["valid"].all() and data["off_policy"].all()


def test_segments_become_flat_rows_in_order():
    env = ExternalEnv(Unbounded((1,)), Categorical(3), max_concurrent=2)
    obs = np.arange(7, dtype=np.float32).reshape(7, 1)  # "a": 0 1 2 | "b": 3 4 5 6
    env.log_transitions(["a", "b"], [2, 3], obs, np.array([0, 1, 2, 0, 1]), [1, 2, 3, 4, 5])
    # "a" goes on in a second batch, which starts at the observation its first one ended at
    env.log_transitions(
        ["a"], [1], np.array([[2.0], [9.0]], np.float32), np.array([2]), [6.0], truncated=[True]
    )
    assert env.queued_transitions == 6
    first = env.take_transitions(max_rows=4)
    rest = env.take_transitions()
    assert env.take_transitions(timeout=0.01).shape == (0,)
    env.close()
    data = torch.cat([first, rest])
    assert first.shape == (4,) and rest.shape == (2,)
    assert data["observation"][:, 0].tolist() == [0, 1, 3, 4, 5, 2]
    assert data["next", "observation"][:, 0].tolist() == [1, 2, 4, 5, 6, 9]
    assert data["next", "reward"][:, 0].tolist() == [1, 2, 3, 4, 5, 6]
    assert data["action"].tolist() == [0, 1, 2, 0, 1, 2]
    assert data["next", "done"][:, 0].tolist() == [False] * 5 + [True]
    assert data["next", "truncated"][:, 0].tolist() == [False] * 5 + [True]
    episodes = data["episode"].tolist()
    assert episodes[0] == episodes[1] == episodes[5] != episodes[2] == episodes[3] == episodes[4]


def test_wrong_columns_are_refused_in_process():
    env = ExternalEnv(Unbounded((2,)), Categorical(3), max_concurrent=1)
    obs = np.zeros((3, 2), np.float32)
    with pytest.raises(SpecMismatchError, match="shape"):
        env.log_transitions(["a"], [2], obs[:2], np.array([0, 1]), [0.0, 0.0])
    with pytest.raises(SpecMismatchError, match="dtype"):
        env.log_transitions(["a"], [2], obs.astype(np.float64), np.array([0, 1]), [0.0, 0.0])
    with pytest.raises(SpecMismatchError):
        env.log_transitions(["a"], [2], obs, np.array([0, 5]), [0.0, 0.0])  # Categorical(3)
    with pytest.raises(SpecMismatchError, match="lengths"):
        env.log_transitions(["a"], [0], obs[:1], np.array([], dtype=np.int64), [])
    assert env.queued_transitions == 0
    env.close()


def test_more_running_bulk_episodes_than_max_concurrent_is_an_error():
    env = ExternalEnv(Unbounded((1,)), Categorical(2), max_concurrent=2)
    obs = np.zeros((4, 1), np.float32)
    env.log_transitions(["a", "b"], [1, 1], obs, np.array([0, 1]), [0.0, 0.0])
    with pytest.raises(ExternalEnvFullError, match="max_concurrent is 2"):
        env.log_transitions(["c"], [1], obs[:2], np.array([0]), [0.0])
    env.log_transitions(["c"], [1], obs[:2], np.array([0]), [0.0], terminated=[True])  # ends
    env.log_transitions(["a"], [1], obs[:2], np.array([0]), [0.0], truncated=[True])
    env.log_transitions(["d"], [1], obs[:2], np.array([0]), [0.0])  # "a" made room
    assert env.take_transitions().shape == (5,)
    env.close()


def test_a_full_queue_makes_the_producer_wait_then_time_out():
    env = ExternalEnv(Unbounded((1,)), Categorical(2), max_concurrent=2, transition_capacity=2)
    obs = np.zeros((3, 1), np.float32)
    env.log_transitions(["a"], [2], obs, np.array([0, 1]), [0.0, 0.0])
    with pytest.raises(TimeoutError, match="take_transitions"):
        env.log_transitions(["b"], [2], obs, np.array([0, 1]), [0.0, 0.0], timeout=0.05)
    assert env.take_transitions().shape == (2,)
    env.log_transitions(["b"], [2], obs, np.array([0, 1]), [0.0, 0.0], timeout=0.05)
    env.close()


def test_a_refused_batch_leaves_no_running_episode_behind():
    env = ExternalEnv(Unbounded((1,)), Categorical(2), max_concurrent=1, transition_capacity=2)
    obs = np.zeros((3, 1), np.float32)
    env.log_transitions(["a"], [2], obs, np.array([0, 1]), [0.0, 0.0], terminated=[True])
    with pytest.raises(TimeoutError):  # "b" would start, but its batch finds no room
        env.log_transitions(["b"], [2], obs, np.array([0, 1]), [0.0, 0.0], timeout=0.05)
    env.take_transitions()
    env.log_transitions(["c"], [2], obs, np.array([0, 1]), [0.0, 0.0])  # "b" holds no place
    env.truncate_transition_episodes(["b"])  # not running: nothing to end
    assert env.take_transitions()["observation"].shape == (2, 1)
    env.close()


def test_truncating_a_running_bulk_episode_queues_its_end_row():
    env = ExternalEnv(Unbounded((1,)), Categorical(3), max_concurrent=2)
    obs = np.array([[0.0], [1.0], [2.0]], np.float32)
    env.log_transitions(["a"], [2], obs, np.array([2, 1]), [1.0, 1.0], training_enabled=False)
    env.log_transitions(["b"], [1], obs[:2], np.array([0]), [1.0], terminated=[True])
    env.truncate_transition_episodes(["a", "b", "unknown"])  # "b" ended already
    env.truncate_transition_episodes(["a"])  # once only
    data = env.take_transitions()
    env.close()
    end = data[-1]
    assert data.shape == (4,) and end["episode"] == data[0]["episode"]
    assert end["next", "truncated"].item() and end["next", "done"].item()
    assert not end["next", "terminated"].item() and not end["training_enabled"].item()
    assert end["observation"].tolist() == end["next", "observation"].tolist() == [2.0]
    assert end["action"].item() == 1 and end["next", "reward"].item() == 0.0
    assert data["next", "done"][:, 0].tolist() == [False, False, True, True]


def test_a_local_client_that_disconnects_mid_episode_gets_an_end_row(bulk):
    env, server, reader = bulk
    running = encode_message(
        "log_transitions",
        episode_ids=["cut"],
        lengths=np.array([2], np.int64),
        terminated=np.zeros(1, bool),
        truncated=np.zeros(1, bool),
        training_enabled=np.ones(1, bool),
        observation={"observation": np.array([[0, 0], [1, 1], [7, 7]], np.float32)},
        action=np.array([2, 1], np.int64),
        reward=np.ones(2),
    )
    sock = _raw(server, _hello(), running)
    try:
        assert recv_message(sock, 1 << 20)["type"] == "welcome"
        assert recv_message(sock, 1 << 20)["type"] == "ok"
    finally:
        sock.close()  # the client is gone with its episode running
    reader.wait_for(lambda d: d.shape[0] == 3)
    data = reader.data()
    assert data["next", "truncated"][:, 0].tolist() == [False, False, True]
    assert data["observation"][2].tolist() == data["next", "observation"][2].tolist() == [7, 7]
    assert data["episode"].unique().numel() == 1
    _local_episode_reaches_the_learner(server, reader)  # the server serves the others


def test_the_client_buffer_sends_complete_transitions_only():
    buffer = SegmentBuffer(["observation"])
    buffer.start("e", True)
    buffer.reward("e", 5.0)  # before the first action: belongs to no transition
    for t in range(3):
        buffer.act("e", {"observation": np.full(1, t, np.float32)}, np.int64(t))
        buffer.reward("e", 1.0)
    fields = buffer.take(64)  # two complete; the third waits for its next observation
    assert fields["lengths"].tolist() == [2] and fields["reward"].tolist() == [1.0, 1.0]
    assert fields["observation"]["observation"][:, 0].tolist() == [0, 1, 2]
    buffer.end("e", {"observation": np.full(1, 9, np.float32)}, truncated=True)
    fields = buffer.take(64)
    assert fields["observation"]["observation"][:, 0].tolist() == [2, 9]
    assert fields["truncated"].tolist() == [True] and fields["action"].tolist() == [2]
    assert buffer.take(64) is None and not buffer.runs


# ---------------------------------------------------------------------- over sockets
def test_bulk_data_equals_what_local_simulators_logged(bulk):
    """Several local clients at once; a remote client's episodes stay in the step view."""
    env, server, reader = bulk
    learner = Learner(env)  # the step view, stepped at the same time
    log, errors = [], []

    def simulate(worker):
        with PolicyClient(_address(server), inference="local", timeout=30) as client:
            _simulator(client, worker, 6, log, errors)

    threads = [threading.Thread(target=simulate, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    with PolicyClient(_address(server), timeout=10) as remote:
        _episode(remote, first=77.0)
    for thread in threads:
        thread.join()
    try:
        assert not errors, errors
        reader.wait_for(lambda d: d.shape[0] >= len(log))
        data = reader.data()
        log = [t[:6] + (True,) + t[7:] for t in log]  # the client's actions are logged ones
        assert Counter(_learner_transitions(data)) == Counter(log)
        assert any(t[5] for t in log) and any(t[4] for t in log) and not all(t[7] for t in log)
        for index in data["episode"].unique().tolist():  # each episode's rows chain up in order
            rows = data[data["episode"] == index]
            assert (rows["observation"][1:] == rows["next", "observation"][:-1]).all()
            assert rows["next", "done"][:, 0].tolist() == [False] * (rows.shape[0] - 1) + [True]
        assert not (data["observation"][:, 0] == 77.0).any()
        _wait = threading.Event()
        while not any(r["observation"][0] == 77.0 for r in learner.transitions()):
            _wait.wait(0.01)
    finally:
        learner.stop()


@pytest.mark.parametrize(
    "message",
    [
        _transitions_message(obs_dtype=np.float64),
        _transitions_message(obs_shape=(3,)),
        _transitions_message(obs_rows=3),  # 3 transitions need 4 observation rows
        _transitions_message(action=np.zeros(2, np.int64)),  # 2 actions for 3 transitions
        _transitions_message(action=np.full(3, 7, np.int64)),  # out of Categorical(3)
    ],
    ids=["dtype", "shape", "observation-rows", "action-rows", "action-values"],
)
def test_wrong_columns_are_refused_and_the_others_served(bulk, message):
    env, server, reader = bulk
    sock = _raw(server, _hello(), message)
    assert recv_message(sock, 1 << 20)["type"] == "welcome"
    reply = _reply_then_closed(sock)
    assert reply["code"] == "spec_mismatch", reply
    assert "log_transitions" in reply["message"] or "spec" in reply["message"]
    _local_episode_reaches_the_learner(server, reader)


def test_too_many_rows_and_oversized_frames_are_refused(no_leaks):
    env = ExternalEnv(Unbounded((2,)), Categorical(3), max_concurrent=2)
    policy = torch.nn.Sequential(torch.nn.Linear(2, 3))
    server = PolicyServer(env, policy=policy, max_message_bytes=1 << 18, local_view="bulk")
    reader = BulkReader(env)
    try:
        for message, says in [
            (_transitions_message(rows=4097), "at most 4096"),  # ~100 KB, over bulk_rows
            (_transitions_message(rows=1000, obs_shape=(64,)), "over the limit"),  # > 256 KiB
        ]:
            sock = _raw(server, _hello(), message)
            assert recv_message(sock, 1 << 20)["type"] == "welcome"
            reply = _reply_then_closed(sock)
            assert reply["code"] == "too_large" and says in reply["message"], reply
        _local_episode_reaches_the_learner(server, reader)
    finally:
        reader.stop()
        server.close()
        env.close()


def test_log_transitions_to_a_step_view_server_is_refused(served):
    env, server, learner = served
    sock = _raw(server, _hello(), _transitions_message())
    assert recv_message(sock, 1 << 20)["type"] == "welcome"
    reply = _reply_then_closed(sock)
    assert reply["code"] == "bad_message" and "local_view='bulk'" in reply["message"]


def test_log_batch_still_feeds_the_step_view_of_a_bulk_server(bulk):
    """A client that does not know bulk_rows sends log_batch: the step view serves it."""
    env, server, reader = bulk
    learner = Learner(env)
    obs = {"observation": np.array([42.0, 0.0], np.float32)}
    last = {"observation": np.array([42.0, 1.0], np.float32)}
    events = [
        {"type": "start_episode", "episode_id": "old", "training_enabled": True},
        {"type": "log_action", "episode_id": "old", "observation": obs, "action": np.int64(2)},
        {"type": "log_returns", "episode_id": "old", "reward": 1.0, "info": None},
        {"type": "end_episode", "episode_id": "old", "observation": last, "truncated": False},
    ]
    sock = _raw(server, _hello(), encode_message("log_batch", events=events))
    try:
        assert recv_message(sock, 1 << 20)["type"] == "welcome"
        assert recv_message(sock, 1 << 20)["type"] == "ok"
        wait = threading.Event()
        while not learner.transitions():
            wait.wait(0.01)
        row = learner.transitions()[0]
        assert row["observation"].tolist() == [42.0, 0.0] and int(row["action"]) == 2
        assert bool(row["next", "done"]) and env.queued_transitions == 0
        assert reader.data().shape == (0,)
    finally:
        sock.close()
        learner.stop()


def test_an_episode_of_another_connection_is_refused(bulk):
    env, server, reader = bulk
    first = _raw(server, _hello(), _transitions_message(ids=("shared",)))
    second = None
    try:
        assert recv_message(first, 1 << 20)["type"] == "welcome"
        first.sendall(  # a segment that does not end "kept" keeps it the first connection's
            encode_message(
                "log_transitions",
                episode_ids=["kept"],
                lengths=np.array([1], np.int64),
                terminated=np.zeros(1, bool),
                truncated=np.zeros(1, bool),
                training_enabled=np.ones(1, bool),
                observation={"observation": np.zeros((2, 2), np.float32)},
                action=np.zeros(1, np.int64),
                reward=np.zeros(1),
            )
        )
        assert recv_message(first, 1 << 20)["type"] == "ok"  # "shared" (ended)
        assert recv_message(first, 1 << 20)["type"] == "ok"  # "kept" (running)
        second = _raw(server, _hello(), _transitions_message(ids=("kept",)))
        assert recv_message(second, 1 << 20)["type"] == "welcome"
        reply = recv_message(second, 1 << 20)
        assert reply["code"] == "episode" and "another" in reply["message"]
        second.sendall(_transitions_message(ids=("fresh",)))  # the connection stays open
        assert recv_message(second, 1 << 20)["type"] == "ok"
    finally:
        first.close()
        if second is not None:
            second.close()


def test_more_bulk_episodes_than_max_concurrent_get_full_and_the_connection_stays(bulk):
    env, server, reader = bulk  # max_concurrent=4
    five = encode_message(
        "log_transitions",
        episode_ids=[f"e{i}" for i in range(5)],
        lengths=np.ones(5, np.int64),
        terminated=np.zeros(5, bool),
        truncated=np.zeros(5, bool),
        training_enabled=np.ones(5, bool),
        observation={"observation": np.zeros((10, 2), np.float32)},
        action=np.zeros(5, np.int64),
        reward=np.zeros(5),
    )
    sock = _raw(server, _hello(), five, _transitions_message(ids=("one",)))
    try:
        assert recv_message(sock, 1 << 20)["type"] == "welcome"
        reply = recv_message(sock, 1 << 20)
        assert reply["code"] == "full" and "max_concurrent is 4" in reply["message"]
        assert recv_message(sock, 1 << 20)["type"] == "ok"
    finally:
        sock.close()


def test_a_learner_that_does_not_read_gets_the_client_a_backlog_error(no_leaks):
    torch.manual_seed(0)
    env = ExternalEnv(Unbounded((2,)), Categorical(3), max_concurrent=2, transition_capacity=4)
    policy = torch.nn.Sequential(torch.nn.Linear(2, 3))
    server = PolicyServer(env, policy=policy, client_timeout=0.2, local_view="bulk")
    try:
        with PolicyClient(_address(server), inference="local", timeout=10) as client:
            _episode(client, steps=4)  # 4 transitions: the queue is full
            with pytest.raises(ProtocolError, match="take_transitions") as info:
                _episode(client, steps=4)
            assert info.value.code == "backlog"
            assert env.take_transitions().shape == (4,)
            _episode(client, first=1.0, steps=2)  # the same connection goes on
        assert env.take_transitions()["observation"][:, 0].tolist() == [1.0, 1.0]
    finally:
        server.close()
        env.close()


def test_local_view_must_be_known(no_leaks):
    env = ExternalEnv(Unbounded((2,)), Categorical(3), max_concurrent=2)
    with pytest.raises(HubError, match="local_view"):
        PolicyServer(env, local_view="columns")
    env.close()
