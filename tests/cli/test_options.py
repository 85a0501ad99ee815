"""``--kwarg`` parsing and the shared env options."""

from __future__ import annotations

import click
import pytest

from hub.cli.options import make_env_kwargs, parse_kwargs, parse_value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("3", 3),
        ("0.5", 0.5),
        ("True", True),
        ("None", None),
        ("[1, 2]", [1, 2]),
        ("(84, 84)", (84, 84)),
        ("'quoted'", "quoted"),
        ("rgb_array", "rgb_array"),
        ("CartPole-v1", "CartPole-v1"),
        ("", ""),
        ("__import__('os')", "__import__('os')"),  # never evaluated, kept as text
    ],
)
def test_parse_value(text, value):
    assert parse_value(text) == value


def test_parse_kwargs_keeps_text_after_first_equals():
    assert parse_kwargs(["expr=a=b", " g = 9.81 "]) == {"expr": "a=b", "g": 9.81}


@pytest.mark.parametrize("bad", ["novalue", "=3", "not an id=3", "1x=2"])
def test_parse_kwargs_rejects_bad_items(bad):
    with pytest.raises(click.BadParameter, match="key=value"):
        parse_kwargs([bad])


def test_make_env_kwargs_passes_only_given_options():
    assert make_env_kwargs(None, None, None, []) == {}
    assert make_env_kwargs(2, "serial", 7, ["a=1"]) == {
        "a": 1,
        "num_envs": 2,
        "batching": "serial",
        "seed": 7,
    }


def test_bad_kwarg_is_a_usage_error(invoke):
    result = invoke("rollout", "hub:Pendulum", "--kwarg", "oops")
    assert result.exit_code == 2
    assert "key=value" in result.stderr
