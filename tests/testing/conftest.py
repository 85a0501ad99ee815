"""Fixtures of the conformance-kit tests.

``plugin_dist(dist, package, source, version="1.0")`` writes an installed-looking distribution
(its ``hub.plugins`` entry point named like the package) into a directory on ``sys.path``, so
that hub's real entry-point discovery (and the kit's subprocesses and worker processes) find it:
the plugin-host tests' ``fake_dist``, whose cleanup forgets the modules and resets hub's plugin
manager.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.plugins_host.conftest import clean_env, fake_dist  # noqa: F401 (fixtures)


@pytest.fixture
def plugin_dist(fake_dist: Callable[..., Path]) -> Callable[..., Path]:  # noqa: F811
    """``plugin_dist(dist, package, source, version="1.0")``; the entry point is ``package``."""

    def write(dist: str, package: str, source: str, version: str = "1.0") -> Path:
        return fake_dist(dist, package, source, version=version)

    return write
