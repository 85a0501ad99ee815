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


def test_ids_kept_only_to_raise_are_not_listed_and_say_what_to_use():
    """gymnasium >= 1.0 keeps Swimmer-v2 & co. only to raise ImportError (moved to
    gymnasium-robotics): not listed, and making one names the id that replaced it."""
    gymnasium = pytest.importorskip("gymnasium")

    if "Swimmer-v2" not in gymnasium.envs.registry:
        pytest.skip(f"gymnasium {gymnasium.__version__} does not register Swimmer-v2")
    from hub_gym.placeholders import is_placeholder

    if not is_placeholder(gymnasium, "Swimmer-v2"):
        pytest.skip("this gymnasium's Swimmer-v2 is a real entry point (mujoco-py)")
    listed = set(hub.list_envs("gymnasium"))
    placeholders = [i for i in gymnasium.envs.registry if is_placeholder(gymnasium, i)]
    assert "gymnasium:Swimmer-v2" not in listed and "gymnasium:Swimmer-v5" in listed
    with pytest.raises(hub.errors.UnknownEnvError, match="Swimmer-v5"):
        hub.make_env("gymnasium:Swimmer-v2")
    shimmy = [i for i in placeholders if i.startswith("GymV")]
    for env_id in shimmy:  # installable: listed, and making one names shimmy
        assert f"gymnasium:{env_id}" in listed
        with pytest.raises(hub.errors.MissingDependencyError, match="shimmy"):
            hub.make_env(f"gymnasium:{env_id}")
