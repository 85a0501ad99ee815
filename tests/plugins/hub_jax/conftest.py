"""The hub_jax tests run against the installed JAX libraries (skipped when JAX is missing)."""

import pytest

pytest.importorskip("jax", reason="JAX is not installed (pip install 'hub[jax]')")


@pytest.fixture(autouse=True, scope="module")
def _fresh_forkserver():
    """Stop the multiprocessing forkserver after this module. JAX's threads make ParallelEnv
    start its workers through a forkserver (hub.batching.fork_safety), which Python keeps for
    the whole session with the sys.path and plugins of the moment it started: a later test
    that installs a plugin would start workers that cannot see it."""
    yield
    from multiprocessing import forkserver

    forkserver._forkserver._stop()  # CPython's; the next forkserver starts afresh
