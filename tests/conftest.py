"""Suite-wide fixtures: keep process-wide registries as each test found them."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")


@pytest.fixture(autouse=True)
def _forget_test_backend_families():
    """Backend families a test registers itself are removed after it (they are process-wide);
    the families declared by installed plugins stay, since plugins load once per process."""
    from hub.dispatch import backends, unregister_backend_family
    from hub.plugins import manager

    before = set(backends._families)
    yield
    pm = manager._manager
    declared: set[str] = set()
    if pm is not None:
        try:
            declared = set(pm._backends)
        except AttributeError:
            declared = set()
    for name in set(backends._families) - before - declared:
        unregister_backend_family(name)
