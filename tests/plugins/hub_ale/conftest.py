"""The hub_ale tests run against the installed ale-py (skipped when it is missing)."""

import pytest

pytest.importorskip("ale_py", reason="ale-py is not installed (pip install 'hub[ale]')")


@pytest.fixture(autouse=True, scope="module")
def _fresh_forkserver():
    """Stop the multiprocessing forkserver after this module (ale-py's threads make ParallelEnv
    use one; see tests/plugins/hub_jax/conftest.py)."""
    yield
    from multiprocessing import forkserver

    forkserver._forkserver._stop()
