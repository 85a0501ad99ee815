"""``close()`` releases every descriptor at once: the shared file's mapping, the pipes and the
process sentinels, not when the env object is garbage-collected."""

from __future__ import annotations

import os
import resource

import pytest

import hub
from hub.envs.builtin import CountingEnv

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _closed_env() -> hub.ParallelEnv:
    env = hub.ParallelEnv(1, CountingEnv, start_method="fork", spin_wait=0)
    env.rollout(1)
    env.close()
    return env


def test_200_closed_envs_hold_no_descriptor():
    _closed_env()  # anything a first env opens for good (none expected) is opened now
    before = _fds()
    held = [_closed_env() for _ in range(200)]
    assert _fds() - before <= 2  # before the fix: 3 more per env (mapping, sentinel, ...)
    assert len(held) == 200


def test_closed_envs_fit_under_a_low_descriptor_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    low = _fds() + 24  # room for two live envs at a time, not for leaks
    resource.setrlimit(resource.RLIMIT_NOFILE, (low, hard))
    try:
        held = [_closed_env() for _ in range(60)]  # before the fix: EMFILE within 8 envs
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert len(held) == 60
