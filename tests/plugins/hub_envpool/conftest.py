"""The hub_envpool tests run against the installed EnvPool (skipped when it is missing)."""

import pytest

pytest.importorskip("envpool", reason="EnvPool is not installed (pip install 'hub[envpool]')")

# load the plugins now, at collection: the suite-wide fixture of tests/conftest.py forgets the
# backend families that appear during a test, and the plugins declare theirs only once
import hub.dispatch  # noqa: E402

hub.dispatch.list_backend_families()
