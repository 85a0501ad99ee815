"""ParallelEnv failures: worker exceptions, killed workers, timeouts, restarts, clean shutdown."""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import psutil
import pytest

import hub
from hub.batching import WorkerRestartWarning
from hub.envs.builtin import CountingEnv
from hub.errors import WorkerError, WorkerTimeoutError

from .parallel_envs import BrokenEnv, FlakyEnv, SleepyEnv


def _children() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True) if p.is_running()}


def _gone(pids, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        alive = [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"]
        if not alive:
            return True
        time.sleep(0.05)
    return False


def test_worker_exception_reraises_with_index_and_traceback():
    env = hub.ParallelEnv(2, FlakyEnv, [{"fail_at": 0}, {"fail_at": 3}])
    with env:
        with pytest.raises(WorkerError) as info:
            env.rollout(10, break_when_any_done=False)
        err = info.value
        assert err.worker == 1
        text = str(err)
        assert "boom" in text and "worker 1" in text and "ValueError" in text
        assert "Traceback" in err.traceback and "_step" in err.traceback
        # the worker survived its exception: the env goes on after a reset
        assert env.rollout(3, break_when_any_done=False).batch_size == (2, 3)


def test_a_failing_constructor_raises_and_leaves_no_process():
    before = _children()
    with pytest.raises(WorkerError, match="cannot build this env") as info:
        hub.ParallelEnv(2, BrokenEnv)
    assert "RuntimeError" in str(info.value) and info.value.traceback
    assert _gone(_children() - before)


def test_a_killed_worker_is_reported_quickly_and_never_hangs():
    env = hub.ParallelEnv(2, CountingEnv, {"max_steps": 1000})
    victim = env.worker_pids()[1]

    def kill_at_step_3(env_, data):
        if kill_at_step_3.calls == 3:
            os.kill(victim, signal.SIGKILL)
        kill_at_step_3.calls += 1

    kill_at_step_3.calls = 0
    start = time.monotonic()
    with pytest.raises(WorkerError, match=r"worker 1 was killed by signal SIGKILL") as info:
        env.rollout(1000, callback=kill_at_step_3)
    assert time.monotonic() - start < 30
    assert info.value.worker == 1
    with pytest.raises(WorkerError, match="worker 1 .*earlier.*restart_failed=True"):
        env.reset()
    pids = env.worker_pids()
    env.close()
    assert _gone(pids)


def test_step_fetch_timeout_keeps_the_env_usable():
    env = hub.ParallelEnv(2, SleepyEnv, [{"delay": 0.0}, {"delay": 1.0}])
    with env:
        td = env.reset()
        env.step_send(env.rand_action(td))
        with pytest.raises(WorkerTimeoutError, match=r"workers \[1\] did not answer") as info:
            env.step_fetch(timeout=0.05)
        assert info.value.worker == 1
        out = env.step_fetch(timeout=60)  # the same step, now complete
        assert out["next", "observation"].squeeze(-1).tolist() == [1, 1]
        env.set_attr("delay", 0.0)
        assert env.rollout(3)["next", "observation"][:, -1].squeeze(-1).tolist() == [3, 3]


def test_synchronous_timeout_can_be_fetched_later():
    env = hub.ParallelEnv(1, SleepyEnv, {"delay": 1.0})
    with env:
        td = env.rand_action(env.reset())
        env.timeout = 0.05
        with pytest.raises(WorkerTimeoutError):
            env.step(td)
        assert env.step_fetch(timeout=60)["next", "observation"].item() == 1


def test_restart_failed_rebuilds_a_raising_worker():
    env = hub.ParallelEnv(2, FlakyEnv, [{"fail_at": 0}, {"fail_at": 2}], restart_failed=True)
    with env:
        env.set_seed(0)
        td = env.reset()
        with pytest.warns(WorkerRestartWarning, match="worker 1 was rebuilt"):
            for _ in range(3):
                data, td = env.step_and_maybe_reset(env.rand_action(td))
                if env.restarts[1]:
                    break
        assert env.restarts == [0, 1]
        # the failed step cut worker 1's episode where it was, without a reward
        assert data["next", "truncated"].squeeze(-1).tolist() == [False, True]
        assert data["next", "terminated"].squeeze(-1).tolist() == [False, False]
        assert data["next", "reward"][1].item() == 0
        assert td["observation"][1].item() == 0  # and the rebuilt worker starts anew
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            env.rollout(1)  # (the rebuilt env would fail again at its own step 2)


def test_a_rebuilt_worker_reports_every_env_it_holds_truncated():
    # worker 1 holds sub-envs 2 and 3; sub-env 3 raises at its second step
    kwargs = [{"fail_at": 0}] * 3 + [{"fail_at": 2}]
    env = hub.ParallelEnv(4, FlakyEnv, kwargs, num_workers=2, restart_failed=True)
    with env:
        assert env.envs_per_worker == 2
        td = env.reset()
        with pytest.warns(WorkerRestartWarning, match="holds sub-envs 2-3"):
            for _ in range(3):
                data, td = env.step_and_maybe_reset(env.rand_action(td))
                if env.restarts[1]:
                    break
        assert env.restarts == [0, 1]
        assert data["next", "truncated"].squeeze(-1).tolist() == [False, False, True, True]
        assert data["next", "reward"][2:].abs().sum().item() == 0
        assert td["observation"][2:].squeeze(-1).tolist() == [0, 0]  # both start anew
        assert td["observation"][:2].squeeze(-1).tolist() == [2, 2]


def test_restart_failed_rebuilds_a_killed_worker():
    env = hub.ParallelEnv(2, CountingEnv, restart_failed=True)
    with env:
        td = env.reset()
        old = env.worker_pids()[0]
        os.kill(old, signal.SIGKILL)
        with pytest.warns(WorkerRestartWarning, match="SIGKILL"):
            data, td = env.step_and_maybe_reset(env.rand_action(td))
        assert env.restarts == [1, 0] and old not in env.worker_pids()
        assert env.rollout(3, break_when_any_done=False).batch_size == (2, 3)


def test_close_is_idempotent_and_leaves_no_child():
    before = _children()
    env = hub.ParallelEnv(3, CountingEnv, num_workers=3)
    env.rollout(2)
    pids = env.worker_pids()
    assert len(pids) == 3 and set(pids) <= _children() - before
    start = time.monotonic()
    env.close()
    assert time.monotonic() - start < 10
    env.close()
    assert _gone(pids) and not (_children() - before)


def test_garbage_collection_stops_the_workers():
    env = hub.ParallelEnv(2, CountingEnv)
    pids = env.worker_pids()
    del env
    gc.collect()
    assert _gone(pids)


def _owner(conn, then: str) -> None:
    """The body of a process that owns a ParallelEnv, then exits or is killed."""
    env = hub.ParallelEnv(2, CountingEnv)
    env.rollout(2)
    conn.send(env.worker_pids())
    if then == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    # "exit": return without close(); exiting must stop the workers


@pytest.mark.parametrize("then", ["exit", "kill"])
def test_an_owner_that_exits_or_dies_takes_its_workers_down(then):
    ctx = multiprocessing.get_context("fork")
    here, there = ctx.Pipe()
    owner = ctx.Process(target=_owner, args=(there, then))
    owner.start()
    there.close()  # so that an owner that fails before it answers gives EOF, not a hang
    assert here.poll(120), "the owner process did not answer"
    pids = here.recv()
    owner.join(60)
    assert owner.exitcode == (-signal.SIGKILL if then == "kill" else 0)
    assert len(pids) == 2 and _gone(pids, within=20)


@pytest.mark.slow
def test_interpreter_exit_stops_the_workers():
    script = textwrap.dedent(
        """
        import hub
        from hub.envs.builtin import CountingEnv
        env = hub.ParallelEnv(2, CountingEnv)
        env.rollout(2)
        print(" ".join(map(str, env.worker_pids())), flush=True)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True
    )
    pids = [int(p) for p in out.stdout.split()]
    assert len(pids) == 2 and _gone(pids)
    assert "Traceback" not in out.stderr and "leaked" not in out.stderr


def test_torch_threads_are_one_per_worker():
    env = hub.ParallelEnv(2, FlakyEnv)
    with env:
        assert env.torch_threads() == [1, 1]


class _SeenAliveOnce:
    """A process that exited, but that the first ``is_alive()`` still reports alive: the race
    of a worker exiting between the shutdown loop's liveness check and its wait."""

    def __init__(self, proc):
        self._proc = proc
        self._calls = 0

    def is_alive(self):
        self._calls += 1
        return self._calls == 1 or self._proc.is_alive()

    def __getattr__(self, name):
        return getattr(self._proc, name)


def test_shutdown_does_not_wait_on_nothing_when_the_last_worker_just_exited(monkeypatch):
    from hub.batching import pool, signals
    from hub.batching.shared_buffers import SharedBuffers

    proc = multiprocessing.get_context("fork").Process(target=int)
    proc.start()
    proc.join()
    waited = []

    def wait_for(fds, timeout):
        waited.append(list(fds))
        return []

    monkeypatch.setattr(signals, "wait_for", wait_for)
    pool._shutdown([_SeenAliveOnce(proc)], [], SharedBuffers.create(), os.getpid(), 5.0)
    assert waited == []  # before the fix: one wait on no fd at all, 0.5 s
