"""The hub_jax tests run against the installed JAX libraries (skipped when JAX is missing)."""

import pytest

pytest.importorskip("jax", reason="JAX is not installed (pip install 'hub[jax]')")
