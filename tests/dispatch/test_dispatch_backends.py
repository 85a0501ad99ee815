"""Backend families, the active backend per context, set_gym_backend and gym_backend."""

from __future__ import annotations

import asyncio
import contextvars
import subprocess
import sys
import threading

import pytest

import hub
from hub.dispatch import (
    BackendFamily,
    active_backend,
    backend_state,
    family_of,
    get_backend,
    get_backend_family,
    gym_backend,
    implement_for,
    list_backend_families,
    register_backend_family,
    restore_backend_state,
    set_backend,
    set_gym_backend,
    unregister_backend_family,
)
from hub.errors import BackendError, MissingDependencyError, NoImplementationError

GYM = BackendFamily("gym", ("hubfake_gymnasium", "hubfake_gym"), "gym-like RL APIs")


@pytest.fixture
def gym_pair(fake_module):
    """Two fake gym-family modules (gymnasium 1.0.0, gym 0.26.2) and the family."""
    new, old = fake_module("hubfake_gymnasium", "1.0.0"), fake_module("hubfake_gym", "0.26.2")
    register_backend_family(GYM)
    return new, old


@pytest.fixture
def spaces_type():
    """A dispatched function with one implementation per gym-family module."""

    @implement_for("hubfake_gymnasium", "0.26")
    def spaces_type():
        return "gymnasium"

    @spaces_type.register("hubfake_gym", "0.21", "0.27")
    def _():
        return "gym"

    return spaces_type


# -- families ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "candidates"),
    [("", ("a",)), ("f", ()), ("f", "gymnasium"), ("f", ("a.b",)), ("f", ("a", "a"))],
)
def test_family_validation(name, candidates):
    with pytest.raises(BackendError):
        BackendFamily(name, candidates)


def test_registering_a_family():
    family = register_backend_family(GYM)
    assert get_backend_family("gym") is family
    assert register_backend_family(BackendFamily("gym", GYM.candidates)) is family  # no-op
    assert list_backend_families() == [family]
    assert family_of("hubfake_gym.spaces") is family and family_of("json") is None
    with pytest.raises(BackendError, match="already registered"):
        register_backend_family(BackendFamily("gym", ("hubfake_gym",)))
    with pytest.raises(BackendError, match="one family only"):
        register_backend_family(BackendFamily("other", ("hubfake_gym",)))
    register_backend_family(BackendFamily("gym", ("hubfake_gym",)), replace=True)
    assert family_of("hubfake_gymnasium") is None
    unregister_backend_family("gym")
    assert family_of("hubfake_gym") is None


def test_unknown_family_lists_the_known_ones():
    register_backend_family(GYM)
    with pytest.raises(BackendError, match=r"unknown backend family 'jax'. Known families: 'gym'"):
        get_backend_family("jax")


def test_unknown_family_says_where_families_come_from():
    with pytest.raises(BackendError, match=r"declared by plugins .*hub.list_plugins\(\)"):
        get_backend_family("toy")


def test_dispatch_never_loads_the_plugins():
    """Families come down from the plugin manager; dispatch does not call up into it, and the
    core's own "gym" family is there without any plugin."""
    code = (
        "import sys; import hub.dispatch as d\n"
        "assert d.get_backend_family('gym').candidates == ('gymnasium', 'gym')\n"
        "from hub.errors import BackendError\n"
        "try:\n    d.get_backend_family('toy')\nexcept BackendError:\n    pass\n"
        "d.list_backend_families()\n"
        "assert 'hub.plugins' not in sys.modules, sorted(m for m in sys.modules if 'hub' in m)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


# -- the active backend ------------------------------------------------------------------------


def test_default_is_the_first_installed_candidate(fake_module):
    register_backend_family(GYM)
    assert active_backend("gym") is None
    with pytest.raises(MissingDependencyError, match="no 'gym' backend is installed"):
        gym_backend()
    old = fake_module("hubfake_gym", "0.26.2")
    assert active_backend("gym") == "hubfake_gym" and gym_backend() is old
    new = fake_module("hubfake_gymnasium", "1.0.0")
    assert active_backend("gym") == "hubfake_gymnasium" and gym_backend() is new


def test_set_gym_backend_as_context_manager(gym_pair, spaces_type):
    new, old = gym_pair
    assert gym_backend() is new and spaces_type() == "gymnasium"
    with set_gym_backend("hubfake_gym") as chosen:
        assert chosen.backend == "hubfake_gym"
        assert gym_backend() is old and spaces_type() == "gym"
        with set_gym_backend(new):  # by module object, nested
            assert gym_backend() is new and spaces_type() == "gymnasium"
        assert gym_backend() is old
    assert gym_backend() is new and spaces_type() == "gymnasium"


def test_the_choice_is_undone_when_the_block_raises(gym_pair):
    with pytest.raises(KeyError):
        with set_gym_backend("hubfake_gym"):
            raise KeyError
    assert active_backend("gym") == "hubfake_gymnasium"


def test_set_gym_backend_as_decorator(gym_pair, spaces_type):
    @set_gym_backend("hubfake_gym")
    def under_gym(x):
        """Doc."""
        return x, gym_backend().__name__, spaces_type()

    assert under_gym(1) == (1, "hubfake_gym", "gym")
    assert under_gym.__doc__ == "Doc." and under_gym.__name__ == "under_gym"
    assert spaces_type() == "gymnasium"  # only during the call


def test_set_gym_backend_decorates_coroutines(gym_pair, spaces_type):
    @set_gym_backend("hubfake_gym")
    async def under_gym():
        await asyncio.sleep(0)
        return spaces_type()

    async def both():
        return await asyncio.gather(under_gym(), asyncio.sleep(0, spaces_type()))

    assert asyncio.run(both()) == ["gym", "gymnasium"]


def test_public_names_on_hub(gym_pair):
    assert hub.set_gym_backend is set_gym_backend and hub.gym_backend is gym_backend
    assert hub.set_backend is set_backend and hub.get_backend is get_backend
    assert hub.implement_for is implement_for and hub.BackendFamily is BackendFamily
    with hub.set_gym_backend("hubfake_gym"):
        assert hub.gym_backend().__name__ == "hubfake_gym"


def test_bad_choices_are_refused(gym_pair):
    with pytest.raises(BackendError, match="candidates are 'hubfake_gymnasium', 'hubfake_gym'"):
        set_gym_backend("numpy")
    with pytest.raises(BackendError, match="module name or module object"):
        set_gym_backend(3)
    with pytest.raises(BackendError, match="unknown backend family"):
        set_backend("nope", "numpy")


def test_a_missing_backend_cannot_be_activated(fake_module):
    fake_module("hubfake_gymnasium", "1.0.0")
    register_backend_family(GYM)
    choice = set_gym_backend("hubfake_gym")  # fine to build (e.g. as a decorator at import)
    with pytest.raises(MissingDependencyError, match="not installed") as info:
        with choice:
            pass
    assert "hubfake_gymnasium" in str(info.value)  # names what is installed


def test_gym_backend_submodules(gym_pair, fake_module):
    wrappers = fake_module("hubfake_gymnasium.wrappers")
    assert gym_backend("wrappers") is wrappers
    with pytest.raises(MissingDependencyError) as info:
        gym_backend("wrappers.compatibility")
    text = str(info.value)
    assert "'hubfake_gymnasium.wrappers.compatibility' does not exist" in text
    assert "hubfake_gymnasium 1.0.0" in text


def test_get_backend_with_a_real_module():
    register_backend_family(BackendFamily("hub-test-codec", ("json", "pickle")))
    assert get_backend("hub-test-codec").__name__ == "json"
    assert get_backend("hub-test-codec", "decoder").__name__ == "json.decoder"
    with set_backend("hub-test-codec", "pickle"):
        assert get_backend("hub-test-codec").__name__ == "pickle"


# -- threads and contexts ----------------------------------------------------------------------


def test_two_threads_see_their_own_backend(gym_pair, spaces_type):
    """Acceptance: two threads under different set_gym_backend see their own backend."""
    barrier, seen = threading.Barrier(2), {}

    def work(choice):
        with set_gym_backend(choice):
            barrier.wait()  # both are inside their own `with` now
            for _ in range(200):
                seen.setdefault(choice, set()).add((gym_backend().__name__, spaces_type()))
            barrier.wait()

    threads = [threading.Thread(target=work, args=(c,)) for c in GYM.candidates]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {
        "hubfake_gymnasium": {("hubfake_gymnasium", "gymnasium")},
        "hubfake_gym": {("hubfake_gym", "gym")},
    }
    assert active_backend("gym") == "hubfake_gymnasium"


def test_a_new_thread_starts_from_the_default_unless_given_the_context(gym_pair):
    out = {}
    with set_gym_backend("hubfake_gym"):
        plain = threading.Thread(target=lambda: out.update(plain=active_backend("gym")))
        context = contextvars.copy_context()
        copied = threading.Thread(
            target=lambda: out.update(copied=context.run(active_backend, "gym"))
        )
        plain.start(), copied.start()
        plain.join(), copied.join()
    assert out == {"plain": "hubfake_gymnasium", "copied": "hubfake_gym"}


def test_one_set_backend_object_used_by_two_threads(gym_pair):
    choice, barrier, errors = set_gym_backend("hubfake_gym"), threading.Barrier(2), []

    def work():
        try:
            with choice:
                barrier.wait()
                assert active_backend("gym") == "hubfake_gym"
                barrier.wait()
        except Exception as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


# -- state for worker processes ----------------------------------------------------------------


def test_backend_state_and_restore(gym_pair, spaces_type):
    assert backend_state() == {}
    with set_gym_backend("hubfake_gym"):
        state = backend_state()
    assert state == {"gym": "hubfake_gym"}
    restore_backend_state(state)  # as a worker would
    assert active_backend("gym") == "hubfake_gym" and spaces_type() == "gym"
    assert "restored from the parent process" in spaces_type.explain()
    with set_gym_backend("hubfake_gymnasium"):
        assert spaces_type() == "gymnasium" and backend_state() == {"gym": "hubfake_gymnasium"}
    seen = []
    thread = threading.Thread(target=lambda: seen.append(active_backend("gym")))
    thread.start(), thread.join()
    assert seen == ["hubfake_gym"]  # every thread of the process starts from the restored state
    restore_backend_state({})
    assert spaces_type() == "gymnasium"


def test_restore_checks_its_input(gym_pair):
    with pytest.raises(BackendError, match="mapping of family name to module name"):
        restore_backend_state({"gym": 1})
    restore_backend_state({"gym": "numpy", "unknown-family": "x"})  # checked when used
    with pytest.raises(BackendError, match="restored from the parent process is 'numpy'"):
        active_backend("gym")


def test_set_gym_backend_decorates_generators(gym_pair, spaces_type):
    @set_gym_backend("hubfake_gym")
    def steps(n):
        for _ in range(n):
            received = yield spaces_type()
            assert received in (None, "ping")
        return "done"

    gen = steps(3)
    assert next(gen) == "gym"
    assert spaces_type() == "gymnasium"  # between steps the consumer's choice holds
    assert gen.send("ping") == "gym"
    assert list(gen) == ["gym"]

    def drive():
        return (yield from steps(2))

    assert list(drive()) == ["gym", "gym"]
    gen = steps(5)
    next(gen)
    with pytest.raises(ValueError):
        gen.throw(ValueError("from the consumer"))
    gen = steps(5)
    next(gen)
    gen.close()
    assert active_backend("gym") == "hubfake_gymnasium"


def test_no_implementation_names_the_active_backend_and_the_way_out(gym_pair):
    @implement_for("hubfake_gymnasium", None, "1.0")
    def reset_output():
        return None

    reset_output.register("hubfake_gym", "0.26")(lambda: "gym")
    with pytest.raises(NoImplementationError) as info:
        reset_output()
    text = str(info.value)
    assert "the active 'gym' backend is hubfake_gymnasium 1.0.0 (default:" in text
    assert "hubfake_gymnasium: <1.0" in text and "hubfake_gym: >=0.26" in text
    assert 'pip install "hubfake_gymnasium<1.0"' in text
    assert 'switch backend: hub.set_gym_backend("hubfake_gym")' in text


def test_no_member_of_the_family_installed():
    register_backend_family(GYM)

    @implement_for("hubfake_gym", "0.26")
    def fn():
        return None

    with pytest.raises(NoImplementationError) as info:
        fn()
    text = str(info.value)
    assert "no 'gym' backend is installed" in text
    assert 'install a supported version of hubfake_gym: pip install "hubfake_gym>=0.26"' in text
