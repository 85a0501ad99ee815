"""The conformance kit (``hub.testing``) on plugins installed for the test, good and broken.

Issue 23: an author had to write by hand a strict-load fixture, a subprocess test of the
lazy-import rule, a contract test over every id, seeding, serial and parallel batching, and a
check that each dispatched function resolves. Each broken plugin below breaks one rule, and
the kit names the plugin or env, the check and the fix.
"""

from __future__ import annotations

import pickle

import pytest

import hub
from hub.testing import ConformanceError, check_plugin, conformance_cases
from hub.testing.env_checks import check_factory_pickles

GOOD = """
import hub

def make(env_id, num_envs=None, **kwargs):
    from hub.envs.builtin import CountingEnv
    return CountingEnv(batch_size=(num_envs,) if num_envs else (), max_steps=5, **kwargs)

@hub.hookimpl
def hub_namespaces():
    return [hub.Namespace("good", make=make, list_envs=lambda: ["Count-v0"], native_batching=True)]
"""


def test_a_good_plugin_passes_every_check(plugin_dist):
    plugin_dist("hub-plugin-good", "hub_plugin_good", GOOD)
    report = check_plugin("hub_plugin_good")
    assert report["strict_load"]["namespaces"] == ["good"]
    assert report["lazy_import"]["forbidden"] == ["tensordict", "torch"]
    assert report["lazy_import"]["import_seconds"] >= 0  # measured, not judged
    assert sorted(report) == sorted(case.id for case in conformance_cases("hub_plugin_good"))
    assert "native-good:Count-v0" in report and "parallel-good:Count-v0" in report


def test_cases_list_the_plugin_checks_then_each_env_check():
    cases = conformance_cases("hub", envs=["Counting"], checks=["strict_load", "seeding"])
    assert [str(case) for case in cases] == ["hub:strict_load", "hub:seeding-hub:Counting"]
    with pytest.raises(ValueError, match="unknown conformance checks"):
        conformance_cases("hub", checks=["speed"])


def _failure(plugin: str, checks: list[str]) -> str:
    with pytest.raises(ConformanceError) as info:
        check_plugin(plugin, checks=checks)
    return str(info.value)


def test_a_backend_imported_at_the_top_is_caught(plugin_dist):
    plugin_dist("hub-plugin-eager", "hub_plugin_eager", "import torch\n" + GOOD)
    message = _failure("hub_plugin_eager", ["lazy_import"])
    assert "[lazy import]" in message and "imported torch" in message
    assert "The lazy-import rule" in message


def test_a_make_returning_no_env_is_caught(plugin_dist):
    source = GOOD.replace("return CountingEnv(", "return object() or CountingEnv(")
    plugin_dist("hub-plugin-object", "hub_plugin_object", source)
    message = _failure("hub_plugin_object", ["specs"])
    assert "good:Count-v0 [specs]" in message and "object" in message


UNSEEDED = """
import hub

def make(env_id, **kwargs):
    from hub.envs.builtin import PendulumEnv

    class UnseededPendulum(PendulumEnv):
        def _set_seed(self, seed):
            pass  # forgets the seed: each env starts from torch's global generator

    return UnseededPendulum(**kwargs)

@hub.hookimpl
def hub_namespaces():
    return [hub.Namespace("unseeded", make=make, list_envs=lambda: ["Pendulum-v0"])]
"""


def test_an_unseeded_env_is_caught(plugin_dist):
    plugin_dist("hub-plugin-unseeded", "hub_plugin_unseeded", UNSEEDED)
    message = _failure("hub_plugin_unseeded", ["seeding"])
    assert "[seeding]" in message and "set_seed(seed) must seed" in message


def test_specs_that_lie_are_caught(plugin_dist):
    source = GOOD.replace(
        "return CountingEnv(",
        "env = CountingEnv(",
    ).replace(
        "max_steps=5, **kwargs)",
        "max_steps=5, **kwargs)\n    import torch\n"
        "    env.reward_spec = hub.specs.Unbounded(env.batch_size + (1,), dtype=torch.int64)\n"
        "    return env",
    )
    plugin_dist("hub-plugin-liar", "hub_plugin_liar", source)
    message = _failure("hub_plugin_liar", ["specs"])
    assert "[specs]: check_env_specs failed" in message and "reward" in message


def test_a_dispatched_function_without_implementation_is_caught(plugin_dist):
    source = GOOD + (
        '\n@hub.implement_for("packaging", None, "1.0")\ndef old_packaging_only():\n    return 1\n'
    )
    plugin_dist("hub-plugin-stale", "hub_plugin_stale", source)
    message = _failure("hub_plugin_stale", ["dispatch"])
    assert "[dispatch]" in message and "hub_plugin_stale.plugin.old_packaging_only" in message


def test_a_listing_that_raises_names_the_plugin(plugin_dist):
    source = GOOD.replace('list_envs=lambda: ["Count-v0"]', "list_envs=broken_listing")
    source += "\ndef broken_listing():\n    raise RuntimeError('cannot list')\n"
    plugin_dist("hub-plugin-badlist", "hub_plugin_badlist", source)
    with pytest.raises(ConformanceError, match="hub_plugin_badlist.*cannot list"):
        check_plugin("hub_plugin_badlist", envs=["good:Count-v0"], checks=["strict_load"])


def test_a_plugin_that_fails_to_load_is_reported(plugin_dist):
    plugin_dist(
        "hub-plugin-typo", "hub_plugin_typo", GOOD.replace("hub_namespaces", "hub_namespace")
    )
    with pytest.raises(ConformanceError, match=r"hub_plugin_typo.*\[strict load\]"):
        check_plugin("hub_plugin_typo", envs=[], checks=["strict_load"])


def test_an_unknown_plugin_says_how_to_install_it():
    with pytest.raises(ConformanceError, match="no hub plugin is named 'nope'.*pip install"):
        check_plugin("nope", envs=[])


def test_a_factory_that_cannot_pickle_is_caught():
    with pytest.raises(ConformanceError, match=r"\[pickle\].*does not pickle"):
        check_factory_pickles("hub:Counting", hook=lambda: None)
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(lambda: None)


def test_the_kit_leaves_the_environment_as_it_found_it(monkeypatch):
    import os

    monkeypatch.setenv("HUB_LOAD_PLUGINS", "")
    monkeypatch.delenv("HUB_STRICT_PLUGINS", raising=False)
    check_plugin("hub", envs=["hub:Counting"], checks=["close"])
    assert os.environ["HUB_LOAD_PLUGINS"] == ""
    assert "HUB_STRICT_PLUGINS" not in os.environ
    assert hub.make_env("hub:Counting").batch_size == ()


CLASHING = """
import hub
from hub.envs.builtin import CountingEnv

class ClashingEnv(CountingEnv):
    def _run_step(self, tensordict, keys, fused=False):  # EnvBase's pipeline, not a hook
        return super()._run_step(tensordict, keys, fused)

def make(env_id, **kwargs):
    return ClashingEnv(max_steps=5, **kwargs)

@hub.hookimpl
def hub_namespaces():
    return [hub.Namespace("clash", make=make, list_envs=lambda: ["Count-v0"])]
"""


def test_a_subclass_replacing_an_internal_name_is_caught(plugin_dist):
    plugin_dist("hub-plugin-clash", "hub_plugin_clash", CLASHING)
    message = _failure("hub_plugin_clash", ["names"])
    assert "[names]" in message and "ClashingEnv._run_step" in message
    assert "subclass contract" in message
