"""Non-tensor entries (strings, objects: MiniGrid's mission, a ``Text`` observation) through
``ParallelEnv``: shared memory cannot hold them, so each worker sends their values with its
answer; the data equals ``SerialEnv``'s, in every mode."""

from __future__ import annotations

import functools

import pytest
import torch

import hub
from hub.batching import ParallelEnv, SerialEnv, WorkerRestartWarning
from hub.batching.shared_buffers import BufferLayout
from hub.specs import NonTensor, Unbounded
from tests.batching.parallel_envs import FlakyWordEnv, WordEnv

pytestmark = pytest.mark.timeout(120)


def words(n: int = 4, max_steps: int = 3) -> list:
    return [functools.partial(WordEnv, name=f"e{i}", max_steps=max_steps) for i in range(n)]


def test_the_layout_sends_non_tensor_outputs_with_the_answers():
    groups = {
        "input": [("action", Unbounded((2, 1)))],
        "next": [("observation", Unbounded((2, 1))), ("word", NonTensor(shape=(2,)))],
    }
    layout = BufferLayout.from_groups((2,), groups, [(0, 1), (1, 2)], optional={"next"})
    assert layout.side == {"next": ("word",)}
    assert [leaf.key for leaf in layout.groups["next"]] == ["observation"]
    with pytest.raises(hub.errors.HubError, match="non-tensor input 'note'"):
        BufferLayout.from_groups((2,), {"input": [("note", NonTensor(shape=(2,)))]}, [(0, 2)])


@pytest.mark.parametrize("num_workers", [4, 2, 1])
def test_rollouts_equal_serial_across_episode_ends(num_workers: int):
    want = SerialEnv(4, words()).rollout(8, break_when_any_done=False)
    with ParallelEnv(4, words(), num_workers=num_workers) as env:
        assert env.envs_per_worker == 4 // num_workers
        have = env.rollout(8, break_when_any_done=False)
    for key in ("word", ("next", "word")):
        assert have.get(key).tolist() == want.get(key).tolist(), key
    assert (have["next", "observation"] == want["next", "observation"]).all()
    first = have.get("word").tolist()
    assert first[2][:4] == ["e2:0", "e2:1", "e2:2", "e2:0"]  # a new episode after step 3


def test_step_and_maybe_reset_and_partial_steps():
    with ParallelEnv(4, words(), num_workers=2) as env:
        td = env.reset()
        assert td.get("word").tolist() == ["e0:0", "e1:0", "e2:0", "e3:0"]
        td["action"] = torch.ones(4, 1, dtype=torch.int64)
        td["_step"] = torch.tensor([True, False, True, False])
        out = env.step(td)
        # the rows that did not step keep their words, as every other entry
        assert out.get(("next", "word")).tolist() == ["e0:1", "e1:0", "e2:1", "e3:0"]
        td = env.reset()
        for _ in range(3):
            data, td = env.step_and_maybe_reset(env.rand_action(td))
        assert data.get(("next", "word")).tolist() == ["e0:3", "e1:3", "e2:3", "e3:3"]
        assert td.get("word").tolist() == ["e0:0", "e1:0", "e2:0", "e3:0"]


@pytest.mark.parametrize("envs_per_worker", [1, 2])
def test_first_ready_rows_come_with_their_words(envs_per_worker: int):
    with ParallelEnv(4, words(), batch_size=2, envs_per_worker=envs_per_worker) as env:
        td = env.reset()
        seen = 0
        for _ in range(12):
            for i, obs, word in zip(
                td["env_id"].tolist(),
                td["observation"].reshape(-1).tolist(),
                td.get("word").tolist(),
            ):
                assert word == f"e{i}:{obs}"
                seen += 1
            env.step_send(env.rand_action(td))
            td = env.step_fetch(timeout=30)
        assert seen == 24


def test_a_rebuilt_worker_repeats_its_last_words_truncated_then_starts_anew():
    envs = [
        functools.partial(WordEnv, name="e0", max_steps=5),
        functools.partial(FlakyWordEnv, name="e1", max_steps=5, fail_at=2),
    ]
    with ParallelEnv(2, envs, restart_failed=True) as env:
        td = env.reset()
        data, td = env.step_and_maybe_reset(env.rand_action(td))
        assert data.get(("next", "word")).tolist() == ["e0:1", "e1:1"]
        with pytest.warns(WorkerRestartWarning):
            data, td = env.step_and_maybe_reset(env.rand_action(td))
        assert data.get(("next", "word")).tolist() == ["e0:2", "e1:1"]  # the last word kept
        assert data["next", "truncated"].reshape(-1).tolist() == [False, True]
        assert td.get("word").tolist() == ["e0:2", "e1:0"]  # the rebuilt env starts anew
