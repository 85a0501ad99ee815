"""Rollouts of big steps written into their output by the helper thread (``StepWriter``)."""

from __future__ import annotations

import multiprocessing

import numpy as np
import pytest
import torch
from tensordict import TensorDict

import hub.envs.rollout as rollout_module
from hub.envs.builtin import PendulumEnv
from hub.envs.step_writer import StepWriter


def _env() -> PendulumEnv:
    # 2 x 128 x 128 x 3 pixels per step: above the parallel grain, a "big" step; 7-step episodes
    return PendulumEnv(from_pixels=True, pixels_size=128, max_steps=7, batch_size=(2,))


def _rollout(env, steps, **kwargs):
    torch.manual_seed(0)
    env.set_seed(0)
    return env.rollout(steps, break_when_any_done=False, **kwargs)


@pytest.fixture
def writes(monkeypatch):
    """The number of steps the helper thread was given, by rollout."""
    count = {"n": 0}
    write = StepWriter.write

    def counted(self, index, step):
        accepted = write(self, index, step)
        count["n"] += accepted
        return accepted

    monkeypatch.setattr(StepWriter, "write", counted)
    return count


@pytest.fixture
def reference(monkeypatch):
    """A rollout stacked in the calling thread (the writer refused)."""

    def run(env, steps, **kwargs):
        with monkeypatch.context() as patch:
            patch.setattr(StepWriter, "into", classmethod(lambda cls, out, step, dim: None))
            return _rollout(env, steps, **kwargs)

    return run


def test_big_steps_go_through_the_writer_and_match_the_reference(writes, reference):
    env = _env()
    expected = reference(env, 20)  # crosses two episode ends
    assert writes["n"] == 0
    result = _rollout(env, 20)
    assert writes["n"] == 20
    assert result.batch_size == torch.Size([2, 20])
    assert result.names[-1] == "time"
    assert (result == expected).all()
    out = torch.zeros_like(expected)
    assert _rollout(env, 20, out=out) is out
    assert writes["n"] == 40
    assert (out == expected).all()


def test_rollouts_that_may_stop_early_write_only_into_out(writes, reference):
    env = _env()
    expected = reference(env, 10, break_when_all_done=True)
    assert expected.batch_size == torch.Size([2, 7])
    result = _rollout(env, 10, break_when_all_done=True)
    assert writes["n"] == 0  # no output to write into: the steps are stacked at the end
    assert (result == expected).all()
    out = torch.zeros_like(reference(env, 10))
    result = _rollout(env, 10, break_when_all_done=True, out=out)
    assert writes["n"] == 7
    assert (result == expected).all()


def test_a_callback_turns_the_writer_off(writes):
    env = _env()
    seen = []
    _rollout(env, 5, callback=lambda env, td: seen.append(td["pixels"].sum()))
    assert len(seen) == 5 and writes["n"] == 0


class _Extra:
    """A policy adding an entry that changes dtype at step ``switch``."""

    def __init__(self, env, switch):
        self.env, self.switch, self.t = env, switch, 0

    def __call__(self, td):
        td = self.env.rand_action(td)
        dtype = torch.float32 if self.t < self.switch else torch.float64
        td.set("extra", torch.full((2, 1), float(self.t), dtype=dtype))
        self.t += 1
        return td


def test_a_step_unlike_the_first_stacks_the_rest_in_the_calling_thread(writes, reference):
    env = _env()
    expected = reference(env, 9, policy=_Extra(env, 4))
    result = _rollout(env, 9, policy=_Extra(env, 4))
    assert writes["n"] == 4
    assert result["extra"].dtype == expected["extra"].dtype == torch.float64
    assert result["extra"][0, :, 0].tolist() == list(range(9))
    assert (result == expected).all()


def test_a_step_unlike_out_is_refused_after_the_writer_stops(writes, reference):
    env = _env()
    out = torch.zeros_like(reference(env, 9, policy=_Extra(env, 100)))
    with pytest.raises(ValueError, match="extra"):
        _rollout(env, 9, policy=_Extra(env, 4), out=out)
    assert writes["n"] == 4


def test_an_error_in_the_rollout_waits_for_the_writer_and_propagates(monkeypatch):
    env = _env()
    calls = {"n": 0}

    def failing(td):
        calls["n"] += 1
        if calls["n"] == 6:
            raise ValueError("policy failed")
        return env.rand_action(td)

    abandoned = []
    abandon = rollout_module._StepStore.abandon
    monkeypatch.setattr(
        rollout_module._StepStore, "abandon", lambda self: abandoned.append(abandon(self))
    )
    with pytest.raises(ValueError, match="policy failed"):
        _rollout(env, 10, policy=failing)
    assert len(abandoned) == 1
    assert _rollout(env, 3).batch_size == torch.Size([2, 3])  # the writer still serves


def _step(value: float) -> TensorDict:
    return TensorDict({"a": torch.full((2, 3), value), "b": {"c": torch.ones(2)}}, [2])


def test_writer_copies_nested_leaves_in_order():
    out = TensorDict({"a": torch.zeros(2, 5, 3), "b": {"c": torch.zeros(2, 5)}}, [2, 5])
    writer = StepWriter.into(out, _step(0.0), dim=1)
    for t in range(5):
        assert writer.write(t, _step(float(t)))
    writer.wait()
    assert out["a"][1, :, 2].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert out["b", "c"].sum().item() == 10.0


def test_writer_refuses_outputs_and_steps_that_do_not_fit():
    out = TensorDict({"a": torch.zeros(2, 5, 3)}, [2, 5])
    assert StepWriter.into(out, _step(0.0), dim=1) is None  # out lacks "b"
    out = TensorDict({"a": torch.zeros(2, 5, 3), "b": {"c": torch.zeros(2, 5)}}, [2, 5])
    writer = StepWriter.into(out, _step(0.0), dim=1)
    assert not writer.write(0, TensorDict({"a": torch.zeros(2, 4), "b": {"c": torch.ones(2)}}, [2]))
    assert not writer.write(0, TensorDict({"a": torch.zeros(2, 3)}, [2]))
    writer.wait()


def test_writer_errors_are_raised_by_wait():
    out = TensorDict({"a": torch.zeros(2, 5, 3), "b": {"c": torch.zeros(2, 5)}}, [2, 5])
    writer = StepWriter.into(out, _step(0.0), dim=1)
    read_only = np.zeros((5, 2, 3), dtype=np.float32)
    read_only.flags.writeable = False
    writer.slots[0] = read_only
    assert writer.write(0, _step(1.0))
    with pytest.raises(RuntimeError, match="copying a step"):
        writer.wait()
    writer.wait()  # reported once


def _write_in_child(queue) -> None:
    out = TensorDict({"a": torch.zeros(2, 5, 3), "b": {"c": torch.zeros(2, 5)}}, [2, 5])
    writer = StepWriter.into(out, _step(0.0), dim=1)
    writer.write(2, _step(7.0))
    writer.wait()
    queue.put(out["a"][0, 2, 0].item())


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork")
def test_a_forked_child_gets_its_own_helper_thread():
    test_writer_copies_nested_leaves_in_order()  # the parent's helper thread is running
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_write_in_child, args=(queue,))
    child.start()
    assert queue.get(timeout=30) == 7.0
    child.join(timeout=30)
    assert child.exitcode == 0
