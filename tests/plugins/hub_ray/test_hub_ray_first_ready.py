"""First-ready async batches of RayEnv (batch_size < num_envs) on a local Ray instance:
EnvPool's semantics over Ray actors, the same data as a synchronous run, the calls it refuses,
an actor that raises and one that dies (created again with max_restarts); the collector loop
of docs/ray.md."""

from __future__ import annotations

import functools
import os
import re
import signal
from pathlib import Path

import numpy as np
import pytest
import torch
from hub_ray import ActorRestartWarning, RayEnv
from hub_ray.first_ready import first_ready_layout

import hub
from hub.batching import AsyncCallError
from hub.envs.builtin import CountingEnv
from hub.errors import WorkerError

from .ray_helpers import ExplodingEnv, SlowCountingEnv, cartpole, start_local_ray

pytest.importorskip("gymnasium")

DOCS = Path(__file__).resolve().parents[3] / "docs"


@pytest.fixture(scope="module", autouse=True)
def ray_instance():
    yield from start_local_ray()


@pytest.fixture(scope="module")
def counting():
    """4 counting envs, one per actor, fetched 2 at a time."""
    env = RayEnv(functools.partial(CountingEnv, max_steps=5), 4, batch_size=2, envs_per_actor=1)
    yield env
    env.close()


# ---------------------------------------------------------------------- the layout
def test_layout_spreads_a_batch_over_the_cpus_with_equal_actors():
    assert first_ready_layout(16, 4, cpus=2, envs_per_actor=None) == (8, 2)
    assert first_ready_layout(8, 8, cpus=2, envs_per_actor=None) == (2, 4)
    assert first_ready_layout(16, 4, cpus=2, envs_per_actor=4) == (4, 4)
    with pytest.raises(ValueError, match="whole actors: envs_per_actor .3. must divide"):
        first_ready_layout(16, 4, cpus=2, envs_per_actor=3)
    with pytest.raises(ValueError, match="between 1 and num_envs"):
        first_ready_layout(4, 8, cpus=2, envs_per_actor=None)
    with pytest.raises(TypeError, match="batch_size must be an int"):
        first_ready_layout(4, 2.0, cpus=2, envs_per_actor=None)


# ---------------------------------------------------------------------- the semantics
def test_rows_come_with_env_ids_and_restarts_are_marked_is_init():
    env = RayEnv(functools.partial(CountingEnv, max_steps=3), 8, batch_size=4)
    try:
        assert env.is_async and env.batch_size == torch.Size([4])
        assert env.num_actors * env.envs_per_actor[0] == 8 and len(set(env.envs_per_actor)) == 1
        spec = env.full_observation_spec
        assert spec["env_id"].shape == (4,) and spec["env_id"].n == 8
        assert spec["is_init"].shape == (4, 1) and spec["is_init"].dtype == torch.bool
        td = env.reset()
        assert set(td.keys()) >= {"observation", "env_id", "is_init", "done"}
        assert "reward" not in td.keys()
        assert td["is_init"].all() and (td["observation"] == 0).all()
        seen = {}
        # first ready wins, so an actor the OS holds back may wait: step until all 8 came back
        for n in range(2000):
            if n >= 30 and set(seen) == set(range(8)):
                break
            env.step_send(env.rand_action(td))
            td = env.step_fetch(timeout=60)
            assert td["env_id"].unique().numel() == 4
            for row in range(4):
                i = int(td["env_id"][row])
                obs = int(td["observation"][row])
                if td["is_init"][row]:
                    assert obs == 0 and float(td["reward"][row]) == 0.0
                    assert not td["done"][row]
                    assert seen.get(i) in (None, 3)  # a restart follows the episode's end
                else:
                    assert obs == seen.get(i, 0) + 1
                    assert bool(td["done"][row]) == (obs == 3)
                seen[i] = obs
        assert set(seen) == set(range(8))
    finally:
        env.close()


def test_the_calls_that_cannot_be_served_are_refused(counting):
    env = counting
    with pytest.raises(AsyncCallError, match="before reset"):
        env.step_fetch()
    td = env.reset()
    with pytest.raises(AsyncCallError, match="step_send"):
        env.step(env.rand_action(td))
    with pytest.raises(AsyncCallError):
        env.rollout(3)
    with pytest.raises(AsyncCallError, match="restarts every env"):
        env.reset(td.set("_reset", torch.tensor([[True], [False]])))
    with pytest.raises(AsyncCallError, match="reset_send"):
        env.reset_send()
    td = env.reset()
    with pytest.raises(AsyncCallError, match="needs td\\['env_id'\\]"):
        env.step_send(env.rand_action(td).exclude("env_id"))
    action = env.rand_action(td)
    env.step_send(action)
    with pytest.raises(AsyncCallError, match="a step under way"):
        env.step_send(action)
    first = env.step_fetch(timeout=60)
    second = env.step_fetch(timeout=60)  # with the other envs' reset rows
    both = torch.cat([first["env_id"], second["env_id"]])
    assert sorted(both.tolist()) == [0, 1, 2, 3]
    inits = torch.cat([first["is_init"], second["is_init"]]).squeeze(-1)
    assert sorted(both[inits].tolist()) == sorted(set(range(4)) - set(td["env_id"].tolist()))
    with pytest.raises(AsyncCallError, match="would wait forever"):
        env.step_fetch()
    with pytest.raises(AsyncCallError, match="repeated env ids"):
        env.step_send(env.rand_action(first.clone()).set("env_id", first["env_id"][:1].repeat(2)))
    env.step_send(env.rand_action(first))
    env.step_send(env.rand_action(second))
    assert env.step_fetch(timeout=60).batch_size == torch.Size([2])


def test_attributes_and_seeds_reach_the_actors_with_steps_under_way(counting):
    env = counting
    td = env.reset(seed=3)
    env.step_send(env.rand_action(td))
    assert env.get_attr("max_steps") == [5, 5, 5, 5]
    env.set_seed(4)
    assert env.step_fetch(timeout=60).batch_size == torch.Size([2])


def test_a_slow_actor_does_not_hold_the_others_back():
    env = RayEnv(functools.partial(SlowCountingEnv, delay=0.0), 4, envs_per_actor=1, batch_size=1)
    try:
        env.set_attr("delay", [0.0, 0.0, 0.0, 120.0])  # env 3 steps for 2 minutes
        td = env.reset()
        fetched = [int(td["env_id"])]
        # the others step while env 3 sleeps (waiting for it would time out the fetch)
        while min(fetched.count(i) for i in range(3)) < 5 or 3 not in fetched:
            env.step_send(env.rand_action(td))
            td = env.step_fetch(timeout=60)
            fetched.append(int(td["env_id"]))
        assert fetched.count(3) == 1  # its reset; then it steps for 2 minutes
    finally:
        env.close()  # kills the sleeping actor


# ---------------------------------------------------------------------- the same data
def _sync_transitions(num_envs: int, seed: int, bank: np.ndarray, steps: int) -> dict:
    """Each env's transitions (reward, next observation, done) and its episodes' first
    observations, from a synchronous SerialEnv run, env i taking bank[i][t] at its step t."""
    env = hub.SerialEnv(num_envs, cartpole)
    env.set_seed(seed)
    td = env.reset()
    record = {i: {"first": [td["observation"][i].tolist()], "steps": []} for i in range(num_envs)}
    for t in range(steps):
        td.set("action", torch.as_tensor(bank[:, t]))
        data, td = env.step_and_maybe_reset(td)
        for i in range(num_envs):
            done = bool(data["next", "done"][i])
            record[i]["steps"].append(
                (float(data["next", "reward"][i]), data["next", "observation"][i].tolist(), done)
            )
            if done:
                record[i]["first"].append(td["observation"][i].tolist())
    env.close()
    return record


@pytest.mark.parametrize("batch_size", [8, 4, 2])
def test_first_ready_batches_give_the_synchronous_data(batch_size):
    num_envs, seed, steps = 8, 7, 60
    bank = np.random.default_rng(0).integers(0, 2, size=(num_envs, steps + 5))
    want = _sync_transitions(num_envs, seed, bank, steps)
    env = hub.make_env(
        "gymnasium:CartPole-v1",
        num_envs=num_envs,
        batching="ray",
        batch_size=batch_size,
        actor_batching="serial",  # SerialEnvs in the actors: the seeds of SerialEnv
        categorical_action_encoding=True,
    )
    try:
        assert env.is_async and env.batch_size == torch.Size([batch_size])
        env.set_seed(seed)
        got = {i: {"first": [], "steps": []} for i in range(num_envs)}
        td = env.reset()
        counts = [0] * num_envs
        while min(counts) < steps:
            for row in range(batch_size):
                i = int(td["env_id"][row])
                if td["is_init"][row]:
                    got[i]["first"].append(td["observation"][row].tolist())
                else:
                    got[i]["steps"].append(
                        (
                            float(td["reward"][row]),
                            td["observation"][row].tolist(),
                            bool(td["done"][row]),
                        )
                    )
                    counts[i] += 1
            ids = td["env_id"].numpy()
            actions = [bank[i, min(counts[i], steps + 4)] for i in ids]
            td.set("action", torch.as_tensor(actions))
            env.step_send(td)
            td = env.step_fetch(timeout=60)
    finally:
        env.close()
    for i in range(num_envs):
        assert got[i]["steps"][:steps] == want[i]["steps"], f"env {i}"
        ends = sum(done for _, _, done in want[i]["steps"])
        firsts = got[i]["first"][: ends + 1]  # the last restart may not be fetched yet
        assert len(firsts) >= ends and firsts == want[i]["first"][: len(firsts)], f"env {i}"


# ---------------------------------------------------------------------- faults
def test_a_failing_actor_raises_and_a_reset_recovers():
    env = RayEnv(ExplodingEnv, 4, envs_per_actor=2, batch_size=2, timeout=120)
    try:
        # actor 1 raises at its second step; actor 0 never does
        env.set_attr("explode_at", [10**9, 10**9, 2, 2])
        td = env.reset()
        with pytest.raises(WorkerError, match="Ray actor 1 .*raised ValueError.*boom"):
            # First ready wins: actor 0 may answer many times while actor 1's error comes
            # back, so step until it does.
            for _ in range(2000):
                env.step_send(env.rand_action(td))
                td = env.step_fetch(timeout=60)
        with pytest.raises(AsyncCallError, match="reset"):
            env.step_fetch(timeout=60)
        with pytest.raises(AsyncCallError, match="reset"):
            env.step_send(env.rand_action(td))
        assert env.reset()["is_init"].all()
        env.step_send(env.rand_action(env.reset()))
        assert env.step_fetch(timeout=60).batch_size == torch.Size([2])
    finally:
        env.close()


def _steps_until(env, td, stop, kill_at=3, actor=1, limit=2000):
    """Step ``env`` (random actions), SIGKILLing ``actor``'s process before send ``kill_at``,
    until ``stop(rows)`` holds for the rows fetched so far; the rows."""
    rows = []
    for step in range(limit):
        if step == kill_at:
            os.kill(env.places[actor].pid, signal.SIGKILL)
        env.step_send(env.rand_action(td))
        td = env.step_fetch(timeout=60)
        rows.append(td.clone())
        if stop(rows):
            return rows
    raise AssertionError(f"not seen within {limit} steps")


def test_a_dead_actor_raises_without_max_restarts():
    env = RayEnv(CountingEnv, 4, envs_per_actor=2, batch_size=2, timeout=120)
    try:
        td = env.reset()
        with pytest.raises(WorkerError, match="Ray actor 1 .*died during a first-ready"):
            _steps_until(env, td, lambda rows: False)
        with pytest.raises(AsyncCallError, match="reset"):
            env.step_fetch(timeout=60)
        with pytest.raises(WorkerError, match="died during a first-ready reset"):
            env.reset()  # the actor stays dead: max_restarts creates it again
    finally:
        env.close()


def _restarted(rows) -> bool:
    """Whether envs 2 and 3 came back truncated, then started new episodes."""
    ours = [r for r in rows if r["env_id"].tolist() == [2, 3]]
    cut = [n for n, r in enumerate(ours) if r["truncated"].all()]
    return bool(cut) and any(r["is_init"].all() for r in ours[cut[0] + 1 :])


def test_a_restarted_actor_reports_all_its_envs_truncated_then_restarts_them():
    env = RayEnv(CountingEnv, 4, envs_per_actor=2, batch_size=2, max_restarts=1, timeout=120)
    try:
        td = env.reset()
        with pytest.warns(ActorRestartWarning, match="Ray actor 1 .* died"):
            rows = _steps_until(env, td, _restarted)
        assert env.restarts == [0, 1]
        ours = [r for r in rows if r["env_id"].tolist() == [2, 3]]
        n = next(n for n, r in enumerate(ours) if r["truncated"].all())
        cut = ours[n]
        assert cut["done"].all() and not cut["terminated"].any() and not cut["is_init"].any()
        assert cut["reward"].eq(0).all()
        if n:  # the observations the envs had when their actor died
            assert torch.equal(cut["observation"], ours[n - 1]["observation"])
        assert ours[n + 1]["is_init"].all() and ours[n + 1]["observation"].eq(0).all()
        others = [r for r in rows if r["env_id"].tolist() == [0, 1]]
        assert not any(r["truncated"].any() for r in others)
    finally:
        env.close()


# ---------------------------------------------------------------------- the docs
def test_the_collector_loop_of_the_docs_runs():
    text = (DOCS / "ray.md").read_text()
    section = text.split("## First-ready batches", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)
    names: dict = {}
    exec(compile(code, "docs/ray.md", "exec"), names)  # noqa: S102 (our own docs)
    transitions = names["transitions"]
    assert len(transitions) > 100
    obs, action, reward, next_obs, done = transitions[0]
    assert obs.shape == next_obs.shape == (4,) and float(reward) == 1.0
