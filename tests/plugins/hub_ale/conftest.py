"""The hub_ale tests run against the installed ale-py (skipped when it is missing)."""

import pytest

pytest.importorskip("ale_py", reason="ale-py is not installed (pip install 'hub[ale]')")
