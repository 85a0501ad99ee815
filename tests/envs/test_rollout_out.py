"""``rollout(out=...)``, chunked stacking, and the calling-thread copies of big tensors."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch
from tensordict import LazyStackedTensorDict

import hub
from hub.envs import serial_ops
from hub.envs.builtin import PendulumEnv
from hub.envs.serial_ops import PARALLEL_GRAIN, empty_cpu, stack_tensors, where_rows
from hub.envs.stacking import stack_like
from hub.envs.trajectory import CHUNK


def _rollout(env: hub.EnvBase, steps: int, **kwargs):
    torch.manual_seed(0)
    env.set_seed(0)
    kwargs.setdefault("break_when_any_done", False)
    return env.rollout(steps, **kwargs)


def test_out_receives_the_same_data_as_a_new_rollout():
    env = hub.make_env("hub:Counting", num_envs=3, max_steps=4)
    expected = _rollout(env, 10)
    out = torch.zeros_like(expected)
    result = _rollout(env, 10, out=out)
    assert result is out
    assert (out == expected).all()
    assert out.names[-1] == "time"


def test_out_is_reused_across_rollouts():
    env = hub.make_env("hub:Counting", num_envs=2, max_steps=3)
    first = _rollout(env, 5)
    pointer = first["next", "observation"].data_ptr()
    second = env.rollout(5, break_when_any_done=False, out=first)
    assert second["next", "observation"].data_ptr() == pointer


def test_an_early_stop_fills_the_first_slots_of_out():
    env = hub.make_env("hub:Counting", max_steps=3)
    out = torch.zeros_like(_rollout(env, 10))
    result = env.rollout(10, out=out)  # breaks at the first done: 3 steps
    assert result.batch_size == torch.Size([3])
    assert result["next", "observation"].data_ptr() == out["next", "observation"].data_ptr()
    assert out["next", "observation"][:3].squeeze(-1).tolist() == [1, 2, 3]


def test_out_of_the_wrong_size_says_what_is_needed():
    env = hub.make_env("hub:Counting", num_envs=2, max_steps=3)
    out = _rollout(env, 4)
    with pytest.raises(ValueError, match="time dim of at least 6 steps"):
        env.rollout(6, break_when_any_done=False, out=out)
    with pytest.raises(ValueError, match="return_contiguous=True"):
        env.rollout(4, break_when_any_done=False, out=out, return_contiguous=False)


def test_out_with_the_wrong_dtype_is_refused():
    env = hub.make_env("hub:Counting", max_steps=3)
    out = _rollout(env, 4)
    out["observation"] = out["observation"].double()
    with pytest.raises(ValueError, match="observation"):
        env.rollout(4, break_when_any_done=False, out=out)


def test_pixel_rollout_into_out_matches():
    env = PendulumEnv(from_pixels=True, pixels_size=128)
    expected = _rollout(env, 6)
    assert expected["pixels"][0].numel() >= PARALLEL_GRAIN  # goes through the numpy copy
    out = torch.zeros_like(expected)
    _rollout(env, 6, out=out)
    assert (out == expected).all()


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_stack_tensors_matches_torch_stack(dim):
    tensors = [torch.randint(0, 255, (4, 3, 84, 84), dtype=torch.uint8) for _ in range(5)]
    assert torch.equal(stack_tensors(tensors, dim), torch.stack(tensors, dim))
    out = torch.empty_like(torch.stack(tensors, dim))
    assert stack_tensors(tensors, dim, out=out) is out
    assert torch.equal(out, torch.stack(tensors, dim))


@pytest.mark.parametrize("dtype", [torch.uint8, torch.float32, torch.int64])
def test_big_stacks_live_on_huge_pages_and_are_ordinary_tensors(dtype):
    """From HUGE_PAGE_MIN_BYTES on, a stack's memory is a private mapping advised for huge
    pages (where Linux offers them); the values, shape and strides are torch.stack's."""
    rows = serial_ops.HUGE_PAGE_MIN_BYTES // (4 * 64 * dtype.itemsize)
    tensors = [torch.full((rows, 64), i, dtype=dtype) for i in range(5)]
    stacked = stack_tensors(tensors, 1)
    assert torch.equal(stacked, torch.stack(tensors, 1))
    assert stacked.stride() == torch.stack(tensors, 1).stride()
    if serial_ops._huge_pages_offered():
        assert stacked.data_ptr() % serial_ops.HUGE_PAGE == 0
    view = stacked[:, 2]
    del stacked, tensors  # the mapping lives as long as a view of it
    assert bool((view == 2).all())
    view.share_memory_()
    assert bool((view == 2).all())


@pytest.mark.skipif(not serial_ops._huge_pages_offered(), reason="no transparent huge pages")
def test_freed_big_buffers_are_reused_up_to_the_cache_limit(monkeypatch):
    """A freed mapping is kept for the next buffer of its size (no new page faults), only once
    no view of it is left, and the cache holds at most CACHE_MAX_BYTES."""
    serial_ops.release_cached_memory()
    shape = (serial_ops.HUGE_PAGE_MIN_BYTES // 1024, 1024)
    first = empty_cpu(shape, torch.uint8)
    first.fill_(7)
    address = first.data_ptr()
    view = first[3]
    del first
    assert serial_ops._CACHE.free == []  # a view still uses the mapping
    assert bool((view == 7).all())
    del view
    again = empty_cpu(shape, torch.uint8)
    assert again.data_ptr() == address
    other = empty_cpu((shape[0] * 2, 1024), torch.uint8)  # another size: a new mapping
    assert other.data_ptr() != address
    del again, other
    assert len(serial_ops._CACHE.free) == 2
    serial_ops.release_cached_memory()
    assert serial_ops._CACHE.free == []
    monkeypatch.setattr(serial_ops, "CACHE_MAX_BYTES", 3 * serial_ops.HUGE_PAGE_MIN_BYTES)
    buffers = [empty_cpu(shape, torch.uint8) for _ in range(4)]
    del buffers
    cached = serial_ops._CACHE.free
    assert len(cached) == 2 and sum(len(r) for r in cached) <= serial_ops.CACHE_MAX_BYTES
    serial_ops.release_cached_memory()


def test_small_buffers_are_plain_torch_memory():
    small = empty_cpu((4, 3), torch.float32)
    assert small.untyped_storage().nbytes() == small.nbytes


def test_stack_tensors_into_a_strided_view():
    tensors = [torch.full((2, PARALLEL_GRAIN), float(i)) for i in range(3)]
    buffer = torch.zeros(2, 5, PARALLEL_GRAIN)
    stack_tensors(tensors, 1, out=buffer[:, :3])
    assert buffer[:, :, 0].tolist() == [[0, 1, 2, 0, 0]] * 2


def test_stack_tensors_falls_back_to_torch():
    bf16 = [torch.ones(PARALLEL_GRAIN, dtype=torch.bfloat16) for _ in range(2)]
    assert stack_tensors(bf16, 0).dtype == torch.bfloat16
    grad = [torch.ones(PARALLEL_GRAIN, requires_grad=True) for _ in range(2)]
    assert stack_tensors(grad, 0).requires_grad
    mixed = [torch.ones(PARALLEL_GRAIN), torch.ones(PARALLEL_GRAIN, dtype=torch.float64)]
    assert stack_tensors(mixed, 0).dtype == torch.float64  # torch's type promotion


def test_where_rows_matches_torch_where():
    mask = torch.tensor([True, False, True])
    new = torch.randint(0, 255, (3, 4, 84, 84), dtype=torch.uint8)
    old = torch.randint(0, 255, (3, 4, 84, 84), dtype=torch.uint8)
    expected = torch.where(mask.reshape(3, 1, 1, 1), new, old)
    assert torch.equal(where_rows(mask, new, old), expected)
    small = where_rows(mask, torch.ones(3, 2), torch.zeros(3, 2))
    assert small[:, 0].tolist() == [1.0, 0.0, 1.0]


def test_stack_like_into_out_checks_keys():
    from tensordict import TensorDict

    tds = [TensorDict({"a": torch.zeros(2)}, [2]) for _ in range(3)]
    with pytest.raises(KeyError, match="'a'"):
        stack_like(tds, dim=1, out=TensorDict({"b": torch.zeros(2, 3)}, [2, 3]))
    assert np.array_equal(stack_like(tds, dim=1)["a"].numpy(), np.zeros((2, 3)))


def test_going_on_from_the_last_step_of_out_into_out():
    env = PendulumEnv(from_pixels=True, pixels_size=128)  # its state lives in the tensordict
    torch.manual_seed(0)
    data = env.rollout(5)
    start = env.step_mdp(data[..., -1])  # views the last slot of data
    torch.manual_seed(1)
    expected = env.rollout(5, auto_reset=False, tensordict=start.clone())
    torch.manual_seed(1)
    result = env.rollout(5, auto_reset=False, tensordict=start, out=data)
    assert result is data
    assert (result == expected).all()


@pytest.fixture
def no_chunks(monkeypatch):
    """Rollouts that stack every step at the end (the reference for chunked stacking)."""
    import hub.envs.trajectory as rollout_module

    def run(env, steps, **kwargs):
        with monkeypatch.context() as patch:
            patch.setattr(rollout_module, "CHUNK", 10**9)
            return _rollout(env, steps, **kwargs)

    return run


@pytest.mark.parametrize("steps", [CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 5])
def test_chunked_stacking_equals_stacking_at_the_end(no_chunks, steps):
    env = hub.make_env("hub:Counting", num_envs=2, max_steps=7)
    expected = no_chunks(env, steps)
    result = _rollout(env, steps)
    assert result.batch_size == expected.batch_size == torch.Size([2, steps])
    assert (result == expected).all()


def test_chunked_stacking_into_out_with_an_early_stop(no_chunks):
    env = PendulumEnv(from_pixels=True, pixels_size=128)  # big steps: chunks only into out
    expected = no_chunks(env, CHUNK + 3)
    out = torch.zeros_like(expected)
    assert _rollout(env, CHUNK + 3, out=out) is out
    assert (out == expected).all()
    counting = hub.make_env("hub:Counting", max_steps=CHUNK + 2)
    buffer = torch.zeros_like(_rollout(counting, 2 * CHUNK))
    data = counting.rollout(2 * CHUNK, out=buffer)  # stops at the first done
    assert data.batch_size == torch.Size([CHUNK + 2])
    assert data["next", "observation"][-1].item() == CHUNK + 2
    assert data["next", "observation"].data_ptr() == buffer["next", "observation"].data_ptr()


def test_break_when_all_done_across_chunks(no_chunks):
    env = hub.SerialEnv(
        2, hub.envs.builtin.CountingEnv, [{"max_steps": CHUNK + 5}, {"max_steps": 2 * CHUNK}]
    )
    kwargs = {"break_when_all_done": True}
    expected = no_chunks(env, 3 * CHUNK, **kwargs)
    result = _rollout(env, 3 * CHUNK, **kwargs)
    assert result.batch_size == torch.Size([2, 2 * CHUNK])
    assert (result == expected).all()


def test_lazy_rollouts_are_not_chunked():
    env = hub.make_env("hub:Counting", max_steps=1000)
    data = _rollout(env, CHUNK + 1, return_contiguous=False)
    assert isinstance(data, LazyStackedTensorDict)
    assert len(data.tensordicts) == CHUNK + 1


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_big_stacks_split_with_the_helper_thread_match_torch_stack(dim):
    """From SPLIT_MIN_BYTES on, half of a stack is copied by the helper thread (odd counts,
    every dim, into a strided view of a bigger buffer)."""
    cols = serial_ops.SPLIT_MIN_BYTES // (7 * 4) + 1  # 7 tensors of 4 rows: just over the size
    tensors = [torch.full((4, cols), i, dtype=torch.uint8) for i in range(7)]
    assert torch.equal(stack_tensors(tensors, dim), torch.stack(tensors, dim))
    if torch.get_num_threads() > 1:  # else torch copies alone, serially
        assert any(t.name == "hub-copy" for t in threading.enumerate())
    expected = torch.stack(tensors, dim)
    big = torch.zeros(*expected.shape[:dim], 9, *expected.shape[dim + 1 :], dtype=torch.uint8)
    view = big.narrow(dim, 1, 7)
    stack_tensors(tensors, dim, out=view)
    assert torch.equal(view, expected)
    assert int(big.narrow(dim, 0, 1).sum()) == 0 and int(big.narrow(dim, 8, 1).sum()) == 0
