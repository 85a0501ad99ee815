"""The hub_envpool tests run against the installed EnvPool (skipped when it is missing)."""

import pytest

pytest.importorskip("envpool", reason="EnvPool is not installed (pip install 'hub[envpool]')")
