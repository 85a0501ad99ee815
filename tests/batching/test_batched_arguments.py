"""Bad arguments and bad sub-env outputs get clear hub errors from every batched env."""

from __future__ import annotations

import numpy as np
import pytest

import hub
from hub.envs.builtin import CountingEnv
from hub.errors import BatchingError, SpecMismatchError, WorkerError

from .parallel_envs import WideObservationEnv


@pytest.mark.parametrize("cls", [hub.SerialEnv, hub.ParallelEnv])
def test_an_output_of_another_shape_than_its_spec_is_refused(cls):
    env = cls(2, WideObservationEnv)
    with env:
        td = env.reset()
        # (a ParallelEnv's worker raises it: the parent's WorkerError carries it)
        with pytest.raises((SpecMismatchError, WorkerError), match=r"observation.*\[1\].*\[3\]"):
            env.step(env.rand_action(td))


def test_serial_env_names_the_sub_env_with_the_wrong_shape():
    env = hub.SerialEnv(2, [CountingEnv, WideObservationEnv])
    td = env.reset()
    with pytest.raises(SpecMismatchError, match="sub-env 1"):
        env.step(env.rand_action(td))


@pytest.mark.parametrize("cls", [hub.SerialEnv, hub.ParallelEnv])
@pytest.mark.parametrize("n", [10**9, 4097, 0, -1])
def test_num_workers_out_of_range_is_refused_before_anything_is_built(cls, n):
    with pytest.raises(BatchingError, match="between 1 and 4096"):
        cls(n, CountingEnv)


@pytest.mark.parametrize("cls", [hub.SerialEnv, hub.ParallelEnv])
@pytest.mark.parametrize("n", [2.5, "2", None, True])
def test_num_workers_that_is_not_an_int_is_refused(cls, n):
    with pytest.raises(BatchingError, match="whole number of sub-envs"):
        cls(n, CountingEnv)


def test_numpy_ints_are_whole_numbers():
    assert hub.SerialEnv(np.int64(2), CountingEnv).batch_size == (2,)


def test_make_env_refuses_a_huge_num_envs_for_serial_batching():
    with pytest.raises(BatchingError, match="between 1 and 4096"):
        hub.make_env("hub:Counting", num_envs=10**9, batching="serial")


@pytest.mark.parametrize("batching", ["serial", "parallel"])
def test_make_env_passes_the_same_timeout_to_each_strategy(batching):
    env = hub.make_env("hub:Counting", num_envs=2, batching=batching, timeout=7.5)
    with env:
        assert env.timeout == 7.5
    with pytest.raises(BatchingError, match="timeout must be a number of seconds"):
        hub.make_env("hub:Counting", num_envs=2, batching=batching, timeout=0)


def test_make_env_refuses_a_timeout_for_a_single_env():
    with pytest.raises(BatchingError, match="pass num_envs=N"):
        hub.make_env("hub:Counting", timeout=5)
