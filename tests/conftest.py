"""Suite-wide fixtures: keep process-wide registries as each test found them."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")


@pytest.fixture(autouse=True)
def _forget_test_backend_families():
    """Backend families registered by a test are removed after it (they are process-wide)."""
    from hub.dispatch import backends, unregister_backend_family

    before = set(backends._families)
    yield
    for name in set(backends._families) - before:
        unregister_backend_family(name)
