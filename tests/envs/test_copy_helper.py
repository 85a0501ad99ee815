"""The helper thread that copies half of a big stack (``hub.envs.copy_helper``)."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from hub.envs import copy_helper
from hub.envs.copy_helper import run_split


def test_both_halves_run_and_the_second_in_another_thread():
    where = {}
    run_split(
        lambda: where.setdefault("first", threading.get_ident()),
        lambda: where.setdefault("second", threading.get_ident()),
    )
    assert where["first"] == threading.get_ident()
    assert where["second"] != threading.get_ident()


@pytest.mark.parametrize("failing", ["first", "second"])
def test_an_error_in_either_half_is_raised_after_both_ended(failing):
    done = []

    def fail():
        raise ValueError("boom")

    def work():
        done.append(True)

    first, second = (fail, work) if failing == "first" else (work, fail)
    with pytest.raises(ValueError, match="boom"):
        run_split(first, second)
    assert done == [True]
    run_split(work, work)  # the helper is usable again
    assert done == [True, True, True]


def test_a_second_caller_copies_alone_while_the_helper_is_busy():
    started, release = threading.Event(), threading.Event()
    threads = []

    def slow():
        started.set()
        release.wait(10)

    caller = threading.Thread(target=run_split, args=(lambda: None, slow))
    caller.start()
    assert started.wait(10)
    run_split(
        lambda: threads.append(threading.get_ident()), lambda: threads.append(threading.get_ident())
    )
    assert threads == [threading.get_ident()] * 2  # both halves in this thread
    release.set()
    caller.join(10)
    assert not caller.is_alive()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_gets_its_own_helper():
    array = np.zeros(2)
    run_split(lambda: None, lambda: None)  # the parent's helper runs
    pid = os.fork()
    if pid == 0:  # the child: copy with a helper of its own, exit with the result
        ok = False
        try:
            run_split(lambda: array.__setitem__(0, 1), lambda: array.__setitem__(1, 2))
            ok = array.tolist() == [1.0, 2.0] and copy_helper._HELPER.thread.is_alive()
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
