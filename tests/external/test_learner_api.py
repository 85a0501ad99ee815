"""The learner's side: ``send_actions`` takes what ``poll()`` returned as it is, a learner that
dies makes waiting simulators fail at once, infos reach ``poll()`` and the bulk view, spaces are
taken in a fresh process, and the bulk view's per-episode path for transforms."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import torch

from hub.external import ExternalEnv, LearnerGoneError, PolicyClient, PolicyServer, ProtocolError
from hub.specs import Categorical, Unbounded

from .test_server_faults import _address


def _simulators(env, workers, episodes, steps):
    done, errors = [], []

    def run(worker):
        try:
            for number in range(episodes):
                eid = env.start_episode(f"w{worker}-{number}")
                for t in range(steps):
                    env.get_action(eid, [float(t)])
                    env.log_returns(eid, 1.0, {"t": t})
                    done.append(1)
                env.end_episode(eid, [float(steps)])
        except Exception as err:
            errors.append(err)

    threads = [threading.Thread(target=run, args=(w,)) for w in range(workers)]
    for thread in threads:
        thread.start()
    return threads, done, errors


def test_send_actions_takes_the_polled_tensordict_as_it_is():
    """3 simulators x 2 episodes of 9 steps; the learner answers every row poll() returned,
    ends included: all 54 steps are done."""
    env = ExternalEnv(Unbounded((1,)), Categorical(3), max_concurrent=3)
    threads, done, errors = _simulators(env, workers=3, episodes=2, steps=9)
    infos = []
    while any(t.is_alive() for t in threads):
        polled = env.poll(timeout=0.1)
        polled["action"] = torch.ones_like(polled["action"])
        infos += polled["info"].tolist() if polled.shape[0] else []
        env.send_actions(polled)
    for thread in threads:
        thread.join()
    last = env.poll(timeout=0.1)  # the last ends
    infos += last["info"].tolist() if last.shape[0] else []
    env.close()
    assert not errors and len(done) == 54
    assert {"t": 8} in infos and sum(bool(i) for i in infos) == 54


def test_simulators_fail_at_once_when_the_learner_dies():
    env = ExternalEnv(Unbounded((1,)), Categorical(3), max_concurrent=2, action_timeout=300)
    threads, done, errors = _simulators(env, workers=2, episodes=1, steps=50)

    def learner():
        td = env.reset()
        for _ in range(3):
            td = env.step_and_maybe_reset(env.rand_action(td))[1]
        raise RuntimeError("the learner's own bug")

    thread = threading.Thread(target=learner, name="dying-learner")
    thread.run = _quiet(thread.run)
    thread.start()
    for simulator in threads:
        simulator.join(60)  # far below action_timeout: they failed at once
        assert not simulator.is_alive()
    thread.join()
    assert len(errors) == 2 and all(isinstance(e, LearnerGoneError) for e in errors)
    assert "dying-learner" in str(errors[0]) and "ended" in str(errors[0])
    env.close()


def test_a_remote_client_learns_that_the_learner_died(no_leaks):
    env = ExternalEnv(Unbounded((1,)), Categorical(3), max_concurrent=2)
    server = PolicyServer(env)
    stepped = threading.Event()

    def learner():
        env.reset()
        stepped.set()

    thread = threading.Thread(target=learner, name="short-learner")
    thread.start()
    try:
        with PolicyClient(_address(server), timeout=60) as client:
            eid = client.start_episode()
            stepped.wait()
            thread.join()
            with pytest.raises(ProtocolError, match="short-learner") as info:
                client.get_action(eid, [0.0])
            assert info.value.code == "no_learner"
    finally:
        server.close()
        env.close()


def test_infos_reach_the_bulk_view_over_the_network(no_leaks):
    torch.manual_seed(0)
    env = ExternalEnv(Unbounded((1,)), Categorical(3), max_concurrent=2)
    server = PolicyServer(env, policy=torch.nn.Sequential(torch.nn.Linear(1, 3)), local_view="bulk")
    try:
        with PolicyClient(_address(server), inference="local", timeout=10) as client:
            eid = client.start_episode()
            for t in range(3):
                client.get_action(eid, [float(t)])
                client.log_returns(eid, 1.0, {"step": t} if t != 1 else None)
            client.end_episode(eid, [3.0])
        data = env.take_transitions(timeout=10, infos=True)
        assert [dict(i) for i in data["next", "info"]] == [{"step": 0}, {}, {"step": 2}]
        assert "info" not in env.take_transitions().keys(True)  # infos=False: tensors only
    finally:
        server.close()
        env.close()


def test_gymnasium_spaces_in_a_fresh_process():
    code = (
        "import gymnasium\n"
        "from hub.external import ExternalEnv\n"
        "env = ExternalEnv(gymnasium.spaces.Box(-1, 1, (3,)), gymnasium.spaces.Discrete(2))\n"
        "print(tuple(env.observation_spec['observation'].shape[1:]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ)
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "(3,)"


def test_import_hub_gives_hub_external_without_importing_it_first():
    code = "import hub\nprint(hub.external.ExternalEnv.__name__)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ExternalEnv", out.stderr


def test_the_documented_paths_of_transforms_on_the_bulk_view():
    """What docs/external.md shows: a transform of one row at a time runs on the whole batch;
    a per-episode quantity takes each episode's rows, in order."""
    from hub.transforms import RewardScaling

    env = ExternalEnv(Unbounded((1,)), Categorical(2), max_concurrent=2)
    obs = np.arange(6, dtype=np.float32).reshape(6, 1)
    rewards = [1.0, 2.0, 3.0, 4.0]
    env.bulk.log(["a", "b"], [2, 2], obs, np.zeros(4, np.int64), rewards, terminated=[True, True])
    data = env.take_transitions()
    scaled = RewardScaling(scale=2.0, in_keys=["reward"])(data["next"].clone())
    assert scaled["reward"][:, 0].tolist() == [2.0, 4.0, 6.0, 8.0]
    returns = {}
    for index in data["episode"].unique().tolist():
        rows = data[data["episode"] == index]  # one episode's rows, in order
        returns[index] = rows["next", "reward"][:, 0].cumsum(0).tolist()
    assert sorted(returns.values()) == [[1.0, 3.0], [3.0, 7.0]]
    env.close()


def _quiet(run):
    def wrapped():
        try:
            run()
        except RuntimeError:
            pass  # the learner's bug ends its thread

    return wrapped
