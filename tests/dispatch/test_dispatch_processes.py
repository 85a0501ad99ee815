"""Dispatched functions and the backend choice cross into spawned worker processes."""

from __future__ import annotations

import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor

import pytest

from hub.dispatch import backend_state, register_backend_family, set_backend

from . import dispatch_helpers as helpers


@pytest.fixture(scope="module")
def spawn_pool():
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield pool


def test_a_spawned_child_calls_a_pickled_dispatcher(spawn_pool):
    fn = helpers.numpy_generation
    assert pickle.loads(pickle.dumps(fn)) is fn
    assert spawn_pool.submit(helpers.call, fn).result(timeout=120) == fn()
    method = helpers.Shape.kind
    assert spawn_pool.submit(helpers.call, method).result(timeout=120) == "Shape"


def test_the_backend_choice_travels_to_a_spawned_child(spawn_pool):
    register_backend_family(helpers.NUMERIC)
    assert helpers.array_library() == "numpy"
    with set_backend("hub-test-numeric", "torch"):
        assert helpers.array_library() == "torch"
        state = backend_state()
    assert state == {"hub-test-numeric": "torch"}
    result, child_state, imported_torch = spawn_pool.submit(helpers.child_report, state).result(
        timeout=120
    )
    assert result == "torch" and child_state == state
    assert not imported_torch  # dispatching on torch did not import it
    default = spawn_pool.submit(helpers.child_report, {}).result(timeout=120)
    assert default[0] == "numpy"
