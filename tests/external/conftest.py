"""A served ExternalEnv with a learner thread stepping it, and a check that tests leave no
thread or socket behind."""

from __future__ import annotations

import threading

import psutil
import pytest

from hub.external import ExternalEnv, PolicyServer
from hub.specs import Categorical, Unbounded


class Learner:
    """Steps an ExternalEnv in a thread with random actions and keeps the valid transitions."""

    def __init__(self, env):
        self.env = env
        self.rows = []
        self.error = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, name="test-learner")
        self.thread.start()

    def _run(self):
        try:
            td = self.env.reset()
            while not self._stop.is_set():
                data, td = self.env.step_and_maybe_reset(self.env.rand_action(td))
                valid = data[data["next", "valid"]]
                if valid.shape[0]:
                    with self._lock:
                        self.rows.extend(valid.unbind(0))
        except Exception as err:  # reported by stop()
            self.error = err

    def transitions(self):
        with self._lock:
            return list(self.rows)

    def stop(self):
        self._stop.set()
        self.thread.join()
        assert self.error is None, self.error


def _tcp_count() -> int:
    return len(psutil.Process().net_connections(kind="inet"))


@pytest.fixture
def no_leaks():
    threads = set(threading.enumerate())
    sockets = _tcp_count()
    yield
    left = [t for t in threading.enumerate() if t not in threads and t.is_alive()]
    assert not left, f"threads left behind: {left}"
    assert _tcp_count() <= sockets, "sockets left behind"


@pytest.fixture
def served(no_leaks):
    """``(env, server, learner)``: an ExternalEnv of 8 slots served on a free loopback port."""
    env = ExternalEnv(Unbounded((2,)), Categorical(3), max_concurrent=8, wait_s=0.05)
    server = PolicyServer(env, port=0, client_timeout=5.0)
    learner = Learner(env)
    yield env, server, learner
    learner.stop()
    server.close()
    env.close()
