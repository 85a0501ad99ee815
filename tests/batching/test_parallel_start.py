"""ParallelEnv start methods: fork, spawn and forkserver give the same env; factories that cannot
travel get a clear error; workers can run batched envs of their own."""

from __future__ import annotations

import functools
import multiprocessing
import os

import pytest
import torch

import hub
from hub.batching.pool import resolve_start_method
from hub.dispatch import (
    BackendFamily,
    register_backend_family,
    set_backend,
    unregister_backend_family,
)
from hub.envs.builtin import CountingEnv
from hub.errors import HubError

from .parallel_envs import backend_probe, nested_parallel

METHODS = [m for m in ("spawn", "forkserver") if m in multiprocessing.get_all_start_methods()]


def _rollout(env, seed=0):
    env.set_seed(seed)
    torch.manual_seed(seed)
    return env.rollout(5, break_when_any_done=False)


@pytest.mark.parametrize("method", METHODS)
def test_fresh_interpreters_give_the_same_rollouts(method):
    factory = functools.partial(backend_probe, max_steps=4)
    serial = hub.SerialEnv(2, factory)
    register_backend_family(BackendFamily("parallel-test", ("json", "pickle")))
    try:
        with set_backend("parallel-test", "pickle"):
            env = hub.ParallelEnv(2, factory, start_method=method)
    finally:
        unregister_backend_family("parallel-test")
    with env:
        assert env.start_method == method
        assert env.get_attr("seen_backends")[1]["parallel-test"] == "pickle"
        assert env.get_attr("pid")[1] != os.getpid()
        assert (_rollout(env) == _rollout(serial)).all()


def test_unpicklable_factories_are_refused_clearly():
    with pytest.raises(HubError, match="lambdas and local functions do not pickle"):
        hub.ParallelEnv(2, lambda: CountingEnv(), start_method="spawn")
    env = hub.ParallelEnv(2, lambda: CountingEnv(), start_method="fork")  # fork needs no pickle
    with env:
        assert env.rollout(2).batch_size == (2, 2)


def test_default_start_method():
    assert resolve_start_method(None) in multiprocessing.get_all_start_methods()
    with pytest.raises(ValueError, match="not available"):
        resolve_start_method("teleport")


def test_workers_can_run_parallel_envs_of_their_own():
    env = hub.ParallelEnv(2, nested_parallel, {"max_steps": 3})
    with env:
        assert env.batch_size == (2, 1)
        data = env.rollout(4, break_when_any_done=False)
        assert data["next", "observation"].shape == (2, 1, 4, 1)
        assert data["next", "observation"][0, 0].squeeze(-1).tolist() == [1, 2, 3, 1]


def _forkserver_env_in_child(conn) -> None:
    try:
        with hub.ParallelEnv(1, CountingEnv, start_method="forkserver") as env:
            conn.send(env.rollout(2)["next", "observation"].squeeze(-1).tolist())
    except BaseException as exc:  # noqa: BLE001 - reported to the test
        conn.send(repr(exc))


@pytest.mark.skipif(
    not {"fork", "forkserver"} <= set(multiprocessing.get_all_start_methods()),
    reason="needs fork and forkserver",
)
def test_forkserver_works_in_a_forked_child_of_a_forkserver_user():
    """A forked child inherits multiprocessing's record of its parent's fork server (whose
    pid it cannot wait for); hub makes it start its own."""
    with hub.ParallelEnv(1, CountingEnv, start_method="forkserver") as env:
        env.rollout(1)  # a fork server runs in this process now
    ctx = multiprocessing.get_context("fork")
    here, there = ctx.Pipe()
    child = ctx.Process(target=_forkserver_env_in_child, args=(there,))
    child.start()
    there.close()
    assert here.poll(120), "the child did not answer"
    assert here.recv() == [[1, 2]]
    child.join(60)
    assert child.exitcode == 0


SCRIPT_WITHOUT_MAIN_GUARD = """
import hub
from hub.envs.builtin import CountingEnv

env = hub.ParallelEnv(2, CountingEnv, start_method={method!r}, start_timeout=120)
print(env.rollout(2)["next", "observation"].sum().item())
env.close()
"""


@pytest.mark.parametrize("method", METHODS)
def test_a_script_without_a_main_guard_is_told_the_fix(method, tmp_path):
    """spawn and forkserver import the main script again in each worker: the script that
    builds a ParallelEnv at module level gets one error that names the fix."""
    import subprocess
    import sys

    script = tmp_path / "no_guard.py"
    script.write_text(SCRIPT_WITHOUT_MAIN_GUARD.format(method=method))
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert done.returncode != 0
    assert 'if __name__ == "__main__":' in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("hub.errors.")]
    assert errors[-1].startswith("hub.errors.WorkerError") and "__main__" in errors[-1], errors
    assert len(done.stderr.splitlines()) < 120  # each worker's error, then the parent's


def test_start_timeout_says_what_to_raise():
    from .parallel_envs import SleepyBuildEnv

    with pytest.raises(hub.errors.WorkerTimeoutError, match="start_timeout=0.5 s.*Raise"):
        hub.ParallelEnv(1, SleepyBuildEnv, start_timeout=0.5)
