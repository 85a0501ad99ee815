"""ExternalEnv in one process: the simulator API (RLlib's ExternalEnv calls) against hub's learner view."""

from __future__ import annotations

import random
import threading
from collections import Counter

import numpy as np
import pytest
import torch

from hub.errors import ClosedEnvError, SpecMismatchError
from hub.external import EpisodeError, ExternalEnv, ExternalEnvFullError
from hub.specs import Bounded, Categorical, Composite, Unbounded
from hub.transforms import RewardSum, TransformedEnv


def _simulator(env, worker, episodes, log, errors):
    """Run ``episodes`` episodes with every call of the simulator API, recording what it logged."""
    rng = random.Random(worker)
    try:
        for number in range(episodes):
            training = rng.random() > 0.2
            eid = env.start_episode(f"w{worker}-e{number}", training_enabled=training)
            length = rng.randint(1, 6)
            obs = np.array([worker * 100 + number, 0], dtype=np.float32)
            for t in range(length):
                if rng.random() < 0.3:
                    action = rng.randrange(3)
                    env.log_action(eid, obs, action)
                    off = True
                else:
                    action = int(env.get_action(eid, obs))
                    off = False
                reward = 0.0
                for _ in range(rng.randint(0, 2)):  # rewards sum until the next action
                    part = rng.choice([0.5, 1.0, -2.0])
                    env.log_returns(eid, part)
                    reward += part
                next_obs = np.array([worker * 100 + number, t + 1], dtype=np.float32)
                end = t == length - 1
                truncated = end and rng.random() < 0.5
                if end:
                    env.end_episode(eid, next_obs, truncated=truncated)
                log.append(
                    (
                        tuple(obs.tolist()),
                        action,
                        reward,
                        tuple(next_obs.tolist()),
                        end and not truncated,
                        truncated,
                        off,
                        training,
                    )
                )
                obs = next_obs
    except Exception as err:  # reported by the test
        errors.append(err)


def _learner_transitions(data):
    rows = data[data["next", "valid"]]
    out = []
    for i in range(rows.shape[0]):
        row = rows[i]
        out.append(
            (
                tuple(row["observation"].tolist()),
                int(row["action"]),
                float(row["next", "reward"]),
                tuple(row["next", "observation"].tolist()),
                bool(row["next", "terminated"]),
                bool(row["next", "truncated"]),
                bool(row["next", "off_policy"]),
                bool(row["next", "training_enabled"]),
            )
        )
    return out


def _run(env, workers, episodes, collect):
    log, errors = [], []
    threads = [
        threading.Thread(target=_simulator, args=(env, w, episodes, log, errors))
        for w in range(workers)
    ]
    for thread in threads:
        thread.start()
    got = collect(env, threads)
    for thread in threads:
        thread.join()
    assert not errors, errors
    return log, got


def _collect_steps(env, threads):
    got = []
    td = env.reset()
    while any(t.is_alive() for t in threads) or not env.is_idle():
        data, td = env.step_and_maybe_reset(env.rand_action(td))
        got += _learner_transitions(data)
    return got


def test_learner_data_equals_what_the_simulators_logged():
    env = ExternalEnv(Unbounded((2,)), Categorical(3), max_concurrent=4)
    log, got = _run(env, workers=4, episodes=8, collect=_collect_steps)
    env.close()
    assert len(log) > 50
    assert Counter(got) == Counter(log)
    assert any(t[6] for t in log) and any(t[5] for t in log) and not all(t[7] for t in log)


def test_rollout_and_transforms_serve_the_same_data():
    env = TransformedEnv(
        ExternalEnv(Unbounded((2,)), Categorical(3), max_concurrent=3), RewardSum()
    )

    def collect(env, threads):
        got = []
        while any(t.is_alive() for t in threads) or not env.base_env.is_idle():
            data = env.rollout(5, break_when_any_done=False)  # each one resets: slots go on
            assert "episode_reward" in data["next"].keys()
            for step in range(data.shape[1]):
                got += _learner_transitions(data[:, step])
        return got

    log, got = _run(env, workers=3, episodes=4, collect=collect)
    env.close()
    assert Counter(got) == Counter(log)


def test_true_last_observation_and_flags_at_episode_end():
    env = ExternalEnv(
        Unbounded((1,)), Bounded(-1.0, 1.0, shape=(1,)), max_concurrent=2, wait_s=0.05
    )

    def simulator():
        eid = env.start_episode("only")
        env.get_action(eid, [1.0])
        env.log_returns(eid, 2.0)
        env.log_returns(eid, 3.0)
        env.end_episode(eid, [7.0], truncated=True)

    thread = threading.Thread(target=simulator)
    thread.start()
    td = env.reset()
    while not td["valid"].any():
        td = env.reset()
    assert td["valid"].tolist() == [True, False]
    data, td = env.step_and_maybe_reset(env.rand_action(td))
    while not data["next", "valid"].any():  # the simulator answers later than wait_s
        data, td = env.step_and_maybe_reset(env.rand_action(td))
    thread.join()
    assert data["next", "valid"].tolist() == [True, False]
    assert data["next", "observation"][0].tolist() == [7.0]
    assert data["next", "reward"][0].tolist() == [5.0]
    assert data["next", "truncated"][0].item() and not data["next", "terminated"][0].item()
    assert data["next", "done"][0].item()
    assert not td["valid"].any()  # the slot is free again, no new episode yet
    env.close()


def test_log_action_replaces_the_policy_action():
    env = ExternalEnv(Unbounded((1,)), Categorical(5), max_concurrent=1, wait_s=None)

    def simulator():
        eid = env.start_episode()
        env.log_action(eid, [0.0], 4)
        env.end_episode(eid, [1.0])

    thread = threading.Thread(target=simulator)
    thread.start()
    td = env.reset()
    td["action"] = torch.tensor([1])
    data = env.step(td)
    thread.join()
    assert data["action"].tolist() == [4] and data["next", "off_policy"].tolist() == [True]
    env.close()


def test_one_more_than_max_concurrent_is_an_error_not_a_hang():
    env = ExternalEnv(Unbounded((1,)), Categorical(2), max_concurrent=2)
    env.start_episode("a")
    env.start_episode("b")
    with pytest.raises(ExternalEnvFullError, match="max_concurrent is 2"):
        env.start_episode("c")
    with pytest.raises(EpisodeError, match="already running"):
        env.start_episode("a")
    with pytest.raises(EpisodeError, match="never started"):
        env.log_returns("zzz", 1.0)
    env.close()


def test_wait_s_bounds_a_step_when_a_simulator_is_slow():
    env = ExternalEnv(Unbounded((1,)), Categorical(2), max_concurrent=2, wait_s=0.05)
    release = threading.Event()

    def fast():
        eid = env.start_episode("fast")
        obs = [0.0]
        for t in range(3):
            env.get_action(eid, obs)
            obs = [float(t + 1)]
        env.end_episode(eid, obs)

    def slow():
        eid = env.start_episode("slow")
        env.get_action(eid, [10.0])
        release.wait()  # holds its action until the test lets it go
        env.end_episode(eid, [11.0])

    threads = [threading.Thread(target=fast), threading.Thread(target=slow)]
    slow_thread = threads[1]
    slow_thread.start()
    threads[0].start()
    td = env.reset()
    while not td["valid"].all():  # both first observations shown
        td = env.reset()
    fast_rows = 0
    while fast_rows < 3:  # each step returns within wait_s although "slow" never answers
        data, td = env.step_and_maybe_reset(env.rand_action(td))
        rows = data[data["next", "valid"]]
        assert (rows["observation"] < 10).all()  # only the fast episode's transitions
        fast_rows += rows.shape[0]
    release.set()
    for thread in threads:
        thread.join()
    data, td = env.step_and_maybe_reset(env.rand_action(td))
    row = data[data["next", "valid"]]
    assert row["observation"].tolist() == [[10.0]] and row["next", "observation"].tolist() == [
        [11.0]
    ]
    env.close()


def test_spec_mismatch_and_close_reach_the_simulator():
    env = ExternalEnv(
        Composite(pos=Unbounded((2,)), flag=Categorical(2)),
        Categorical(2),
        max_concurrent=1,
        wait_s=None,
    )
    eid = env.start_episode()
    with pytest.raises(SpecMismatchError):
        env.get_action(eid, {"pos": np.zeros(3), "flag": 0})
    with pytest.raises(SpecMismatchError):
        env.get_action(eid, {"pos": np.zeros(2)})
    errors = []

    def blocked():
        try:
            env.get_action(eid, {"pos": np.zeros(2), "flag": 1})
        except ClosedEnvError as err:
            errors.append(err)

    thread = threading.Thread(target=blocked)
    thread.start()
    env.reset()
    env.close()
    thread.join()
    assert len(errors) == 1


def test_poll_and_send_actions():
    env = ExternalEnv(Unbounded((1,)), Categorical(3), max_concurrent=2)
    actions = []

    def simulator():
        eid = env.start_episode("p")
        actions.append(int(env.get_action(eid, [0.0])))
        env.log_returns(eid, 1.5)
        env.end_episode(eid, [1.0])

    thread = threading.Thread(target=simulator)
    thread.start()
    polled = env.poll()
    assert polled["first"].tolist() == [True] and polled["episode_id"][0] == "p"
    polled["action"] = torch.tensor([2])
    env.send_actions(polled)
    thread.join()
    polled = env.poll()
    assert actions == [2]
    assert polled["done"].tolist() == [[True]] and polled["reward"].tolist() == [[1.5]]
    assert polled["observation"].tolist() == [[1.0]]
    env.close()


def test_gymnasium_spaces_are_converted():
    import gymnasium as gym

    import hub.registry  # noqa: F401  (installs hub.convert_spec for ExternalEnv)

    env = ExternalEnv(gym.spaces.Box(-1, 1, (3,)), gym.spaces.Discrete(2), max_concurrent=2)
    assert env.observation_spec["observation"].shape == (2, 3)
    assert env.action_spec.shape == (2, 2)  # Discrete converts to a one-hot spec
    env.close()
