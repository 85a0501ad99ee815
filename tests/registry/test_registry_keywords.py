"""A keyword argument the env does not take is a hub error that names it and its close matches,
in every namespace: the built-in plugins check before building, and a third-party plugin's
``TypeError: ... got an unexpected keyword argument`` is turned into the same error."""

from __future__ import annotations

import pytest

import hub
from hub.errors import UnknownKeywordError
from hub.plugins import Namespace
from hub.registry import keywords_of

from .conftest import FakeEnv


def _raised(uri: str, **kwargs) -> UnknownKeywordError:
    with pytest.raises(UnknownKeywordError) as info:
        hub.make_env(uri, **kwargs)
    assert isinstance(info.value, TypeError)  # `except TypeError` keeps working
    return info.value


def test_a_misspelt_keyword_of_a_builtin_env_names_the_right_one():
    err = _raised("hub:Pendulum", fromm_pixels=True)
    assert err.keyword == "fromm_pixels"
    assert err.suggestions[0] == "from_pixels"
    assert str(err).startswith(
        "'hub:Pendulum' takes no keyword argument 'fromm_pixels'; did you mean 'from_pixels'?"
    )


def test_make_envs_own_options_are_among_the_close_matches():
    err = _raised("hub:Counting", sead=3)
    assert err.suggestions == ("seed",)


def test_a_keyword_with_no_close_match_lists_what_the_env_takes():
    err = _raised("hub:Counting", num_envs=2, colour="red")
    assert "It takes: " in str(err)
    assert "max_steps" in err.accepted and "num_envs" in err.accepted


def test_dm_control_refuses_an_unknown_keyword_instead_of_ignoring_it():
    pytest.importorskip("dm_control")
    err = _raised("dm_control:cartpole/balance", bogus_kw=3)
    assert err.keyword == "bogus_kw"
    err = _raised("dm_control:cartpole/balance", from_pixel=True)
    assert err.suggestions[0] == "from_pixels"


def test_dm_control_still_takes_its_own_keywords():
    pytest.importorskip("dm_control")
    env = hub.make_env("dm_control:cartpole/balance", frame_skip=2, task_kwargs={"random": 1})
    assert env.frame_skip == 2
    env.close()


@pytest.mark.parametrize("num_envs", [None, 2])
def test_gymnasium_names_the_keyword_its_env_did_not_take(num_envs):
    pytest.importorskip("gymnasium")
    err = _raised("gymnasium:CartPole-v1", num_envs=num_envs, rendr_mode="rgb_array")
    assert err.suggestions[0] == "render_mode"
    assert isinstance(err.__cause__, TypeError)  # the backend's own error stays attached
    err = _raised("gymnasium:CartPole-v1", max_episode_step=5)
    assert err.suggestions[0] == "max_episode_steps"


def test_envpool_names_the_task_option_it_does_not_have():
    pytest.importorskip("envpool")
    err = _raised("envpool:CartPole-v1", num_thread=2)
    assert err.suggestions[0] == "num_threads"


def test_a_third_party_plugins_type_error_becomes_the_same_error(add_plugin):
    def make(env_id, *, num_envs=None, speed=1.0):  # a plugin that checks nothing
        return FakeEnv(env_id, num_envs=num_envs)

    add_plugin("toy", Namespace("toy", make=make))
    err = _raised("toy:Walk-v0", sped=2.0)
    assert err.suggestions[0] == "speed"
    assert str(err).startswith("'toy:Walk-v0' takes no keyword argument 'sped'")


def test_a_type_error_about_another_name_is_left_alone(add_plugin):
    def make(env_id, **kwargs):
        def inner(a):
            return a

        return inner(b=1)  # the plugin's own bug, not the user's keyword

    add_plugin("buggy", Namespace("buggy", make=make))
    with pytest.raises(TypeError) as info:
        hub.make_env("buggy:Walk-v0", c=2)
    assert not isinstance(info.value, UnknownKeywordError)


def test_keywords_of_follows_kwargs_up_the_classes():
    from hub.envs.builtin import PendulumEnv

    accepted = keywords_of(PendulumEnv)
    assert accepted.complete
    assert {"from_pixels", "g", "device", "checks"} <= accepted.names
    assert not keywords_of(lambda **kwargs: None).complete
