"""implement_for: ranges, both registration styles, errors, introspection, methods, pickling."""

from __future__ import annotations

import inspect
import pickle
import threading

import numpy
import pytest

from hub.dispatch import (
    BackendFamily,
    VersionDispatcher,
    clear_version_cache,
    implement_for,
    register_backend_family,
    set_gym_backend,
    versions,
)
from hub.dispatch.versions import VersionRangeError
from hub.errors import HubError, ImplementationConflictError, NoImplementationError

from . import dispatch_helpers as helpers


def _split_at_026():
    @implement_for("hubfake_gym", None, "0.26.0")
    def step_api():
        return "4-tuple"

    @implement_for("hubfake_gym", "0.26.0")
    def step_api():  # noqa: F811
        return "5-tuple"

    return step_api


def test_prerelease_takes_the_range_below_its_release(fake_module):
    """Acceptance: a fake module at 0.26.0rc1 takes the range below 0.26.0."""
    fake_module("hubfake_gym", "0.26.0rc1")
    assert _split_at_026()() == "4-tuple"


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("0.25.2", "4-tuple"),
        ("0.26.0a1", "4-tuple"),
        ("0.26.0", "5-tuple"),  # from_version is inclusive, to_version exclusive
        ("0.26.0.post1", "5-tuple"),
        ("0.26", "5-tuple"),  # 0.26 == 0.26.0
        ("7.0", "5-tuple"),
    ],
)
def test_boundaries(fake_module, version, expected):
    fake_module("hubfake_gym", version)
    assert _split_at_026()() == expected


def test_register_style_defaults_to_the_first_module(fake_module):
    fake_module("hubfake_gym", "1.5")

    @implement_for("hubfake_gym", None, "1.0")
    def reset_output():
        """Reset output of the installed gym."""
        return "obs"

    @reset_output.register(from_version="1.0", to_version="2.0")
    def _():
        return "obs, info"

    assert reset_output() == "obs, info"
    assert [(i.module, i.range) for i in reset_output.implementations] == [
        ("hubfake_gym", "<1.0"),
        ("hubfake_gym", ">=1.0,<2.0"),
    ]
    assert isinstance(_, VersionDispatcher) and _ is reset_output


def test_register_for_another_module(fake_module):
    fake_module("hubfake_lib", "3.0")

    @implement_for("hubfake_absent", "1.0")
    def which():
        return "absent"

    @which.register("hubfake_lib", "2.0")
    def _():
        return "lib"

    assert which() == "lib"


def test_register_with_a_version_in_the_module_slot_says_what_to_do():
    @implement_for("hubfake_gym")
    def fn():
        return None

    with pytest.raises(VersionRangeError, match=r"register\(from_version='0.26'\)"):
        fn.register("0.26")


def test_same_qualname_merges_and_other_scopes_do_not(fake_module):
    fake_module("hubfake_gym", "0.30")
    first = _split_at_026()

    @implement_for("hubfake_gym", None, "0.26.0")
    def step_api():
        return "elsewhere"

    assert step_api is not first and len(first.implementations) == 2
    assert len(step_api.implementations) == 1


def test_a_definition_run_again_starts_a_new_dispatcher(fake_module):
    """A factory called twice (or a module reloaded) does not clash with its earlier run."""
    fake_module("hubfake_gym", "0.30")
    one, two = _split_at_026(), _split_at_026()
    assert one is not two
    assert one() == two() == "5-tuple"


def test_overlapping_ranges_are_refused_with_both_ranges_named():
    @implement_for("hubfake_gym", "0.21", "0.26")
    def fn():
        return None

    with pytest.raises(ImplementationConflictError) as info:

        @implement_for("hubfake_gym", "0.25")
        def fn():  # noqa: F811
            return None

    text = str(info.value)
    assert ">=0.25" in text and ">=0.21,<0.26" in text and "disjoint" in text
    assert len(fn.implementations) == 1  # fn is still the first dispatcher


@pytest.mark.parametrize(
    ("first", "second"),
    [((None, None), ("1.0", None)), ((None, "2.0"), ("1.0", "3.0")), (("1", "2"), ("1.5", "1.6"))],
)
def test_overlap_cases(first, second):
    @implement_for("hubfake_gym", *first)
    def fn():
        return None

    with pytest.raises(ImplementationConflictError):
        fn.register(None, *second)(lambda: None)


def test_touching_ranges_and_other_modules_may_share_numbers():
    @implement_for("hubfake_gym", None, "1.0")
    def fn():
        return None

    fn.register(from_version="1.0")(lambda: None)
    fn.register("hubfake_gymnasium", None, "1.0")(lambda: None)
    fn.register("hubfake_other", "0.5", "2")(lambda: None)
    assert len(fn.implementations) == 4


def test_a_submodule_counts_as_its_package_for_overlaps():
    @implement_for("hubfake_gym", None, "1.0")
    def fn():
        return None

    with pytest.raises(ImplementationConflictError):
        fn.register("hubfake_gym.wrappers", "0.5")(lambda: None)


def test_empty_or_invalid_ranges_are_refused():
    with pytest.raises(VersionRangeError, match="holds no version"):
        implement_for("hubfake_gym", "1.0", "1.0")
    with pytest.raises(VersionRangeError, match="not a valid version"):
        implement_for("hubfake_gym", "one")
    with pytest.raises(VersionRangeError, match="not a module name"):
        implement_for("not a module")


def test_no_implementation_error_names_version_ranges_and_fix(fake_module):
    fake_module("hubfake_gym", "0.19.0")

    @implement_for("hubfake_gym", "0.21", "0.26")
    def to_tensordict():
        return None

    to_tensordict.register(from_version="0.26")(lambda: None)
    with pytest.raises(NoImplementationError) as info:
        to_tensordict()
    err = info.value
    assert isinstance(err, HubError) and isinstance(err, ImportError)
    text = str(err)
    assert (
        "test_no_implementation_error_names_version_ranges_and_fix.<locals>.to_tensordict" in text
    )
    assert "hubfake_gym 0.19.0" in text
    assert "hubfake_gym: >=0.21,<0.26 or >=0.26" in text
    assert 'pip install "hubfake_gym>=0.26"' in text
    with pytest.raises(NoImplementationError):
        to_tensordict.resolve()
    assert "no implementation can run now" in to_tensordict.explain()


def test_no_implementation_when_the_module_is_missing():
    @implement_for("hubfake_absent", "1.0")
    def fn():
        return None

    with pytest.raises(NoImplementationError, match=r"hubfake_absent \(not installed\)"):
        fn()


def test_introspection(fake_module):
    fake_module("hubfake_gym", "0.26.2")
    fn = _split_at_026()
    assert fn.__name__ == "step_api" and fn.__module__ == __name__
    assert fn.__qualname__ == "_split_at_026.<locals>.step_api"
    assert fn.__wrapped__ is fn.implementations[0].function
    assert fn.resolve() is fn.implementations[1].function
    assert fn.resolve()() == "5-tuple"
    module, range_, function = fn.implementations[0]
    assert (module, range_) == ("hubfake_gym", "<0.26.0") and callable(function)
    assert "hubfake_gym <0.26.0 | hubfake_gym >=0.26.0" in repr(fn)


def test_docstring_and_signature_come_from_the_first_implementation():
    @implement_for("numpy")
    def scale(x: float, factor: float = 2.0) -> float:
        """Scale x."""
        return x * factor

    assert scale.__doc__ == "Scale x."
    assert str(inspect.signature(scale)) == "(x: 'float', factor: 'float' = 2.0) -> 'float'"
    assert scale(3, factor=3) == 9


def test_keyword_named_self_passes_through():
    @implement_for("numpy")
    def fn(**kwargs):
        return kwargs

    assert fn(self=1) == {"self": 1}


def test_explain_says_which_runs_and_why(fake_module):
    fake_module("hubfake_gym", "0.26.0rc1")
    text = _split_at_026().explain()
    first_line = text.splitlines()[0]
    assert first_line.startswith(f"Dispatch of {__name__}._split_at_026.")
    assert "the implementation for hubfake_gym <0.26.0 runs" in first_line
    assert "belongs to no backend family" in text
    assert "hubfake_gym is 0.26.0rc1 (from hubfake_gym.__version__)" in text
    assert "<- runs now" in text and "(not for 0.26.0rc1)" in text


def test_explain_names_the_active_backend(fake_module):
    fake_module("hubfake_gymnasium", "1.0.0")
    fake_module("hubfake_gym", "0.26.2")
    register_backend_family(BackendFamily("gym", ("hubfake_gymnasium", "hubfake_gym")))

    @implement_for("hubfake_gymnasium", "1.0")
    def fn():
        return "gymnasium"

    fn.register("hubfake_gym", "0.26")(lambda: "gym")
    text = fn.explain()
    assert "hubfake_gymnasium is the active 'gym' backend (default: the first installed" in text
    assert "(hubfake_gym is not the active 'gym' backend)" in text
    with set_gym_backend("hubfake_gym"):
        assert "chosen with set_backend in this context" in fn.explain()
        assert fn() == "gym"


def test_the_call_path_looks_nothing_up_after_the_first_call(fake_module, monkeypatch):
    fake_module("hubfake_gym", "0.20")
    fn = _split_at_026()
    assert fn() == "4-tuple"

    def fail(*args, **kwargs):
        raise AssertionError("looked up a version on the call path")

    monkeypatch.setattr(versions, "version_and_source", fail)
    monkeypatch.setattr(versions, "is_installed", fail)
    assert [fn() for _ in range(3)] == ["4-tuple"] * 3


def test_cache_is_dropped_on_register_and_on_clear(fake_module):
    module = fake_module("hubfake_gym", "0.20")
    fn = _split_at_026()
    assert fn() == "4-tuple"
    module.__version__ = "0.30"
    assert fn() == "4-tuple"  # versions are assumed fixed within a process ...
    clear_version_cache()
    assert fn() == "5-tuple"  # ... until the caches are cleared

    @implement_for("hubfake_other", "1.0")
    def other():
        return 1

    with pytest.raises(NoImplementationError):
        other()
    fake_module("hubfake_other", "1.0")
    assert other() == 1


def test_concurrent_first_calls_agree(fake_module):
    fake_module("hubfake_gym", "0.26.0")
    fn = _split_at_026()
    results, barrier = [], threading.Barrier(8)

    def work():
        barrier.wait()
        results.append(fn())

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == ["5-tuple"] * 8


def test_stacked_decorators_give_one_function_two_ranges(fake_module):
    fake_module("hubfake_gym", "0.22")

    @implement_for("hubfake_gym", None, "0.23")
    @implement_for("hubfake_gymnasium", "0.26")
    def fn():
        return "shared"

    assert [i.module for i in fn.implementations] == ["hubfake_gymnasium", "hubfake_gym"]
    assert fn() == "shared"


# -- methods -----------------------------------------------------------------------------------


def test_methods_on_classes():
    shape = helpers.Shape(3)
    assert shape.describe() == "shape 3"  # numpy 2 is installed
    assert helpers.Shape.describe(shape) == "shape 3"
    assert helpers.Shape.kind() == "Shape" and shape.kind() == "Shape"
    # in a class the dispatcher stands as a plain function (bound in C) that leads back to it
    in_class = vars(helpers.Shape)["describe"]
    assert isinstance(in_class.__dispatcher__, VersionDispatcher)
    assert in_class.__qualname__ == "Shape.describe"


def test_classmethod_and_staticmethod_under_implement_for():
    class Thing:
        @implement_for("numpy", None, "1.0")
        @classmethod
        def make(cls):
            return "old"

        @make.register(from_version="1.0")
        def _(cls):
            return f"new {cls.__name__}"

        @implement_for("numpy")
        @staticmethod
        def static(x):
            return x + 1

    class Sub(Thing):
        pass

    assert Thing.make() == "new Thing" and Sub().make() == "new Sub"
    assert Thing.static(1) == Thing().static(1) == 2


def test_mixing_method_kinds_is_refused():
    with pytest.raises(ImplementationConflictError, match="same kind"):

        class Thing:
            @implement_for("numpy", None, "1.0")
            def make(self):
                return None

            @implement_for("numpy", "1.0")
            @classmethod
            def make(cls):  # noqa: F811
                return None


def test_register_in_a_class_body():
    class Env:
        @implement_for("numpy", None, "2.0")
        def reset(self):
            return "numpy 1"

        @reset.register(from_version="2.0")
        def _(self):
            return "numpy 2"

    assert Env().reset() == "numpy 2"


# -- pickling ----------------------------------------------------------------------------------


def test_pickle_round_trip_is_the_same_object():
    fn = helpers.numpy_generation
    assert pickle.loads(pickle.dumps(fn)) is fn
    assert pickle.loads(pickle.dumps(helpers.array_library)) is helpers.array_library
    assert pickle.loads(pickle.dumps(helpers.Shape.describe)) is helpers.Shape.describe
    dispatcher = helpers.Shape.describe.__dispatcher__
    assert pickle.loads(pickle.dumps(dispatcher)) is dispatcher
    assert pickle.loads(pickle.dumps(helpers.Shape.kind))() == "Shape"
    assert fn() == f"numpy {numpy.__version__[0]}" or fn() == "numpy 2 or later"


def test_local_functions_refuse_to_pickle_clearly():
    @implement_for("numpy")
    def local():
        return None

    with pytest.raises(pickle.PicklingError, match="defined inside a function"):
        pickle.dumps(local)


def test_bound_methods_forward_introspection():
    shape = helpers.Shape(2)
    bound = shape.describe
    assert bound.__func__ is helpers.Shape.describe
    dispatcher = helpers.Shape.describe.__dispatcher__
    assert bound.resolve() is dispatcher.resolve()
    assert "the implementation for numpy >=2.0 runs" in bound.explain()
    assert [i.range for i in bound.implementations] == ["<2.0", ">=2.0"]
    assert str(inspect.signature(bound)) == "() -> 'str'"
    assert pickle.loads(pickle.dumps(bound))() == "shape 2"


def test_inherited_dispatched_methods_pickle():
    class_attr = pickle.loads(pickle.dumps(helpers.SubShape.describe))
    assert class_attr is helpers.Shape.describe


def test_float_versions_are_refused():
    with pytest.raises(VersionRangeError, match="in quotes"):
        implement_for("hubfake_gym", 0.26)


def test_family_match_wins_over_a_familyless_one(fake_module):
    fake_module("hubfake_gymnasium", "1.0")
    fake_module("hubfake_tool", "1.0")

    @implement_for("hubfake_tool")
    def fn():
        return "tool"

    fn.register("hubfake_gymnasium")(lambda: "gymnasium")
    assert fn() == "tool"  # no family yet: the first registered match
    register_backend_family(BackendFamily("gym", ("hubfake_gymnasium",)))
    assert fn() == "gymnasium"  # the active backend's implementation first
    assert "(also matches hubfake_tool 1.0;" in fn.explain()


def test_register_after_the_class_is_built():
    class Env:
        @implement_for("numpy", None, "1.0")
        def step(self):
            return "ancient"

    assert not isinstance(vars(Env)["step"], VersionDispatcher)

    @Env.step.register(from_version="1.0")
    def _(self):
        return "modern"

    assert Env().step() == "modern"
    assert [i.range for i in Env.step.implementations] == ["<1.0", ">=1.0"]


def test_a_dispatcher_bound_under_two_names_stays_a_descriptor():
    @implement_for("numpy")
    def shared(self):
        return type(self).__name__

    class A:
        alias = shared

    assert vars(A)["alias"] is shared and A().alias() == "A"
