"""The fork path is safe by construction: no garbage collection in a worker before it freezes
what it inherited, and the start method sees native threads, not only Python ones."""

from __future__ import annotations

import faulthandler
import gc
import os
import threading

import pytest
import torch

import hub
from hub.batching import fork_safety
from hub.batching.pool import resolve_start_method
from hub.envs.builtin import CountingEnv

from .parallel_envs import FaultyEnv

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


class _ParentResource:
    """Cyclic garbage whose finalizer reports (through a pipe) a run in another process."""

    def __init__(self, owner: int, fd: int) -> None:
        self.me = self
        self.owner = owner
        self.fd = fd

    def __del__(self) -> None:
        if os.getpid() != self.owner:
            os.write(self.fd, b"x")


def test_no_parent_object_is_finalized_in_a_worker_over_many_forks(monkeypatch):
    monkeypatch.delenv("HUB_PARALLEL_START_METHOD", raising=False)
    read, write = os.pipe()
    os.set_blocking(read, False)
    owner = os.getpid()
    try:
        for k in range(20):
            # garbage at every fill level of the youngest generation, as a long program has it
            for _ in range(k * 37 % 400):
                _ParentResource(owner, write)
            with hub.ParallelEnv(2, CountingEnv, start_method="fork") as env:
                env.rollout(2)
        try:
            finalized_in_workers = len(os.read(read, 1 << 20))
        except BlockingIOError:
            finalized_in_workers = 0
    finally:
        gc.collect()  # the garbage goes here, in its owner
        os.close(read)
        os.close(write)
    assert finalized_in_workers == 0  # failed before the fix


def test_workers_start_with_the_parents_objects_frozen_and_the_collector_on():
    with hub.ParallelEnv(1, FaultyEnv, start_method="fork") as env:
        [(enabled, frozen)] = env.gc_state()
    assert enabled and frozen > 0
    assert gc.isenabled()  # the parent's collector is back on after the fork


def test_a_parent_without_collector_gives_workers_without_one():
    gc.disable()
    try:
        with hub.ParallelEnv(1, FaultyEnv, start_method="fork") as env:
            [(enabled, _)] = env.gc_state()
    finally:
        gc.enable()
    assert not enabled


def test_a_native_thread_makes_the_default_start_method_avoid_fork(monkeypatch):
    """faulthandler's watchdog is a C thread that Python's threading module does not see."""
    monkeypatch.delenv("HUB_PARALLEL_START_METHOD", raising=False)
    torch.ones(1 << 17).sum()  # torch's pool runs: its place in the count is taken
    before = fork_safety.unsafe_threads()
    faulthandler.dump_traceback_later(3600)
    try:
        unsafe = fork_safety.unsafe_threads()
        chosen = resolve_start_method(None)
    finally:
        faulthandler.cancel_dump_traceback_later()
    # the watchdog is a native thread more than before (earlier tests may have left others,
    # whose pools can start more threads meanwhile)
    assert _native_count(unsafe) >= _native_count(before) + 1
    assert chosen != "fork"


def _native_count(unsafe: list[str]) -> int:
    """The number of native threads ``unsafe_threads()`` reports (0 when it reports none)."""
    for entry in unsafe:
        if "native thread" in entry:
            return int(entry.split()[0])
    return 0


def test_a_python_thread_of_the_users_makes_it_avoid_fork_but_hubs_helper_does_not(
    monkeypatch,
):
    monkeypatch.delenv("HUB_PARALLEL_START_METHOD", raising=False)
    stop = threading.Event()
    user = threading.Thread(target=stop.wait, name="user-thread")
    helper = threading.Thread(target=stop.wait, name="hub-copy")
    helper.start()
    try:
        assert not any("hub-copy" in t for t in fork_safety.unsafe_threads())
        user.start()
        assert any("user-thread" in t for t in fork_safety.unsafe_threads())
        assert resolve_start_method(None) != "fork"
    finally:
        stop.set()
        helper.join()
        if user.is_alive() or user.ident is not None:
            user.join()


def test_os_threads_are_counted_from_proc():
    tids = fork_safety.os_thread_ids()
    if not os.path.isdir("/proc/self/task"):
        pytest.skip("no /proc here")
    assert threading.get_native_id() in tids
