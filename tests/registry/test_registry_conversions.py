"""The spec-conversion registry: string keys, MRO fallback, plugins, and the error text."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import types

import pytest

import hub
from hub.errors import SpecConversionError
from hub.plugins import SpecConversion
from hub.registry import (
    convert_spec,
    find_spec_conversion,
    register_spec_conversion,
    spec_conversions,
    unregister_spec_conversion,
)
from hub.specs import NonTensor


class Space:
    pass


class Box(Space):
    def __init__(self, n: int = 1) -> None:
        self.n = n


class WideBox(Box):
    pass


def tag(label):
    """A real spec that carries ``label``, so that a test sees which conversion ran."""
    return NonTensor(example_data=label)


def of(spec):
    return spec.example_data


def name_of(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


@pytest.fixture
def registered():
    """Register conversions for the test and remove them afterwards."""
    names: list[str] = []

    def register(type_name, convert):
        register_spec_conversion(type_name, convert)
        names.append(type_name if isinstance(type_name, str) else name_of(type_name))

    yield register
    for name in names:
        try:
            unregister_spec_conversion(name)
        except KeyError:
            pass


def test_registering_by_name_imports_nothing():
    code = textwrap.dedent(
        """
        import sys
        import hub
        hub.register_spec_conversion("gymnasium.spaces.Box", lambda space, **kw: None)
        hub.register_spec_conversion("dm_env.specs.BoundedArray", lambda spec, **kw: None)
        hub.register_spec_conversion("xmlrpc.client.Fault", lambda obj, **kw: None)
        assert hub.registry.spec_conversions()
        loaded = [m for m in ("gymnasium", "dm_env", "xmlrpc", "torch") if m in sys.modules]
        print(loaded)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "[]", out.stderr


def test_exact_class_and_mro_fallback(registered):
    registered(name_of(Space), lambda obj, **kw: tag("space"))
    assert of(convert_spec(Box())) == "space"
    registered(name_of(Box), lambda obj, **kw: tag(("box", obj.n, kw)))
    assert of(convert_spec(WideBox(3), device="cpu")) == ("box", 3, {"device": "cpu"})
    assert of(convert_spec(Space())) == "space"


def test_a_class_is_accepted_as_key_and_the_decorator_form_works(registered):
    registered(Box, lambda obj, **kw: tag("by class"))
    assert of(convert_spec(Box())) == "by class"

    @register_spec_conversion(name_of(WideBox))
    def wide(obj, **kwargs):
        return tag("decorated")

    try:
        assert of(convert_spec(WideBox())) == "decorated"
        assert of(wide(WideBox())) == "decorated"  # the decorator returns the function
    finally:
        unregister_spec_conversion(WideBox)


def test_an_alias_path_resolves_through_the_package(registered, monkeypatch):
    # like "gymnasium.spaces.Box" for gymnasium.spaces.box.Box
    package = types.ModuleType("toypkg")
    module = types.ModuleType("toypkg.box")
    cls = type("Box", (), {"__module__": "toypkg.box"})
    module.Box = cls
    package.Box = cls
    monkeypatch.setitem(sys.modules, "toypkg", package)
    monkeypatch.setitem(sys.modules, "toypkg.box", module)
    registered("toypkg.Box", lambda obj, **kw: tag("via alias"))
    assert of(convert_spec(cls())) == "via alias"


def test_converters_may_convert_children(registered):
    class Pair:
        def __init__(self, a, b):
            self.parts = (a, b)

    registered(Box, lambda obj, **kw: tag(f"box{obj.n}"))
    registered(Pair, lambda obj, **kw: tag(tuple(of(hub.convert_spec(p, **kw)) for p in obj.parts)))
    assert of(convert_spec(Pair(Box(1), Box(2)))) == ("box1", "box2")


def test_a_later_registration_replaces_an_earlier_one(registered):
    registered(Box, lambda obj, **kw: tag("first"))
    registered(Box, lambda obj, **kw: tag("second"))
    assert of(convert_spec(Box())) == "second"


def test_unresolvable_names_are_ignored(registered):
    registered("surely_not_installed_pkg.spaces.Box", lambda obj, **kw: tag("never"))
    registered("sys.no_such_attribute.Box", lambda obj, **kw: tag("never"))
    registered(Space, lambda obj, **kw: tag("space"))
    assert of(convert_spec(Box())) == "space"


def test_plugin_conversions_are_used_and_registered_ones_win(add_plugin, registered):
    add_plugin("conv", conversions=[SpecConversion(name_of(Box), lambda obj, **kw: tag("plugin"))])
    assert "plugin" == of(convert_spec(WideBox()))
    assert name_of(Box) in spec_conversions()
    registered(Box, lambda obj, **kw: tag("registered"))
    assert of(convert_spec(WideBox())) == "registered"
    unregister_spec_conversion(Box)
    assert of(convert_spec(WideBox())) == "plugin"


def test_the_error_names_the_type_and_says_what_to_register(manager):
    with pytest.raises(SpecConversionError) as info:
        convert_spec(WideBox())
    message = str(info.value)
    exact = name_of(WideBox)
    assert f"No spec conversion is registered for {exact}" in message
    assert name_of(Box) in message and name_of(Space) in message  # the bases it tried
    assert f'hub.register_spec_conversion("{exact}", convert)' in message
    assert f'hub.SpecConversion("{exact}", convert)' in message
    assert "hub_spec_conversions" in message
    assert isinstance(info.value, LookupError)


def test_the_error_mentions_plugins_that_failed(manager, recwarn):
    class Broken:
        @hub.hookimpl
        def hub_spec_conversions(self):
            raise ImportError("no simulator")

    manager.register(Broken(), name="sim")
    with pytest.raises(SpecConversionError, match="sim \\(its hook .* raised ImportError: no sim"):
        convert_spec(Box())


def test_find_spec_conversion_and_bad_keys(registered):
    assert find_spec_conversion(Box) is None or callable(find_spec_conversion(Box))
    with pytest.raises(ValueError, match="dotted path"):
        register_spec_conversion("Box", lambda obj: obj)
    with pytest.raises(TypeError, match="callable"):
        register_spec_conversion(name_of(Box), 42)
    with pytest.raises(KeyError):
        unregister_spec_conversion("not.registered.Type")
