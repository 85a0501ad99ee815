"""The hub_gym tests run against the installed backends (gymnasium and/or gym)."""

import os

import pytest

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")


@pytest.fixture(scope="session", autouse=True)
def gym_backend_family():
    """Declare the plugin's "gym" family for the whole session: the suite-wide fixture forgets
    families first registered inside a test, and plugins are loaded only once per process."""
    from hub_gym.plugin import hub_backends

    from hub.dispatch import register_backend_family

    for family in hub_backends():
        register_backend_family(family)
