"""The fault corpus, run on SerialEnv and on ParallelEnv under each start method: a sub-env
that raises, is killed (SIGKILL), crashes (SIGSEGV), exits, hangs (with a timeout), returns a
wrong shape; Ctrl-C in the parent; close twice, use after close; descriptors and processes
after close.

Each start method gets one ParallelEnv of two ``FaultyEnv`` workers for the whole module (a
spawned worker takes seconds to start): every test injects its fault into worker 1, checks the
error or the recovery, and leaves the env usable for the next one. A fault that kills the
process (SIGKILL, SIGSEGV, exit) has no SerialEnv case: the sub-env runs in the test's own
process, which is what ParallelEnv is for.
"""

from __future__ import annotations

import multiprocessing
import os
import warnings

import psutil
import pytest

import hub
from hub.batching import WorkerRestartWarning
from hub.errors import ClosedEnvError, HubError, SpecMismatchError, WorkerError

from .parallel_envs import FaultyEnv

METHODS = [
    m for m in ("fork", "forkserver", "spawn") if m in multiprocessing.get_all_start_methods()
]

DEATHS = {
    "kill": "was killed by signal SIGKILL",
    "segv": "was killed by signal SIGSEGV",
    "exit": "exited with code 3",
}


@pytest.fixture(scope="module", params=METHODS)
def penv(request):
    env = hub.ParallelEnv(2, FaultyEnv, {"max_steps": 1000}, start_method=request.param)
    env.start_timeout = 120
    yield env
    pids = env.worker_pids()
    env.close()
    assert not [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"]


@pytest.fixture
def senv():
    env = hub.SerialEnv(2, FaultyEnv, {"max_steps": 1000})
    yield env
    env.close()


def _last(data) -> list:
    return data["next", "observation"][..., -1, :].squeeze(-1).tolist()


def _fresh(env) -> None:
    """Settings back to the module's defaults, then a rollout that must work."""
    env.restart_failed = False
    env.timeout = None
    assert _last(env.rollout(2, break_when_any_done=False)) == [2, 2]


def _step_with_fault(env, fault: str):
    td = env.reset()
    env.set_attr("fault", [None, fault])
    return env.step_and_maybe_reset(env.rand_action(td))


# ------------------------------------------------------------------ a sub-env that raises
def test_parallel_raise(penv):
    with pytest.raises(WorkerError, match="worker 1 raised ValueError during step: injected"):
        _step_with_fault(penv, "raise")
    _fresh(penv)


def test_serial_raise(senv):
    with pytest.raises(ValueError, match="injected fault"):
        _step_with_fault(senv, "raise")
    with pytest.raises(HubError, match=r"call env.reset\(\)"):
        senv.step(senv.rand_action(senv.fake_tensordict().exclude("next")))
    _fresh(senv)


# ------------------------------------------------------------------ deaths
@pytest.mark.parametrize("fault", sorted(DEATHS))
def test_parallel_death_is_reported_then_rebuilt_on_demand(penv, fault):
    with pytest.raises(WorkerError, match=f"worker 1 {DEATHS[fault]} during step"):
        _step_with_fault(penv, fault)
    with pytest.raises(WorkerError, match="restart_failed=True"):
        penv.reset()
    penv.restart_failed = True
    with pytest.warns(WorkerRestartWarning, match=DEATHS[fault]):
        penv.reset()
    _fresh(penv)


@pytest.mark.parametrize("fault", sorted(DEATHS))
def test_parallel_death_with_restart_failed_truncates_the_episode(penv, fault):
    penv.restart_failed = True
    with pytest.warns(WorkerRestartWarning, match=DEATHS[fault]):
        data, _ = _step_with_fault(penv, fault)
    assert data["next", "truncated"].squeeze(-1).tolist() == [False, True]
    _fresh(penv)


# ------------------------------------------------------------------ hangs
def test_parallel_hang_with_timeout_then_reset(penv):
    penv.timeout = 1.0
    with pytest.raises(WorkerError, match=r"did not answer within 1.0 s.*env.reset\(\) drops"):
        _step_with_fault(penv, "hang")
    penv.restart_failed = True  # the worker sleeps for an hour: have reset() rebuild it
    with pytest.warns(WorkerRestartWarning, match="did not answer within 1.0 s"):
        penv.reset()
    _fresh(penv)


def test_parallel_hang_with_restart_failed(penv):
    penv.timeout = 1.0
    penv.restart_failed = True
    with pytest.warns(WorkerRestartWarning, match="did not answer within 1.0 s"):
        data, _ = _step_with_fault(penv, "hang")
    assert data["next", "truncated"].squeeze(-1).tolist() == [False, True]
    _fresh(penv)


def test_serial_hang_with_timeout(senv):
    senv.timeout = 0.5
    with pytest.raises(WorkerError, match=r"sub-env 1 \(FaultyEnv\).*within 0.5 s"):
        _step_with_fault(senv, "hang")
    _fresh(senv)


# ------------------------------------------------------------------ Ctrl-C in the parent
@pytest.mark.parametrize("kind", ["parallel", "serial"])
def test_ctrl_c_mid_step(penv, senv, kind, sigint_raises):
    env = penv if kind == "parallel" else senv
    td = env.reset()
    env.set_attr("interrupt_pid", [0, os.getpid()])  # sub-env 1 sends the Ctrl-C mid-step
    env.set_attr("fault", [None, "interrupt"])
    with pytest.raises(KeyboardInterrupt):
        env.step_and_maybe_reset(env.rand_action(td))
    with pytest.raises(HubError, match=r"call env.reset\(\)"):
        env.step(env.rand_action(td))
    _fresh(env)


# ------------------------------------------------------------------ bad shapes
@pytest.mark.parametrize("kind", ["parallel", "serial"])
def test_wrong_shape(penv, senv, kind):
    env = penv if kind == "parallel" else senv
    with pytest.raises((SpecMismatchError, WorkerError), match=r"observation.*shape \[3\]"):
        _step_with_fault(env, "shape")
    _fresh(env)


# ------------------------------------------------------------------ close
@pytest.mark.parametrize("method", METHODS + ["serial"])
def test_close_twice_and_use_after_close(method):
    if method == "serial":
        env = hub.SerialEnv(2, FaultyEnv)
    else:
        env = hub.ParallelEnv(1, FaultyEnv, start_method=method)
    td = env.reset()
    pids = [] if method == "serial" else env.worker_pids()
    env.close()
    env.close()
    for call in (env.reset, lambda: env.step(env.rand_action(td)), lambda: env.rollout(2)):
        with pytest.raises(ClosedEnvError, match="closed"):
            call()
    assert not [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
@pytest.mark.parametrize("method", METHODS + ["serial"])
def test_descriptors_after_close(method):
    def cycle():
        if method == "serial":
            env = hub.SerialEnv(2, FaultyEnv)
        else:
            env = hub.ParallelEnv(1, FaultyEnv, start_method=method)
        env.rollout(2)
        env.close()
        return env

    held = [cycle()]  # a first env may start a fork server (its descriptors stay)
    before = len(os.listdir("/proc/self/fd"))
    held += [cycle() for _ in range(2 if method in ("fork", "serial") else 1)]
    assert len(os.listdir("/proc/self/fd")) <= before
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        del held
