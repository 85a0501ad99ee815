"""Fixtures of the registry tests: an empty plugin manager and in-memory plugins.

``manager`` replaces hub's plugin manager with one that loads no entry point; tests fill it with
``add_plugin(...)`` (which registers an in-memory plugin serving the given namespaces), and the
real manager comes back afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pytest

from hub.envs.builtin import CountingEnv
from hub.plugins import (
    BatchingStrategy,
    HubPluginManager,
    Namespace,
    PluginInfo,
    SpecConversion,
    hookimpl,
    reset_plugin_manager,
)

PLUGIN_VARS = ("HUB_STRICT_PLUGINS", "HUB_LOAD_PLUGINS", "HUB_DISABLE_PLUGIN_AUTOLOAD")


class FakeEnv(CountingEnv):
    """A real (counting) env that records how it was built, seeded and configured."""

    def __init__(self, env_id: str, **kwargs: Any) -> None:
        num_envs = kwargs.get("num_envs")
        super().__init__(batch_size=(num_envs,) if num_envs else (), device=kwargs.get("device"))
        self.env_id = env_id
        self.kwargs = kwargs
        self.seed: int | None = None

    def _set_seed(self, seed: int | None) -> None:
        self.seed = seed


class FakeMaker:
    """A namespace's ``make``: builds :class:`FakeEnv` objects and remembers the calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, env_id: str, **kwargs: Any) -> FakeEnv:
        self.calls.append((env_id, kwargs))
        return FakeEnv(env_id, **kwargs)


class InMemoryPlugin:
    """A plugin object with all four hooks, returning what it was given."""

    def __init__(
        self,
        namespaces: Iterable[Namespace] = (),
        conversions: Iterable[SpecConversion] = (),
        batching: Iterable[BatchingStrategy] = (),
    ) -> None:
        self.namespaces = list(namespaces)
        self.conversions = list(conversions)
        self.batching = list(batching)

    @hookimpl
    def hub_namespaces(self) -> list[Namespace]:
        return self.namespaces

    @hookimpl
    def hub_spec_conversions(self) -> list[SpecConversion]:
        return self.conversions

    @hookimpl
    def hub_batching(self) -> list[BatchingStrategy]:
        return self.batching


@pytest.fixture
def manager(monkeypatch: pytest.MonkeyPatch) -> Iterable[HubPluginManager]:
    """hub's plugin manager, replaced by an empty one for the test."""
    for var in PLUGIN_VARS:
        monkeypatch.delenv(var, raising=False)
    yield reset_plugin_manager(entry_points=False)
    reset_plugin_manager()


@pytest.fixture
def add_plugin(manager: HubPluginManager) -> Callable[..., PluginInfo]:
    """``add_plugin(name, *namespaces, builtin=False, conversions=(), batching=())``."""

    def add(
        name: str,
        *namespaces: Namespace,
        builtin: bool = False,
        conversions: Iterable[SpecConversion] = (),
        batching: Iterable[BatchingStrategy] = (),
    ) -> PluginInfo:
        plugin = InMemoryPlugin(namespaces, conversions, batching)
        info = manager.register(plugin, name=name, builtin=builtin, version="1.0")
        assert info.error is None, info.error
        return info

    return add


@pytest.fixture
def toy_namespace() -> Callable[..., tuple[Namespace, FakeMaker]]:
    """``toy_namespace(name, ids=("Walk-v0",), **fields)`` -> (namespace, its make)."""

    def build(
        name: str, ids: Iterable[str] | None = ("Walk-v0",), **fields: Any
    ) -> tuple[Namespace, FakeMaker]:
        maker = FakeMaker()
        listing = None if ids is None else (lambda: list(ids))
        return Namespace(name, make=maker, list_envs=listing, **fields), maker

    return build
