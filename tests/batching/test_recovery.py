"""After a timeout or an interrupt, a batched env is usable again or says precisely what to
do; SerialEnv and ParallelEnv take the same ``timeout``."""

from __future__ import annotations

import os
import signal
import threading
import warnings

import pytest
from tensordict import TensorDictBase

import hub
from hub.batching import AsyncCallError, WorkerRestartWarning
from hub.errors import HubError, WorkerError, WorkerTimeoutError

from .parallel_envs import FaultyEnv, SleepyEnv


def _counts(data) -> list:
    return data["next", "observation"][:, -1].squeeze(-1).tolist()


def test_a_timed_out_step_says_what_to_do_and_reset_drops_it():
    env = hub.ParallelEnv(2, FaultyEnv, timeout=0.2)
    with env:
        td = env.reset()
        env.set_attr("fault", [None, "slow"])
        with pytest.raises(WorkerTimeoutError, match=r"step_fetch.*reset\(\).*restart_failed"):
            env.step(env.rand_action(td))
        with pytest.raises(AsyncCallError, match=r"timed out.*env.reset\(\) drops it"):
            env.step(env.rand_action(td))
        env.timeout = 30
        assert _counts(env.rollout(3)) == [3, 3]


def test_step_fetch_after_a_timed_out_step_and_maybe_reset_gives_a_tensordict():
    env = hub.ParallelEnv(2, FaultyEnv, timeout=0.2)
    with env:
        td = env.reset()
        env.set_attr("fault", [None, "slow"])
        with pytest.raises(WorkerTimeoutError):
            env.step_and_maybe_reset(env.rand_action(td))
        out = env.step_fetch(timeout=30)
        assert isinstance(out, TensorDictBase)
        assert out["next", "observation"].squeeze(-1).tolist() == [1, 1]


def test_restart_failed_kills_and_rebuilds_a_hung_worker():
    env = hub.ParallelEnv(2, FaultyEnv, restart_failed=True, timeout=1.0)
    with env:
        td = env.reset()
        data, td = env.step_and_maybe_reset(env.rand_action(td))
        old = env.worker_pids()[1]
        env.set_attr("fault", [None, "hang"])
        with pytest.warns(WorkerRestartWarning, match="worker 1 did not answer within 1.0 s"):
            data, td = env.step_and_maybe_reset(env.rand_action(td))
        assert env.restarts == [0, 1] and old not in env.worker_pids()
        assert data["next", "truncated"].squeeze(-1).tolist() == [False, True]
        assert data["next", "observation"].squeeze(-1).tolist() == [2, 1]  # cut where it was
        assert td["observation"].squeeze(-1).tolist() == [2, 0]  # a new episode for worker 1
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert _counts(env.rollout(2, break_when_any_done=False)) == [2, 2]


def test_a_hung_worker_in_an_attribute_call_is_rebuilt_by_the_next_call():
    env = hub.ParallelEnv(2, SleepyEnv, restart_failed=True, timeout=0.5)
    with env:
        env.set_attr("delay", [0.0, 3600.0])
        with pytest.raises(WorkerError, match="worker 1 did not answer within 0.5 s"):
            env.nap()
        with pytest.warns(WorkerRestartWarning, match="worker 1"):
            td = env.reset()
        assert env.restarts == [0, 1] and env.delay == [0.0, 0.0]
        assert env.step(env.rand_action(td))["next", "observation"].squeeze(-1).tolist() == [1, 1]


def test_ctrl_c_mid_rollout_leaves_a_usable_env(sigint_raises):
    env = hub.ParallelEnv(2, FaultyEnv)
    with env:
        env.reset()
        env.set_attr("interrupt_pid", [0, os.getpid()])  # worker 1 sends the Ctrl-C mid-step
        env.set_attr("fault", [None, "interrupt"])
        with pytest.raises(KeyboardInterrupt):
            env.rollout(5, break_when_any_done=False)
        td = env.rand_action(env.fake_tensordict().exclude("next"))
        with pytest.raises(HubError, match=r"did not complete.*call env.reset\(\)"):
            env.step(td)
        # the late answer of the interrupted step is dropped, not read as the next one's
        assert _counts(env.rollout(3, break_when_any_done=False)) == [3, 3]
        assert _counts(env.rollout(2, break_when_any_done=False)) == [2, 2]


def test_ctrl_c_during_an_attribute_call_leaves_a_usable_env(sigint_raises):
    env = hub.ParallelEnv(2, FaultyEnv)
    with env:
        env.set_attr("interrupt_pid", [0, os.getpid()])
        with pytest.raises(KeyboardInterrupt):
            env.interrupt_and_nap()
        env.set_attr("interrupt_pid", 0)
        assert env.get_attr("interrupt_pid") == [0, 0]
        assert _counts(env.rollout(2)) == [2, 2]


@pytest.mark.parametrize("hang", ["sleep", "python-loop"])
def test_serial_env_timeout_interrupts_a_hung_sub_env_and_names_it(hang):
    class Hung(SleepyEnv):
        def _step(self, tensordict):
            if self.delay:
                if hang == "sleep":
                    import time

                    time.sleep(self.delay)
                else:
                    while True:
                        pass
            return super()._step(tensordict)

    env = hub.SerialEnv(3, Hung, [{"delay": 0}, {"delay": 0}, {"delay": 3600}], timeout=0.3)
    td = env.reset()
    alarm = signal.getsignal(signal.SIGALRM)
    with pytest.raises(WorkerTimeoutError, match=r"sub-env 2 \(Hung\).*within 0.3 s") as info:
        env.step(env.rand_action(td))
    assert info.value.worker == 2
    assert signal.getsignal(signal.SIGALRM) is alarm  # pytest-timeout's handler is back
    with pytest.raises(HubError, match=r"call env.reset\(\)"):
        env.step(env.rand_action(td))
    env.set_attr("delay", 0)
    assert _counts(env.rollout(2)) == [2, 2, 2]


def test_serial_env_timeout_keeps_an_outer_alarm():
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    fired = []
    old = signal.signal(signal.SIGALRM, lambda *a: fired.append(True))
    old_timer = signal.setitimer(signal.ITIMER_REAL, 0)
    try:
        signal.setitimer(signal.ITIMER_REAL, 30.0)
        env = hub.SerialEnv(2, SleepyEnv, timeout=5.0)
        env.rollout(3)
        left, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 0 < left <= 30.0 and not fired
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        if old_timer[0]:
            signal.setitimer(signal.ITIMER_REAL, *old_timer)


@pytest.mark.parametrize("cls", [hub.SerialEnv, hub.ParallelEnv])
@pytest.mark.parametrize("timeout", [0, -1, float("nan"), "5"])
def test_both_refuse_timeouts_that_cannot_be_met(cls, timeout):
    with pytest.raises(HubError, match="timeout must be a number of seconds greater than 0"):
        cls(1, SleepyEnv, timeout=timeout)
