"""The plugin as hub sees it: namespaces, the backend family, lazy imports, errors."""

from __future__ import annotations

import subprocess
import sys

import pytest

import hub
from tests.plugins.hub_gym.gym_helpers import BACKENDS, NO_BACKEND, backend_params, make


def test_importing_the_plugin_imports_no_backend() -> None:
    code = (
        "import sys, hub, hub_gym.plugin as p; p.hub_namespaces(); p.hub_spec_conversions(); "
        "p.hub_backends(); hub.list_plugins(); "
        "print(sorted(m for m in ('gym', 'gymnasium') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_plugin_is_listed_with_both_namespaces() -> None:
    info = {p.name: p for p in hub.list_plugins()}["gym"]
    assert info.error is None
    assert set(info.namespaces) == {"gym", "gymnasium"}


def test_backend_family_is_declared() -> None:
    from hub.dispatch import get_backend_family

    family = get_backend_family("gym")
    assert family.candidates == ("gymnasium", "gym")


@pytest.mark.parametrize("backend", backend_params())
def test_list_envs(backend: str) -> None:
    assert f"{backend}:CartPole-v1" in hub.list_envs(backend)


@pytest.mark.parametrize("backend", backend_params())
def test_unknown_id_suggests_close_ids(backend: str) -> None:
    with pytest.raises(hub.errors.UnknownEnvError, match="CartPole-v1"):
        make(backend, "CartPole-v9")


@pytest.mark.skipif(len(BACKENDS) == 2, reason="needs a backend that is not installed")
def test_missing_backend_names_the_install_line() -> None:
    missing = next(b for b in ("gymnasium", "gym") if b not in BACKENDS)
    with pytest.raises(hub.errors.MissingDependencyError, match=f"hub\\[{missing}\\]"):
        hub.make_env(f"{missing}:CartPole-v1")


@pytest.mark.skipif(not BACKENDS, reason=NO_BACKEND)
def test_gym_backend_is_the_first_installed() -> None:
    assert hub.gym_backend().__name__ == BACKENDS[0]
