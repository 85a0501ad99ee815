"""EnvPool's worker threads: one per CPU of the process's affinity mask unless the user says."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hub_envpool.threads import default_num_threads

import hub

pytestmark = pytest.mark.skipif(
    not hasattr(os, "sched_getaffinity"), reason="the platform has no affinity mask"
)


def _threads(env) -> int:
    env.reset()
    return int(env._env.config["num_threads"])


def test_the_pool_gets_one_thread_per_cpu_of_the_process_up_to_its_batch():
    cpus = len(os.sched_getaffinity(0))
    with hub.make_env("envpool:CartPole-v1", num_envs=8) as env:
        assert _threads(env) == min(8, cpus) == default_num_threads(8)
    with hub.make_env("envpool:CartPole-v1", num_envs=1) as env:
        assert _threads(env) == 1


def test_a_num_threads_of_the_user_is_kept():
    with hub.make_env("envpool:CartPole-v1", num_envs=4, num_threads=3) as env:
        assert _threads(env) == 3


def test_a_process_pinned_to_one_cpu_gets_one_thread():
    """EnvPool's own default would be one thread per hardware thread of the machine."""
    script = (
        "import os\n"
        "os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
        "import hub\n"
        "env = hub.make_env('envpool:CartPole-v1', num_envs=8)\n"
        "env.reset()\n"
        "print(env._env.config['num_threads'])\n"
        "env.close()\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == "1"
