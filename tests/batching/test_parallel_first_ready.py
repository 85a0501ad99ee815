"""First-ready async batches of ParallelEnv (batch_size < num_envs): EnvPool's semantics over
worker processes, the same data as a synchronous run, and the calls it refuses."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

import hub
from hub.batching import AsyncCallError, ParallelEnv, WorkerRestartWarning
from hub.batching.first_ready import FirstReady, async_layout
from hub.envs.builtin import CountingEnv
from tests.batching.parallel_envs import FlakyEnv, SleepyEnv

pytestmark = pytest.mark.timeout(120)


def cartpole() -> hub.EnvBase:
    return hub.make_env("gymnasium:CartPole-v1", categorical_action_encoding=True)


# ---------------------------------------------------------------------- the layout and the book
def test_layout_spreads_a_batch_over_the_cpus_with_equal_workers():
    assert async_layout(16, 4, cpus=2) == (8, 2)
    assert async_layout(64, 16, cpus=2) == (8, 8)
    assert async_layout(12, 3, cpus=2) == (12, 1)  # 3 rows spread over 3 workers, not 2
    assert async_layout(16, 4, cpus=2, num_workers=16) == (16, 1)
    with pytest.raises(ValueError, match="must divide both batch_size and num_envs"):
        async_layout(16, 4, cpus=2, envs_per_worker=3)
    with pytest.raises(ValueError, match="between 1 and num_envs"):
        async_layout(4, 8, cpus=2)


def test_the_book_refuses_what_would_hang_or_lose_data():
    book = FirstReady([(0, 2), (2, 4), (4, 6)], batch_size=2)
    with pytest.raises(AsyncCallError, match="before reset"):
        book.check_fetch()
    book.started_all()
    for w in (1, 0, 2):
        book.answered(w)
    assert book.take() == [1]
    with pytest.raises(AsyncCallError, match="part of a worker"):
        book.workers_of([2])
    with pytest.raises(AsyncCallError, match="repeated env ids"):
        book.workers_of([2, 2])
    with pytest.raises(AsyncCallError, match="not fetched yet"):
        book.workers_of([0, 1])
    assert book.take() == [0]
    assert book.take() == [2]
    with pytest.raises(AsyncCallError, match="would wait forever"):
        book.take()


# ---------------------------------------------------------------------- the semantics
def test_rows_come_with_env_ids_and_restarts_are_marked_is_init():
    with ParallelEnv(8, CountingEnv, {"max_steps": 3}, batch_size=4) as env:
        assert env.is_async and env.batch_size == torch.Size([4])
        assert env.num_workers * env.envs_per_worker == 8
        td = env.reset()
        assert set(td.keys()) >= {"observation", "env_id", "is_init", "done"}
        assert "reward" not in td.keys()
        assert td["is_init"].all() and (td["observation"] == 0).all()
        seen = {}
        # first ready wins, so a worker the OS holds back may wait: step until all 8 came back
        for n in range(2000):
            if n >= 30 and set(seen) == set(range(8)):
                break
            env.step_send(env.rand_action(td))
            td = env.step_fetch(timeout=30)
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


def test_the_calls_that_cannot_be_served_are_refused():
    with ParallelEnv(4, CountingEnv, batch_size=2, num_workers=4) as env:
        with pytest.raises(AsyncCallError, match="before reset"):
            env.step_fetch()
        td = env.reset()
        with pytest.raises(AsyncCallError, match="step_send"):
            env.step(env.rand_action(td))
        with pytest.raises(AsyncCallError):
            env.rollout(3)
        with pytest.raises(AsyncCallError, match="restarts every env"):
            env.reset(td.set("_reset", torch.tensor([[True], [False]])))
        td = env.reset()
        action = env.rand_action(td)
        env.step_send(action)
        with pytest.raises(AsyncCallError, match="a step under way"):
            env.step_send(action)
        first = env.step_fetch(timeout=30)
        second = env.step_fetch(timeout=30)  # with the other envs' reset rows
        both = torch.cat([first["env_id"], second["env_id"]])
        assert sorted(both.tolist()) == [0, 1, 2, 3]
        inits = torch.cat([first["is_init"], second["is_init"]]).squeeze(-1)
        assert sorted(both[inits].tolist()) == sorted(set(range(4)) - set(td["env_id"].tolist()))
        with pytest.raises(AsyncCallError, match="would wait forever"):
            env.step_fetch()
        env.step_send(env.rand_action(first))
        env.step_send(env.rand_action(second))
        assert env.step_fetch(timeout=30).batch_size == torch.Size([2])


def test_a_slow_worker_does_not_hold_the_others_back():
    envs = [functools.partial(SleepyEnv, delay=0.0)] * 3 + [functools.partial(SleepyEnv, delay=5)]
    with ParallelEnv(4, envs, num_workers=4, batch_size=1, shutdown_timeout=0.5) as env:
        td = env.reset()
        fetched = [int(td["env_id"])]
        while min(fetched.count(i) for i in range(3)) < 3 and len(fetched) < 2000:
            env.step_send(env.rand_action(td))
            td = env.step_fetch(timeout=30)
            fetched.append(int(td["env_id"]))
        # env 3 comes back once (its reset), then steps for 5 s while the others go on
        assert fetched.count(3) == 1
        assert all(fetched.count(i) >= 3 for i in range(3))


def test_set_seed_and_get_attr_wait_for_the_steps_under_way():
    with ParallelEnv(4, CountingEnv, {"max_steps": 5}, batch_size=2) as env:
        td = env.reset()
        env.step_send(env.rand_action(td))
        assert env.get_attr("max_steps") == [5, 5, 5, 4 + 1]
        assert env.step_fetch(timeout=30).batch_size == torch.Size([2])


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
    env = ParallelEnv(num_envs, cartpole, batch_size=batch_size)
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
        td = env.step_fetch(timeout=30)
    env.close()
    for i in range(num_envs):
        assert got[i]["steps"][:steps] == want[i]["steps"], f"env {i}"
        ends = sum(done for _, _, done in want[i]["steps"])
        firsts = got[i]["first"][: ends + 1]  # the last restart may not be fetched yet
        assert len(firsts) >= ends and firsts == want[i]["first"][: len(firsts)], f"env {i}"


# ---------------------------------------------------------------------- faults
def test_a_restarted_worker_reports_all_its_envs_truncated_then_restarts_them():
    envs = [functools.partial(FlakyEnv, fail_at=0)] * 2 + [
        functools.partial(FlakyEnv, fail_at=3)
    ] * 2
    with ParallelEnv(4, envs, num_workers=2, batch_size=2, restart_failed=True) as env:
        td = env.reset()
        rows = []
        failed = None
        with pytest.warns(WorkerRestartWarning):
            # The other worker may answer many times while the failed one is rebuilt and
            # reset (first ready wins), so step until the rebuilt worker answers again.
            for n in range(2000):
                env.step_send(env.rand_action(td))
                td = env.step_fetch(timeout=30)
                rows.append(td.clone())
                if td["env_id"].tolist() != [2, 3]:
                    continue
                if failed is None and td["truncated"].all():
                    failed = n
                elif failed is not None:
                    break
        assert failed is not None, "the rebuilt worker's envs were not reported truncated"
        restarted = [r for r in rows[failed + 1 :] if r["env_id"].tolist() == [2, 3]]
        assert restarted, "the rebuilt worker never answered after its truncated rows"
        assert restarted[0]["is_init"].all()


def test_a_failing_worker_raises_and_a_reset_recovers():
    envs = [functools.partial(FlakyEnv, fail_at=0)] * 2 + [
        functools.partial(FlakyEnv, fail_at=2)
    ] * 2
    with ParallelEnv(4, envs, num_workers=2, batch_size=2) as env:
        td = env.reset()
        with pytest.raises(hub.errors.WorkerError, match="boom"):
            # First ready wins: the healthy worker may answer many times while the failing
            # one formats its traceback, so step until the failure comes back.
            for _ in range(2000):
                env.step_send(env.rand_action(td))
                td = env.step_fetch(timeout=30)
        with pytest.raises(AsyncCallError, match="reset"):
            env.step_fetch(timeout=30)
        assert env.reset()["is_init"].all()
